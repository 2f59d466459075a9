"""Calls a type checker must flag: each line marked `# error` (see test_type_checkers.py)."""

import jax
import jax.numpy as jnp

import autograph


@autograph.convert
def scale(x: jax.Array, factor: float) -> jax.Array:
    return x * factor


@autograph.convert(recursive=False)
def count(n: int) -> int:
    return n + 1


scale(jnp.ones(3), "two")  # error
count("three")  # error
autograph.to_graph(scale)(jnp.ones(3))  # error
autograph.convert(scale, asserts="sometimes")  # error
