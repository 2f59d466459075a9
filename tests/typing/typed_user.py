"""A small user file for static type checkers: no error, and the revealed types keep the
converted functions' signatures (checked by tests/typing/test_type_checkers.py, which
runs mypy and pyright on a copy of it outside the checkout, as a user's project)."""

from typing import reveal_type

import jax
import jax.numpy as jnp

import autograph


@autograph.convert
def huber_loss(a: jax.Array, delta: float = 1.0) -> jax.Array:
    if abs(a) <= delta:
        loss = a * a / 2
    else:
        loss = delta * (abs(a) - delta / 2)
    return loss


@autograph.convert(recursive=False, prints="drop")
def steps(n: int) -> int:
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    return count


@autograph.do_not_convert
def helper(x: jax.Array, scale: float) -> jax.Array:
    return x * scale


compiled = autograph.to_graph(huber_loss)
value: jax.Array = compiled(jnp.float32(3.0), delta=2.0)
count: int = steps(27)
with autograph.staged_effects(asserts="checkify"):
    lowered = compiled.lower(jnp.float32(1.0))

reveal_type(huber_loss)
reveal_type(steps)
reveal_type(helper)
reveal_type(compiled)
