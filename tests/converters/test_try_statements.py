# ruff: noqa: B007, B012, B018 - jumps in `finally` and bare `1 / 0` are the subject here
"""``try``/``except``/``finally`` with returns and jumps: Python's result (issue 16.3,
issue 21.3), and an ``except`` that cannot see errors of compiled code refused."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from tests.differential import assert_same_python, check

LOG = []


def return_in_try_with_finally(x):
    if x > 5:
        return 0.0
    try:
        return x + 1
    finally:
        LOG.append("finally")


def return_in_loop_try_finally(x):
    total = x * 0
    for i in range(4):
        try:
            if i == 2:
                return total
            total = total + x
        finally:
            total = total + 1
    return total * 10


def finally_returns_under_a_condition(x):
    y = x * 0
    try:
        y = x + 6
        return y
    finally:
        y = y + 5
        if x > 0:      # the return of the finally overrides the pending one
            return y


def fails(message):
    raise ValueError(message)


def raise_in_returned_call(x):
    try:
        return fails("boom")
    except ValueError:
        pass
    return x


def raise_in_returned_call_after_early_return(x):
    if x > 5:
        return x
    try:
        return fails("boom")
    except ValueError:
        x = x * 2
    return x + 1


def tail_try_after_early_return(x):
    if x > 10:
        return 0.0
    try:
        y = x + 1
        return y
    except ValueError:
        y = 0.0
    return y * 10


def try_else_after_return(x):
    try:
        if x > 0:
            return x
    except ValueError:
        return -1.0
    else:
        x = x * 3
    return x + 100


def finally_overrides_return(x):
    try:
        return x
    finally:
        return x * 2


def finally_return_discards_error(x):
    try:
        fails("discarded")
    finally:
        return x * 3


def finally_break_discards_error(x):
    c = 0
    while c < 2:
        c += 1
        try:
            x = x / 0 if c > 5 else fails("gone")
        finally:
            break
    return c + x


def finally_continue_overrides_break(x):
    c = 0
    while c < 2:
        c += 1
        try:
            break
        finally:
            continue
    return c + x


def finally_break_overrides_return(x):
    for i in range(3):
        try:
            return -1.0
        finally:
            break
    return x + 1


def finally_continue_overrides_return(x):
    total = x
    for i in range(3):
        try:
            if i < 2:
                return -1.0
            total = total + i
        finally:
            total = total + 10
            continue
    return total


def finally_jump_only_sometimes(x, limit):
    c = 0
    while c < 3:
        c += 1
        try:
            if c == 2:
                fails("second")
        finally:
            if c < limit:
                continue
    return c + x


def python_examples():
    """The examples of issue 21.3, with Python values only."""
    out = []
    c = 0
    while c < 2:
        c += 1
        try:
            1 / 0
        finally:
            break
    out.append(c)
    c = 0
    while c < 2:
        c += 1
        try:
            break
        finally:
            continue
    out.append(c)

    def g():
        try:
            1 / 0
        finally:
            return "finally"
    out.append(g())
    return out


SCALAR_CASES = [
    (return_in_loop_try_finally, 2.0),
    (raise_in_returned_call, 2.0),
    (raise_in_returned_call_after_early_return, 2.0),
    (raise_in_returned_call_after_early_return, 8.0),
    (tail_try_after_early_return, 2.0), (tail_try_after_early_return, 12.0),
    (finally_overrides_return, 2.0), (finally_return_discards_error, 2.0),
    (finally_returns_under_a_condition, 2.0), (finally_returns_under_a_condition, -2.0),
    (finally_break_discards_error, 2.0), (finally_continue_overrides_break, 2.0),
    (finally_break_overrides_return, 2.0), (finally_continue_overrides_return, 2.0),
]


@pytest.mark.parametrize("fn, x", SCALAR_CASES)
def test_returns_and_jumps_through_try(fn, x):
    check(fn, x, vmap=[x, -x, 0.5])


def test_try_else_does_not_run_after_a_return_in_its_body():
    f = autograph.convert(try_else_after_return)
    for x in (2.0, -2.0):
        assert_same_python(try_else_after_return(x), f(x))
    # A staged if in a `try` whose `except ValueError` no traced operation can
    # reach (ValueError is raised while tracing, as in Python): it stages.
    check(try_else_after_return, 2.0)
    check(try_else_after_return, -2.0)


def test_finally_runs_once_per_return():
    LOG.clear()
    assert autograph.convert(return_in_try_with_finally)(1.5) == 2.5
    assert LOG == ["finally"]


def test_a_finally_logging_under_a_traced_condition_is_refused_compiled():
    # The `finally` runs only where x <= 5: staged, both branches are traced and the
    # log would grow whatever x is (issue 26.6), so that is refused at its line.
    LOG.clear()
    assert autograph.convert(return_in_try_with_finally)(7.0) == 0.0
    assert LOG == []
    line = return_in_try_with_finally.__code__.co_firstlineno + 6
    with pytest.raises(autograph.ConversionError, match="Python list 'LOG'") as info:
        autograph.to_graph(return_in_try_with_finally)(jnp.float32(1.5))
    assert f"{__file__}:{line}:" in str(info.value)
    assert LOG == []


def test_issue_examples():
    assert python_examples() == [1, 2, "finally"]
    assert autograph.convert(python_examples)() == [1, 2, "finally"]


def test_finally_jump_taken_or_not():
    f = autograph.convert(finally_jump_only_sometimes)
    assert f(1.0, 5) == finally_jump_only_sometimes(1.0, 5) == 4.0   # discarded
    for fn in (finally_jump_only_sometimes, f):
        with pytest.raises(ValueError, match="second"):
            fn(1.0, 2)                                             # raised again
    g = autograph.to_graph(finally_jump_only_sometimes, static_argnums=1)
    assert float(g(jnp.float32(1.0), 5)) == 4.0


# -- an `except` cannot see errors of compiled code ------------------------------------

def checked_sqrt(x):
    if x < 0:
        raise ValueError("negative")
    return jnp.sqrt(x)


def sqrt_or_zero(x):
    try:
        return checked_sqrt(x)
    except ValueError:
        return x * 0.0


def sqrt_or_zero_broad(x):
    try:
        y = checked_sqrt(x)
    except Exception:
        y = x * 0.0
    return y


def test_except_around_a_staged_raise_is_refused_at_the_except():
    assert autograph.convert(sqrt_or_zero)(4.0) == 2.0
    assert autograph.convert(sqrt_or_zero)(-4.0) == -0.0
    line = sqrt_or_zero.__code__.co_firstlineno + 3
    with pytest.raises(autograph.ConversionError, match="cannot see errors") as info:
        autograph.to_graph(sqrt_or_zero)(4.0)
    assert f"{__file__}:{line}" in str(info.value)
    assert "ValueError" in str(info.value) and "negative" in str(info.value)
    # `except Exception` could catch what Python raises on values (x / 0), which
    # traced operations never raise: refused at the `try`, before its body runs.
    line = sqrt_or_zero_broad.__code__.co_firstlineno + 1
    with pytest.raises(autograph.ConversionError, match="computes with 'x'") as info:
        autograph.to_graph(sqrt_or_zero_broad)(4.0)
    assert f"{__file__}:{line}" in str(info.value)


def holds_a_string(x):
    s = "a"
    for _ in range(x):
        s = s + "b"
    return s


def swallows_conversion_errors(x):
    try:
        return holds_a_string(x)
    except Exception:
        return "fallback"


def test_a_conversion_error_is_never_handled_by_user_code():
    assert autograph.convert(swallows_conversion_errors)(2) == "abb"
    # (Refused at the `try` too: `except Exception` around traced `x`.)
    with pytest.raises(autograph.ConversionError, match="'s' holds a str|with 'x'"):
        jax.jit(autograph.convert(swallows_conversion_errors))(2)


def staged_loop_in_try(x):
    try:
        for i in range(3):
            x = x / (x - i)
    except ZeroDivisionError:
        x = -1.0
    return x


def traced_loop_in_try(x, n):
    try:
        for i in range(n):
            x = x / (x - i)
    except ZeroDivisionError:
        x = -1.0
    return x


@pytest.mark.parametrize("fn, args", [(staged_loop_in_try, (2.0,)),
                                      (traced_loop_in_try, (2.0, 3))])
def test_staged_region_in_a_try_is_refused(fn, args):
    # Not unrolled either: traced x / 0 is inf unrolled too, never the ZeroDivisionError
    # the `except` expects (jax.jit of the original silently gives nan here).
    # Refused at the `try`, whose body computes with traced `x`.
    assert autograph.convert(fn)(*args) == -1.0
    with pytest.raises(autograph.ConversionError, match="its body computes with") as info:
        autograph.to_graph(fn)(*args)
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in str(info.value)


def staged_loop_in_try_finally_break(x, n):
    c = 0
    while c < 2:
        c += 1
        try:
            for i in range(n):
                x = x + i
        finally:
            break
    return x


def test_try_added_for_a_finally_jump_is_not_an_except():
    # Only the `finally` of the user's `try` (no `except`): staging stays allowed.
    check(staged_loop_in_try_finally_break, 1.0, 3)


def test_generated_code():
    code = autograph.to_code(sqrt_or_zero)
    assert "except ValueError:\n        ag__.check_caught()\n" in code
    code = autograph.to_code(finally_break_discards_error)
    assert "pending_error = ag__.current_exception()" in code
    # The `break` is the last thing the `finally` does: nothing is raised again.
    assert "raise pending_error" not in code
    assert "raise pending_error" in autograph.to_code(finally_jump_only_sometimes)
    # A `try` whose body calls nothing checks nothing.
    assert "check_caught" not in autograph.to_code(try_else_after_return)


def test_python_values_keep_python_types():
    for fn, x in SCALAR_CASES + [(try_else_after_return, 1.0)]:
        assert_same_python(fn(x), autograph.convert(fn)(x))


def finally_continue_in_a_match_case(a):
    for i in (6, 7):
        m = 3
        match m:
            case 3:
                try:
                    return a
                finally:
                    if i > a:
                        continue
    return 34


def test_a_jump_in_a_finally_inside_a_match_case_overrides_the_return():
    # (found by the 10,000-program fuzz run: the pending return's flag was reset in a
    # `finally` under `if`, not under a `match` case; Python mode returned 1, not 34)
    for a in (-2, 6, 9):
        assert_same_python(finally_continue_in_a_match_case(a),
                           autograph.convert(finally_continue_in_a_match_case)(a))
    check(finally_continue_in_a_match_case, -2.0)


# -- one rule for `try` and traced values (issue 26.3) ----------------------------------

def try_in_a_staged_if(a):
    if a == 0:
        try:
            b = 1.0 / a
        except ZeroDivisionError:
            b = 10.0
    else:
        b = 2.0
    return b


def try_in_a_staged_while(a, n):
    b = 0.0
    while n > 0:
        n -= 1
        try:
            b = b + 1.0 / a
        except ArithmeticError:
            b = b + 10.0
    return b


@pytest.mark.parametrize("fn, args", [(try_in_a_staged_if, (0,)),
                                      (try_in_a_staged_while, (0, 2))])
def test_an_except_for_value_errors_around_traced_values_is_refused_at_the_try(fn, args):
    assert autograph.convert(fn)(*args) == fn(*args)
    line = fn.__code__.co_firstlineno + (2 if fn is try_in_a_staged_if else 4)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match="never raise") as info:
            compiled(*args)
        assert f"{__file__}:{line}:" in str(info.value)


def static_loop_in_try_value_error(x):
    try:
        for i in range(3):
            x = x * 2 + i
    except ValueError:
        pass
    return x


def traced_loop_in_try_value_error(x, n):
    try:
        while n > 0:
            n -= 1
            x = x * 2
    except ValueError:
        x = -1.0
    return x


def reraising_handler(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        raise
    return y


def test_an_except_no_traced_operation_can_reach_stages():
    # Nothing in these bodies raises ValueError when the program runs, and a handler
    # that only raises again computes no fallback: they run as jax.jit runs them.
    check(static_loop_in_try_value_error, 1.0)
    check(traced_loop_in_try_value_error, 1.0, 3)
    check(reraising_handler, 2.0)


def test_the_try_check_is_in_the_generated_code():
    code = autograph.to_code(try_in_a_staged_if)
    assert "ag__.check_try_inputs('a')\n        try:" in code
    assert "check_try_inputs" not in autograph.to_code(static_loop_in_try_value_error)


def refused_in_a_try_whose_finally_returns(x):
    y = 0.0
    try:
        if x > 0:
            try:
                y = 1.0 / x
            except ZeroDivisionError:
                y = 10.0
    finally:
        return y


def test_a_return_in_a_finally_does_not_discard_a_conversion_error():
    # Python discards the exception in flight; autograph's refusal is no such error.
    for x in (0.0, 2.0):
        assert autograph.convert(refused_in_a_try_whose_finally_returns)(x) == (
            refused_in_a_try_whose_finally_returns(x))
    line = refused_in_a_try_whose_finally_returns.__code__.co_firstlineno + 4
    with pytest.raises(autograph.ConversionError, match="never raise") as info:
        autograph.to_graph(refused_in_a_try_whose_finally_returns)(2.0)
    assert f"{__file__}:{line}:" in str(info.value)
