"""runtime/exceptions.py: Python's assert, or a run-time check of a traced condition."""

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

from autograph.runtime import StagedAssertionError, assert_stmt
from autograph.runtime.exceptions import functional_checks, raise_if_failed


def test_python_condition():
    assert assert_stmt(1) is None
    with pytest.raises(AssertionError) as info:
        assert_stmt([], lambda: "empty")
    assert info.value.args == ("empty",) and type(info.value) is AssertionError
    with pytest.raises(ValueError):        # ambiguous truth value, as Python raises
        assert_stmt(jnp.ones(2) > 0)


def test_functional_checks_under_checkify():
    def f(x):
        assert_stmt(x > 0, lambda: "not {positive}")
        return x

    checked = jax.jit(checkify.checkify(f))
    with functional_checks():
        error, _ = checked(jnp.float32(-1.0))
    with pytest.raises(StagedAssertionError, match=r"^not \{positive\} \["):
        raise_if_failed(error)
    with functional_checks():
        error, _ = checked(jnp.float32(1.0))
    raise_if_failed(error)
