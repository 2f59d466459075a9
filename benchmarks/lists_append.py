"""A list grown in a loop, converted, against the same loop written with ``lax.scan``.

    python benchmarks/lists_append.py [n] [width]

Prints the ratio of medians (converted / hand-written, interleaved runs of the
compiled functions) and the jaxpr equation counts of both.
"""

from __future__ import annotations

import statistics
import sys
import time

import jax
import jax.numpy as jnp
from jax import lax

import autograph
from autograph import stack


def f(x, i):
    return jnp.sin(x * i) * x + i


def appended(x, n):
    z = []
    for i in range(n):
        z.append(f(x, i))
    return stack(z)


def by_hand(x, n):
    def step(carry, i):
        return carry, f(x, i)

    _, ys = lax.scan(step, None, jnp.arange(n))
    return ys


def equations(jaxpr) -> int:
    """Equations in a jaxpr, those of its sub-jaxprs included."""
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                if hasattr(sub, "eqns"):
                    total += equations(sub)
                elif hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    total += equations(sub.jaxpr)
    return total


def main(n=1000, width=256, repeats=101):
    x = jnp.linspace(0.0, 1.0, width)
    converted = autograph.to_graph(appended, static_argnums=1)
    hand = jax.jit(by_hand, static_argnums=1)
    assert jnp.allclose(converted(x, n), hand(x, n), atol=1e-5)
    times = {"converted": [], "hand": []}
    pair = [("converted", converted), ("hand", hand)]
    for k in range(repeats):
        for name, fn in pair if k % 2 else pair[::-1]:
            start = time.perf_counter()
            fn(x, n).block_until_ready()
            times[name].append(time.perf_counter() - start)
    medians = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    eq_conv = equations(jax.make_jaxpr(autograph.convert(appended), static_argnums=1)(x, n).jaxpr)
    eq_hand = equations(jax.make_jaxpr(by_hand, static_argnums=1)(x, n).jaxpr)
    print(f"n={n} width={width}: converted {medians['converted'] * 1e6:.1f} us, "
          f"by hand {medians['hand'] * 1e6:.1f} us, ratio "
          f"{medians['converted'] / medians['hand']:.3f} (of minima "
          f"{best['converted'] / best['hand']:.3f})")
    print(f"jaxpr equations: converted {eq_conv}, by hand {eq_hand}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
