"""Conditional expressions: `a if c else b`."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import ConversionError
from tests.differential import check


def absolute(x):
    return x if x >= 0 else -x


def nested(x):
    return 1.0 if x > 1 else (2.0 if x > 0 else 3.0)


def in_loop(n):
    s = 0
    for i in range(n):
        s += i if i % 2 == 0 else -i
    return s


def lazy_branch(xs, i):
    return xs[i] if i < 3 else 0.0


def mixed_shapes(x):
    return jnp.zeros(2) if x > 0 else jnp.zeros(3)


@pytest.mark.parametrize("x", [2.0, -2.0, 0.0])
def test_absolute(x):
    check(absolute, x, vmap=[2.0, -2.0, 0.0])


@pytest.mark.parametrize("x", [2.0, 0.5, -1.0])
def test_nested(x):
    check(nested, x, vmap=[2.0, 0.5, -1.0])


def test_in_traced_loop():
    check(in_loop, 7)


def test_only_the_chosen_branch_runs_for_python_values():
    assert autograph.convert(lazy_branch)([1.0, 2.0], 5) == 0.0


def test_generated_code():
    code = autograph.to_code(absolute)
    assert "return ag__.if_exp(x >= 0, lambda: x, lambda: -x)" in code


def test_staged_values_with_different_shapes():
    with pytest.raises(ConversionError, match="float32\\[2\\].*float32\\[3\\]"):
        jax.jit(autograph.convert(mixed_shapes))(1.0)
