"""A bounded ``while`` costs the iterations it takes, not its bound.

The same loop, ``TRIPS`` iterations of a small vector update stopped by a traced
``n``, under ``set_loop_options(maximum_iterations=bound)`` for bounds 10x, 1,000x
and 100,000x the trip count, three ways (each a row of the suite):

- ``bounded_while_fwd_{10,1000,100000}x``: evaluated, against a hand-written
  ``lax.while_loop`` (target: at most 1.5x at every bound);
- ``bounded_while_grad_..x``: ``jax.grad``, against ``grad`` of a hand-written
  ``lax.scan`` of exactly ``TRIPS`` steps (target: at most 5x);
- ``bounded_while_grad_ckpt_..x``: the same with ``checkpoint=True``, against the
  exact ``scan`` of a ``jax.checkpoint``-ed step.

The first-call table gives each compiled implementation's temporary memory
(XLA's compiled memory analysis, exact and noise-free): that of the reverse pass
with and without ``checkpoint=True`` stays flat as the bound grows.

    python -m benchmarks.bounded_loops     # just these rows: time and first-call tables
    autograph bench --only bounded_while_grad_1000x ...
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph

from .workloads import AOT_PREFIX, AUTOGRAPH, EAGER, HAND_LAX, Workload, fresh

TRIPS = 100          # iterations the loop takes (tiny: TINY_TRIPS)
TINY_TRIPS = 5
WIDTH = 1000         # elements of the loop state (tiny: 8)
FACTORS = (10, 1000, 100_000)   # bounds, as multiples of the trip count


def bounded_iterate(bound: int, checkpoint: bool = False):
    """A user's loop: ``n`` (traced) damped updates of ``x``, at most ``bound``."""

    def iterate(x, n):
        i = 0
        while i < n:
            autograph.set_loop_options(maximum_iterations=bound, checkpoint=checkpoint)
            h = jnp.tanh(x)
            x = x + 0.1 * h * jnp.cos(x)
            i += 1
        return x

    return iterate


def _update(x):
    h = jnp.tanh(x)
    return x + 0.1 * h * jnp.cos(x)


def iterate_while_lax(x, n):
    """The loop by hand: ``lax.while_loop`` on the traced ``n``."""
    _, x = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, _update(c[1])), (0, x))
    return x


def iterate_scan_lax(checkpoint: bool = False):
    """The loop by hand for reverse mode: a ``lax.scan`` of exactly the trip count,
    known in advance (which a ``while`` user does not know): ``TRIPS``, or
    ``TINY_TRIPS`` for the tests' tiny inputs."""
    step = jax.checkpoint(_update) if checkpoint else _update

    def iterate(x, n):
        del n
        trips = TRIPS if x.shape[0] == WIDTH else TINY_TRIPS
        x, _ = lax.scan(lambda x, _: (step(x), None), x, None, length=trips)
        return x

    return iterate


def _loss(f):
    def loss(x, n):
        return jnp.sum(f(x, n))
    return loss


def _args(tiny: bool) -> tuple:
    width, trips = (8, TINY_TRIPS) if tiny else (WIDTH, TRIPS)
    x = jnp.asarray(np.linspace(-2.0, 2.0, width), jnp.float32)
    return x, jnp.int32(trips)


def _forward(factor: int) -> Workload:
    bound = factor * TRIPS
    original = bounded_iterate(bound)
    return Workload(
        name=f"bounded_while_fwd_{factor}x",
        description=f"while loop, {TRIPS} iterations, maximum_iterations={bound:,}",
        source=original,
        make_args=_args,
        builders={
            EAGER: lambda: original,
            AUTOGRAPH: lambda: autograph.to_graph(fresh(original)),
            AOT_PREFIX + AUTOGRAPH: lambda: jax.jit(autograph.convert(fresh(original))),
            HAND_LAX: lambda: jax.jit(fresh(iterate_while_lax)),
        },
    )


def _reverse(factor: int, checkpoint: bool) -> Workload:
    bound = factor * TRIPS
    original = bounded_iterate(bound, checkpoint)
    tag = "grad_ckpt" if checkpoint else "grad"
    return Workload(
        name=f"bounded_while_{tag}_{factor}x",
        description=(f"jax.grad of the while loop, {TRIPS} iterations, "
                     f"maximum_iterations={bound:,}" + (", checkpoint=True" if checkpoint
                                                        else "")),
        source=original,
        make_args=_args,
        builders={
            EAGER: lambda: jax.grad(_loss(original)),
            AUTOGRAPH: lambda: jax.jit(jax.grad(_loss(autograph.convert(fresh(original))))),
            HAND_LAX: lambda: jax.jit(jax.grad(_loss(iterate_scan_lax(checkpoint)))),
        },
        tolerance=1e-4,
    )


def workloads() -> list[Workload]:
    """The suite's rows: forward, reverse, reverse with ``checkpoint=True``, per bound."""
    rows = [_forward(f) for f in FACTORS]
    rows += [_reverse(f, checkpoint=False) for f in FACTORS]
    rows += [_reverse(f, checkpoint=True) for f in FACTORS]
    return rows


def main() -> None:
    """Run these rows alone (full timing plan) and print the suite's two tables."""
    from .report import first_call_table, per_call_table
    from .suite import SuiteConfig, run_suite

    config = SuiteConfig.full_preset(only=[w.name for w in workloads()], scaling=False)
    results = run_suite(config, progress=print)
    print(per_call_table(results))
    print()
    print(first_call_table(results))


if __name__ == "__main__":
    main()
