"""Input checks: ``if bad: raise E(msg)`` runs as Python for Python values, and is a
run-time check raising the user's ``E`` with Python's message when traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import autograph
from autograph.errors import ConversionError
from tests.differential import check

LOG = []


class OutOfRange(Exception):
    """A user's exception type."""


def sqrt_checked(x):
    if x < 0:
        raise ValueError(f"x must be non-negative, got {x:.2f}")
    return jnp.sqrt(x)


def speed(distance, time):
    if time <= 0:
        raise ValueError("time must be positive")
    elif distance < 0:
        raise OutOfRange("distance must be non-negative")
    return distance / time


def sign_or_raise(x):
    if x > 0:
        s = 1.0
    elif x < 0:
        s = -1.0
    else:
        raise ZeroDivisionError("x is zero")
    return s * x


def with_message_statements(x):
    if x > 100:
        LOG.append(x)
        msg = "too large: " + str(x)
        raise OutOfRange(msg)
    return x + 1


def in_loop(x, n):
    for i in range(n):
        if x < 0:
            raise ValueError(f"negative at step {i}")
        x = x - 1.5
    return x


def caught(x):
    try:
        if x < 0:
            raise ValueError("negative")
        y = x
    except ValueError:
        y = 0.0
    return y


def both_raise(x):
    if x < 0:
        raise ValueError("negative")
    else:
        raise OutOfRange("non-negative")


def bare_class(x):
    if x == 3:
        raise OutOfRange
    return x


def vector_check(x):
    if x < 0:
        raise ValueError("negative entries")
    return x


def raise_from(x):
    if x < 0:
        raise ValueError("bad") from KeyError("cause")
    return x


def line_of(fn, k):
    return f"{__file__}:{fn.__code__.co_firstlineno + k}"


def python_outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as error:  # noqa: BLE001
        return (type(error), str(error))


@pytest.mark.parametrize("fn, args", [
    (sqrt_checked, (4.0,)), (sqrt_checked, (-1.0,)),
    (speed, (3.0, 2.0)), (speed, (3.0, 0.0)), (speed, (-3.0, 1.0)),
    (sign_or_raise, (2.0,)), (sign_or_raise, (-2.0,)), (sign_or_raise, (0.0,)),
    (with_message_statements, (150,)), (bare_class, (3,)), (raise_from, (-1,)),
])
def test_python_values_run_as_written(fn, args):
    LOG.clear()
    expected = python_outcome(fn, *args)
    log = list(LOG)
    LOG.clear()
    assert python_outcome(autograph.convert(fn), *args) == expected
    assert LOG == log


@pytest.mark.parametrize("fn, args", [
    (sqrt_checked, (4.0,)), (speed, (3.0, 2.0)), (sign_or_raise, (2.0,)),
    (sign_or_raise, (-2.0,)), (with_message_statements, (5.0,)), (in_loop, (10.0, 3)),
    (bare_class, (2,)), (raise_from, (1,)),
])
def test_passing_checks_compile_to_the_same_value(fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn, args", [
    (sqrt_checked, (-1.0,)), (speed, (3.0, 0.0)), (speed, (-3.0, 1.0)),
    (sign_or_raise, (0.0,)), (with_message_statements, (150.0,)), (in_loop, (2.0, 3)),
    (bare_class, (3,)),
])
def test_failing_checks_raise_the_users_exception_from_to_graph(fn, args):
    LOG.clear()
    expected_type, expected_text = python_outcome(fn, *args)
    LOG.clear()
    traced = [jnp.asarray(a) for a in args]
    with pytest.raises(expected_type) as raised:
        autograph.to_graph(fn)(*traced)
    assert type(raised.value) is expected_type
    assert str(raised.value) == expected_text
    note = "\n".join(raised.value.__notes__)
    assert __file__ in note and "staged check" in note
    # statements before the raise ran once, when the check failed
    assert LOG == ([150.0] if fn is with_message_statements else [])


def test_the_traceback_shows_the_users_raise_line():
    with pytest.raises(ValueError) as raised:
        autograph.to_graph(sqrt_checked)(jnp.float32(-1.0))
    lines = [(tb.tb_frame.f_code.co_filename, tb.tb_lineno) for tb in _walk(raised.tb)]
    assert (__file__, sqrt_checked.__code__.co_firstlineno + 2) in lines


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_a_raise_from_keeps_its_cause():
    with pytest.raises(ValueError) as raised:
        autograph.to_graph(raise_from)(jnp.int32(-1))
    assert isinstance(raised.value.__cause__, KeyError)


def test_inside_the_users_jit_the_error_names_exception_and_line():
    with pytest.raises(jax.errors.JaxRuntimeError) as raised:
        jax.jit(autograph.convert(sqrt_checked))(jnp.float32(-1.5))
        jax.effects_barrier()
    text = str(raised.value)
    assert "ValueError: x must be non-negative, got -1.50" in text
    assert f'{__file__}", line {sqrt_checked.__code__.co_firstlineno + 2}' in text


def test_under_checkify_the_check_is_a_checkify_check():
    err, out = checkify.checkify(autograph.convert(speed))(jnp.float32(3.0), jnp.float32(0.0))
    assert "ValueError: time must be positive" in err.get()
    assert line_of(speed, 1) in err.get()
    err, out = checkify.checkify(autograph.convert(sqrt_checked))(jnp.float32(-2.0))
    assert "ValueError: x must be non-negative, got -2.00" in err.get()
    err, out = checkify.checkify(autograph.convert(sqrt_checked))(jnp.float32(4.0))
    assert err.get() is None and float(out) == 2.0
    # a branch that does more than raise: the message shows the raise statement
    err, _ = checkify.checkify(autograph.convert(with_message_statements))(jnp.float32(200.0))
    assert "raise OutOfRange(msg)" in err.get()


def test_the_assert_switches_apply():
    dropped = autograph.to_graph(autograph.convert(sqrt_checked, asserts="drop"))
    assert np.isnan(float(dropped(jnp.float32(-1.0))))
    with autograph.staged_effects(asserts="drop"):
        out = jax.jit(autograph.convert(speed))(jnp.float32(1.0), jnp.float32(0.0))
    assert np.isinf(float(out))
    # drop leaves Python values checked
    with pytest.raises(ValueError):
        autograph.convert(sqrt_checked, asserts="drop")(-1.0)


def test_batched_checks_pass_and_fail_per_example():
    batched = jax.vmap(autograph.convert(sign_or_raise))
    np.testing.assert_allclose(batched(jnp.array([2.0, -3.0])), [2.0, 3.0])
    with pytest.raises(ZeroDivisionError, match="x is zero"):
        autograph.to_graph(batched)(jnp.array([2.0, 0.0]))
    with pytest.raises(jax.errors.JaxRuntimeError, match="ZeroDivisionError: x is zero"):
        jax.jit(batched)(jnp.array([2.0, 0.0])).block_until_ready()


def test_a_vector_condition_is_refused_at_the_users_line():
    with pytest.raises(ConversionError) as raised:
        autograph.to_graph(vector_check)(jnp.array([1.0, -1.0]))
    assert raised.value.lineno == vector_check.__code__.co_firstlineno + 1
    assert "jnp.any" in str(raised.value)


def caught_elsewhere(x):
    try:
        if x < 0:
            raise ValueError("negative")
        y = x
    except KeyError:
        y = 0.0
    return y


def test_an_if_with_two_raising_branches_is_left_as_written():
    assert "raise_if" not in autograph.to_code(both_raise)


def test_a_check_inside_a_try_whose_except_catches_it_is_refused_at_the_except():
    """Python's ``except ValueError`` catches the check's error; a run-time check
    would raise it from the compiled call, past the ``except``: refused."""
    assert autograph.convert(caught)(-1.0) == 0.0 == caught(-1.0)
    for compiled in (autograph.to_graph(caught), jax.jit(autograph.convert(caught))):
        with pytest.raises(ConversionError, match="cannot see errors") as raised:
            compiled(jnp.float32(2.0))
        assert raised.value.lineno == caught.__code__.co_firstlineno + 5


def test_a_check_inside_a_try_whose_except_cannot_catch_it_is_a_run_time_check():
    """``except KeyError`` cannot catch the ``ValueError``: the check is staged as
    anywhere else (it was traced as a branch that raised for every input)."""
    assert "raise_if" in autograph.to_code(caught_elsewhere)
    assert autograph.convert(caught_elsewhere)(4.0) == caught_elsewhere(4.0) == 4.0
    for compiled in (autograph.to_graph(caught_elsewhere),
                     jax.jit(autograph.convert(caught_elsewhere))):
        assert float(compiled(jnp.float32(4.0))) == 4.0
    with pytest.raises(ValueError, match="negative"):
        caught_elsewhere(-1.0)
    with pytest.raises(ValueError, match="negative"):
        autograph.to_graph(caught_elsewhere)(jnp.float32(-1.0))


def test_generated_code_keeps_the_if():
    code = autograph.to_code(sqrt_checked)
    assert "if ag__.raise_if(x < 0, raise_error, lambda: (x,)):" in code
    assert "if_stmt" not in code


def guarded_outer(x):
    try:
        return float(autograph.to_graph(sqrt_checked)(x))
    except ValueError as error:
        return str(error)


def caller_with_except(x):
    try:
        y = sqrt_checked(x)
    except ValueError:
        y = x * 0.0
    return y


def test_an_except_around_the_compiled_call_catches_the_users_exception():
    out = autograph.convert(guarded_outer)(jnp.float32(-1.0))
    assert out == "x must be non-negative, got -1.00"


def test_an_except_in_a_traced_caller_is_refused_not_silently_skipped():
    with pytest.raises(ConversionError, match="cannot see errors"):
        autograph.to_graph(caller_with_except)(jnp.float32(4.0))


def two_checks(a, b):
    if a * b > 4:
        raise ArithmeticError(f"{a} * {b} is too large")
    if a < 2:
        raise KeyError(b)
    return a + b


@pytest.mark.parametrize("args", [(-1, -8), (1, 3), (3, 1)])
def test_the_first_failing_check_is_the_one_raised_with_pythons_text(args):
    expected_type, expected_text = python_outcome(two_checks, *args)
    if expected_type == "value":
        check(two_checks, *args)
        return
    with pytest.raises(expected_type) as raised:
        autograph.to_graph(two_checks)(*[jnp.int32(v) for v in args])
    assert str(raised.value) == expected_text    # KeyError(-8) shows -8, as in Python


def caller_with_except_over_a_dict(params):
    try:
        y = sqrt_checked(params["x"])
    except ValueError:
        y = 0.0
    return y


def test_an_except_in_a_caller_holding_tracers_in_a_dict_is_refused_too():
    with pytest.raises(ConversionError, match="cannot see errors"):
        autograph.to_graph(caller_with_except_over_a_dict)({"x": jnp.float32(4.0)})


def checked_under_a_finally(b):
    x = 1
    try:
        sv = -2
        if b < -8:
            if sv < 0:   # decided in Python inside the staged branch
                raise ValueError("below the range")
            x = x + 1
    finally:
        x += 1       # a finally alone catches nothing: the raise is a staged check
    return x


def test_a_raise_under_a_finally_alone_is_a_staged_check():
    # It was raised while tracing, for every input (found by the program fuzz, seed 15).
    run = autograph.to_graph(checked_under_a_finally)
    assert int(run(jnp.int32(0))) == checked_under_a_finally(0) == 2
    assert int(jax.jit(autograph.convert(checked_under_a_finally))(jnp.int32(0))) == 2
    with pytest.raises(ValueError, match="below the range"):
        checked_under_a_finally(-9)
    with pytest.raises(ValueError, match="below the range"):
        run(jnp.int32(-9))


def counted_then_raised(n, k):
    t = 0
    for i in range(n):
        t = t + i
        if k == 2:
            t += 1     # reads t: the raising function is given it
            raise KeyError(f"k is {k}, t was {t}")
    return t


@pytest.mark.parametrize("n, k", [(3, 2), (3, 0), (0, 2)])
def test_a_raising_branch_that_steps_a_variable_is_given_its_value(n, k):
    # replay fuzz seed 11: `t += 1` before the raise was read as a store only, so the
    # check's raising function did not get `t`, and the failed check raised
    # UnboundLocalError instead of the user's KeyError
    expected_type, expected_text = python_outcome(counted_then_raised, n, k)
    if expected_type == "value":
        check(counted_then_raised, n, k)
        return
    for run in (autograph.to_graph(counted_then_raised),
                autograph.convert(counted_then_raised)):
        with pytest.raises(expected_type) as raised:
            run(jnp.int32(n), k)
        assert str(raised.value) == expected_text
    with pytest.raises(Exception, match=expected_text):   # JAX's error, carrying ours
        jax.jit(autograph.convert(counted_then_raised))(jnp.int32(n), k)
