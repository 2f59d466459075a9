"""autograph/runtime/checks.py: Python's assert, or a run-time check of a traced condition."""

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

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
