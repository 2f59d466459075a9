"""autograph/runtime/checks.py: Python's assert, or a run-time check of a traced condition."""

import contextlib

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

import autograph
from autograph.runtime import assert_stmt
from autograph.runtime.effects import using


def test_python_condition():
    assert assert_stmt(1) is None
    with pytest.raises(AssertionError) as info:
        assert_stmt([], lambda: "empty")
    assert info.value.args == ("empty",) and type(info.value) is AssertionError
    with pytest.raises(ValueError):        # ambiguous truth value, as Python raises
        assert_stmt(jnp.ones(2) > 0)


def test_checkify_check_under_checkify():
    def f(x):
        assert_stmt(x > 0, lambda: "not {positive}")
        return x

    checked = jax.jit(checkify.checkify(f))
    error, _ = checked(jnp.float32(-1.0))
    assert error.get().startswith("not {positive} [")
    error, _ = checked(jnp.float32(1.0))
    assert error.get() is None


def test_modes():
    def fresh():     # a new function each time: jax.jit caches traces per function
        def f(x):
            assert_stmt(x > 0, lambda: "positive")
            return x
        return f

    with using(asserts="drop"):
        assert float(jax.jit(fresh())(jnp.float32(-1.0))) == -1.0
    with using(asserts="checkify"), pytest.raises(ValueError, match="functionalized"):
        jax.jit(fresh())(jnp.float32(-1.0))
    with using(asserts="callback"), pytest.raises(Exception, match="positive"):
        checkify.checkify(fresh())(jnp.float32(-1.0))
        jax.effects_barrier()
    with pytest.raises(ValueError, match="asserts='sometimes'"), using(asserts="sometimes"):
        pass


def test_failed_staged_assert_is_not_logged_by_jax(caplog):
    """The failure reaches the caller; JAX's "callback failed" log entry (a second
    copy with runtime frames, on stderr) is dropped for it, and for it only."""
    def f(x):
        assert_stmt(x > 0, lambda: "positive")
        return x

    with pytest.raises(Exception, match="StagedAssertionError: positive"):
        jax.block_until_ready(jax.jit(f)(jnp.float32(-1.0)))
    assert "callback failed" not in caplog.text

    def other(x):
        raise ValueError("not an assert")

    with pytest.raises(Exception, match="not an assert"):
        jax.block_until_ready(jax.jit(lambda x: jax.debug.callback(other, x) or x)(1.0))
    assert "callback failed" in caplog.text


# A failure that a Python value decides inside a staged branch or loop body is
# Python's only where the program gets there: a check that fails when reached.

def scale_if_positive(x, n):
    if x > 0:
        if n < 5:
            raise ValueError("n too small")
        y = x * n
    else:
        y = x
    return y


def scale_if_positive_asserted(x, n):
    if x > 0:
        assert n > 5, "n too small"
        y = x * n
    else:
        y = x
    return y


def halve_while_large(x, n):
    while x > 10:
        assert n != 0
        if n < 0:
            raise ValueError("negative n")
        x = x / n
    return x


def test_python_decided_raise_in_an_untaken_branch_is_not_raised():
    fn = autograph.to_graph(scale_if_positive, static_argnums=1)
    assert float(fn(jnp.float32(-1.0), 2)) == -1.0
    with pytest.raises(ValueError, match="n too small"):
        fn(jnp.float32(1.0), 2)
    assert float(fn(jnp.float32(1.0), 6)) == 6.0


def test_python_decided_assert_in_an_untaken_branch_is_not_raised():
    fn = autograph.to_graph(scale_if_positive_asserted, static_argnums=1)
    assert float(fn(jnp.float32(-1.0), 2)) == -1.0
    with pytest.raises(AssertionError, match="n too small"):
        fn(jnp.float32(1.0), 2)
    with pytest.raises(Exception, match="n too small"):   # under the user's jit
        jax.block_until_ready(jax.jit(autograph.convert(scale_if_positive_asserted),
                                      static_argnums=1)(jnp.float32(1.0), 2))


def test_python_decided_failures_in_a_loop_that_does_not_run():
    for n in (0, -2):
        fn = autograph.to_graph(halve_while_large, static_argnums=1)
        assert float(fn(jnp.float32(3.0), n)) == 3.0
    with pytest.raises(AssertionError):
        autograph.to_graph(halve_while_large, static_argnums=1)(jnp.float32(30.0), 0)
    with pytest.raises(ValueError, match="negative n"):
        autograph.to_graph(halve_while_large, static_argnums=1)(jnp.float32(30.0), -2)
    assert float(autograph.to_graph(halve_while_large, static_argnums=1)(
        jnp.float32(30.0), 2)) == 7.5


def first_of_bounded(a, b):
    # fuzz seed 172: the bounded outer loop carries a float, so its body is traced
    # again to differentiate it; that replay raised the inner loop's decided raise
    # while tracing, for every input
    g = 0.5
    w = 0
    while w < a:
        autograph.set_loop_options(maximum_iterations=20)
        w += 1
        k = -2
        j = b
        while j < -8:
            j += 1
            if k < 0:
                raise ValueError("reached")
        return g
    g = g * 2
    return g


@pytest.mark.parametrize("a, b", [(0, 8), (1, 5), (0, -10), (1, -10)])
def test_python_decided_raise_in_a_replayed_loop_body_fails_only_where_reached(a, b):
    fn = autograph.to_graph(first_of_bounded)
    if a > 0 and b < -8:
        with pytest.raises(ValueError, match="reached"):
            first_of_bounded(a, b)
        with pytest.raises(ValueError, match="reached"):
            fn(jnp.int32(a), jnp.int32(b))
    else:
        assert float(fn(jnp.int32(a), jnp.int32(b))) == first_of_bounded(a, b)


def test_python_decided_failure_under_vmap_fails_only_where_reached():
    fn = jax.vmap(autograph.convert(scale_if_positive_asserted), in_axes=(0, None))
    out = jax.block_until_ready(fn(jnp.array([-1.0, -2.0]), 2))
    assert out.tolist() == [-1.0, -2.0]
    with pytest.raises(Exception, match="n too small"):
        jax.block_until_ready(fn(jnp.array([-1.0, 2.0]), 2))


def assert_in_a_try_whose_finally_returns(n):
    y = -8
    try:
        assert n <= 5, "big"
        y = 91
    finally:
        return y   # noqa: B012 - discards the AssertionError in Python


def test_a_staged_check_in_a_try_whose_finally_jumps_is_refused():
    # Python's `finally` discards the AssertionError; a compiled check's error is
    # raised from the call: refused at the assert.
    for n in (3, 7):
        assert autograph.convert(assert_in_a_try_whose_finally_returns)(n) == (
            assert_in_a_try_whose_finally_returns(n))
    line = assert_in_a_try_whose_finally_returns.__code__.co_firstlineno + 3
    with pytest.raises(autograph.ConversionError, match="the `finally` of a `try`") as info:
        autograph.to_graph(assert_in_a_try_whose_finally_returns)(jnp.int32(3))
    assert f"{__file__}:{line}" in str(info.value)


# -- where a traced check stands: by the lines the conversion recorded -----------------

def positive_refused(x):
    if x > 0:
        raise ValueError("positive")
    return x


def check_in_a_with_in_a_try(x):
    try:
        with contextlib.nullcontext():
            y = positive_refused(x)
    except ValueError:
        y = x * 0.0
    return y


def check_in_an_except_in_a_try(x):
    try:
        try:
            y = int("x")
        except ValueError:
            y = positive_refused(x)
    except ValueError:
        y = x * 0.0
    return y


def check_in_a_function_defined_in_a_try(x):
    try:
        def inner(z):
            return positive_refused(z)
    except ValueError:
        pass
    return inner(x)


@pytest.mark.parametrize("fn, k", [(check_in_a_with_in_a_try, 4),
                                   (check_in_an_except_in_a_try, 6)])
def test_a_check_the_outer_except_would_catch_is_refused_there(fn, k):
    # The `with`, or the inner `except`, does not hide the outer `try` (the exception
    # table's innermost entry did: the compiled call raised where Python gives 0.0).
    assert fn(1.0) == 0.0 and fn(-1.0) == -1.0
    with pytest.raises(autograph.ConversionError, match="cannot see errors") as info:
        autograph.to_graph(fn)(jnp.float32(1.0))
    assert f"{__file__}:{fn.__code__.co_firstlineno + k}" in str(info.value)


def test_a_function_defined_in_a_try_is_not_checked_under_it():
    fn = autograph.to_graph(check_in_a_function_defined_in_a_try)
    assert float(fn(jnp.float32(-1.0))) == -1.0
    with pytest.raises(ValueError, match="positive"):
        fn(jnp.float32(1.0))
