"""The benchmark workloads: inputs and the implementations compared on them.

Every workload has up to four implementations, each built fresh by a
zero-argument builder (so that trace caches never carry over between
measurements):

- ``eager``: the original, run op by op as a user would without compiling;
- ``autograph``: ``autograph.to_graph`` of that same source;
- ``hand_lax``: the same computation written by hand with ``jax.lax``, jitted;
- ``unrolled``: ``jax.jit`` of the original, its Python loops unrolled at trace
  time (only where the original traces at all).

Batched workloads (``*_vmap``, the 10,000-vector huber loss) map a scalar
function over many inputs: there the compiled implementations use
``jax.vmap`` and the eager one loops in Python over plain Python scalars
(looping op by op over JAX scalars would take seconds and measure nothing).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

import autograph

from . import programs as p

EAGER, AUTOGRAPH, HAND_LAX, UNROLLED = "eager", "autograph", "hand_lax", "unrolled"
KINDS = (EAGER, AUTOGRAPH, HAND_LAX, UNROLLED)
COMPILED_KINDS = (AUTOGRAPH, HAND_LAX, UNROLLED)
AOT_PREFIX = "aot:"  # builders under "aot:KIND" go to Workload.aot_builders


@dataclass(frozen=True)
class Workload:
    """One benchmarked computation, its inputs and its implementations.

    ``make_args(tiny)`` returns the positional arguments (tiny ones for the
    tests); ``builders`` maps an implementation kind to a zero-argument
    function returning a fresh callable that takes those arguments.
    ``aot_builders`` give, for a kind whose timed callable is not a ``jax.jit``
    object (``autograph.to_graph`` wraps its jit), the equivalent fresh jit
    object whose AOT stages (trace, lower, compile) are measured instead.
    ``source`` is the user function autograph converts (timed for
    conversion). ``unroll_cost`` estimates what ``jax.jit`` of the original
    costs to compile at full size, in loop bodies unrolled (weighted where XLA's
    compile time grows faster than the body count), so long unrolls can be
    skipped under a cap. ``slow_eager`` marks an eager run that takes tens of
    seconds per call (skipped by ``--quick``).
    """

    name: str
    description: str
    source: Callable
    make_args: Callable[[bool], tuple]
    builders: dict[str, Callable[[], Callable]]
    unroll_cost: int = 0
    slow_eager: bool = False
    aot_builders: dict[str, Callable[[], Callable]] = field(default_factory=dict)

    def __post_init__(self):
        # Builders keyed "aot:KIND" (from _compiled) belong in aot_builders.
        aot = {k[len(AOT_PREFIX):]: b for k, b in self.builders.items()
               if k.startswith(AOT_PREFIX)}
        if aot:
            object.__setattr__(self, "builders", {k: b for k, b in self.builders.items()
                                                  if not k.startswith(AOT_PREFIX)})
            object.__setattr__(self, "aot_builders", {**aot, **self.aot_builders})
    tolerance: float = 1e-5
    notes: dict[str, str] = field(default_factory=dict)


def fresh(f: Callable) -> Callable:
    """A new function object sharing ``f``'s code, so JAX's trace caches miss."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    g.__dict__.update(f.__dict__)
    return g


def _compiled(original: Callable, hand: Callable, *, unroll: bool, vmap: bool = False,
              **jit_kwargs) -> dict[str, Callable[[], Callable]]:
    """Builders for the compiled implementations of ``original``."""
    if vmap:
        builders = {
            AUTOGRAPH: lambda: jax.jit(jax.vmap(autograph.convert(fresh(original))), **jit_kwargs),
            HAND_LAX: lambda: jax.jit(jax.vmap(fresh(hand)), **jit_kwargs),
        }
    else:
        builders = {
            AUTOGRAPH: lambda: autograph.to_graph(fresh(original), **jit_kwargs),
            HAND_LAX: lambda: jax.jit(fresh(hand), **jit_kwargs),
        }
    builders[AOT_PREFIX + AUTOGRAPH] = (
        lambda: jax.jit(jax.vmap(autograph.convert(fresh(original))), **jit_kwargs) if vmap
        else jax.jit(autograph.convert(fresh(original)), **jit_kwargs))
    if unroll:
        builders[UNROLLED] = lambda: jax.jit(fresh(original), **jit_kwargs)
    return builders


def _eager(f: Callable) -> dict[str, Callable[[], Callable]]:
    return {EAGER: lambda: f}


def _eager_each(f: Callable) -> dict[str, Callable[[], Callable]]:
    """Eager builder that maps ``f`` over a vector with a Python loop."""
    def each(xs):
        return np.array([f(x) for x in np.asarray(xs).tolist()])
    each.__name__ = f"{f.__name__}_each"
    return {EAGER: lambda: each}


def _rnn_args(tiny: bool, with_targets: bool) -> tuple:
    """RNN parameters and inputs, drawn with NumPy (eager jax.random would compile)."""
    steps, batch, features, hidden = (3, 2, 3, 4) if tiny else (100, 32, 16, 64)
    rng = np.random.default_rng(1)

    def normal(*shape, scale=1.0):
        return jnp.asarray(rng.normal(scale=scale, size=shape), jnp.float32)

    params = {
        "w_xh": normal(features, hidden, scale=features ** -0.5),
        "w_hh": normal(hidden, hidden, scale=hidden ** -0.5),
        "b": jnp.zeros(hidden, jnp.float32),
        "w_out": normal(hidden, 1, scale=hidden ** -0.5),
    }
    xs = normal(steps, batch, features)
    if not with_targets:
        return params, xs
    return params, xs, normal(batch, 1), 2 if tiny else 50


def _collatz(name: str, start: int, tiny_start: int, dtype) -> Workload:
    return Workload(
        name=name,
        description=f"collatz({start}): data-dependent while + if ({jnp.dtype(dtype).name})",
        source=p.collatz,
        make_args=lambda tiny: (jnp.asarray(tiny_start if tiny else start, dtype),),
        builders={**_eager(p.collatz), **_compiled(p.collatz, p.collatz_lax, unroll=False)},
    )


def _fibonacci(n: int) -> Workload:
    return Workload(
        name=f"fibonacci_{n}",
        description=f"first {n} Fibonacci numbers appended to a list in a loop",
        source=p.fibonacci,
        make_args=lambda tiny: (jnp.array([0, 1], jnp.int32), 8 if tiny else n),
        builders={**_eager(p.fibonacci),
                  **_compiled(p.fibonacci, p.fibonacci_lax, unroll=True, static_argnums=1)},
        # The unrolled jaxpr stacks n scalars and XLA:CPU compiles it in time
        # quadratic in n (measured: 2 s at 50, 9 s at 100, 110 s at 400).
        unroll_cost=n * n // 10,
    )


def _fibonacci_while(n: int) -> Workload:
    return Workload(
        name=f"fibonacci_while_{n}",
        description=f"Fibonacci list grown in a while loop to traced n={n} (maximum_iterations)",
        source=p.fibonacci_while,
        make_args=lambda tiny: (jnp.array([0, 1], jnp.int32), jnp.int32(9 if tiny else n)),
        builders={**_eager(p.fibonacci_while),
                  **_compiled(p.fibonacci_while, p.fibonacci_while_lax, unroll=False)},
    )


def all_workloads() -> list[Workload]:
    """Every workload of the suite, in the order they are run and reported."""
    rng = np.random.default_rng(0)
    vector = jnp.asarray(rng.normal(scale=2.0, size=10_000), jnp.float32)
    matrix = jnp.asarray(rng.normal(size=(500, 10)), jnp.float32)
    line = jnp.asarray(rng.normal(size=50), jnp.float32)
    return [
        # 837799 climbs to 2,974,984,576 on its way down: past int32, within uint32.
        _collatz("collatz_27", 27, 6, jnp.int32),
        _collatz("collatz_837799", 837799, 7, jnp.uint32),
        _fibonacci(100),
        _fibonacci(1000),
        _fibonacci_while(100),
        _fibonacci_while(1000),
        Workload(
            name="huber_scalar",
            description="huber_loss(a) on a scalar: one if/else",
            source=p.huber_loss,
            make_args=lambda tiny: (jnp.float32(2.5),),
            builders={**_eager(p.huber_loss),
                      **_compiled(p.huber_loss, p.huber_loss_lax, unroll=False)},
        ),
        Workload(
            name="huber_vector_10000",
            description="huber_loss vmapped over a 10,000-vector",
            source=p.huber_loss,
            make_args=lambda tiny: (vector[:8] if tiny else vector,),
            builders={**_eager_each(p.huber_loss),
                      **_compiled(p.huber_loss, p.huber_loss_lax, unroll=False, vmap=True)},
            notes={EAGER: "Python loop over the elements as Python floats"},
        ),
        Workload(
            name="row_sum_500x10",
            description="for i in range(500): z += x[i] on a 500x10 array",
            source=p.row_sum,
            make_args=lambda tiny: (matrix[:5, :3] if tiny else matrix,),
            builders={**_eager(p.row_sum), **_compiled(p.row_sum, p.row_sum_lax, unroll=True)},
            unroll_cost=500,
        ),
        Workload(
            name="rnn_forward_100",
            description="tanh RNN forward, 100 steps, batch 32, hidden 64",
            source=p.rnn_forward,
            make_args=lambda tiny: _rnn_args(tiny, with_targets=False),
            builders={**_eager(p.rnn_forward),
                      **_compiled(p.rnn_forward, p.rnn_forward_lax, unroll=True)},
            unroll_cost=100,
            tolerance=1e-4,
        ),
        Workload(
            name="rnn_train_50",
            description="50 SGD steps of the RNN (forward, loss, grad, update) in one call",
            source=p.rnn_train,
            make_args=lambda tiny: _rnn_args(tiny, with_targets=True),
            builders={**_eager(p.rnn_train),
                      **_compiled(p.rnn_train, p.rnn_train_lax, unroll=True, static_argnums=3)},
            unroll_cost=50 * 100,
            slow_eager=True,
            tolerance=1e-3,
        ),
        Workload(
            name="triangle_sum_50",
            description="nested for i in range(n): for j in range(i), n traced (50)",
            source=p.triangle_sum,
            make_args=lambda tiny: (line[:6], jnp.int32(5)) if tiny else (line, jnp.int32(50)),
            builders={**_eager(p.triangle_sum),
                      **_compiled(p.triangle_sum, p.triangle_sum_lax, unroll=False)},
            tolerance=1e-4,
        ),
        Workload(
            name="collatz_vmap_1024",
            description="collatz vmapped over 1024 starts (per-example while loops)",
            source=p.collatz,
            make_args=lambda tiny: (jnp.arange(1, 9 if tiny else 1025, dtype=jnp.int32),),
            builders={**_eager_each(p.collatz),
                      **_compiled(p.collatz, p.collatz_lax, unroll=False, vmap=True)},
            notes={EAGER: "Python loop over the starts as Python ints"},
        ),
        *_bounded_loops(),
    ]


def _bounded_loops() -> list[Workload]:
    from .bounded_loops import workloads  # it builds on this module
    return workloads()


def get_workloads(names: list[str] | None = None) -> list[Workload]:
    """The workloads named in ``names`` (all when None); unknown names raise KeyError."""
    workloads = all_workloads()
    if not names:
        return workloads
    by_name = {w.name: w for w in workloads}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KeyError(f"unknown workload(s): {', '.join(unknown)}; "
                       f"known: {', '.join(by_name)}")
    return [by_name[n] for n in names]
