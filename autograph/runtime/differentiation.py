"""What staged loops need from JAX's transformations beyond plain tracing.

Reverse mode (``jax.grad``, ``vjp``, ``jacrev``) goes through a loop only when its trip
count is bounded: ``scan`` and static ``fori_loop`` transpose, ``lax.while_loop``
does not. JAX finds that out while transposing, long after our runtime call has
returned, and says so in terms of its own primitives. So an unbounded staged loop
passes its results through ``reverse_guard``: an identity that costs nothing when
run, compiled, batched or differentiated in forward mode, and whose *transpose*
raises a ``ConversionError`` naming the user's loop and the fix
(``set_loop_options(maximum_iterations=N)``). Transposition walks the program
backwards, so the guard, which consumes the loop's tangents, is transposed before
the loop and speaks first.

``checkpointed(body)`` is the ``checkpoint=True`` loop option: the body is
rematerialised in the backward pass, so reverse mode keeps only the loop state per
iteration instead of every intermediate of the body.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from autograph.errors import ConversionError
from autograph.runtime.trace_context import FRAMES, current_trace, pushed

_guard_p = Primitive("autograph_reverse_guard")


def reverse_guard(tree, where, construct: str):
    """``tree`` unchanged; transposing it (reverse-mode differentiation of the loop
    that produced it) raises a ``ConversionError`` at ``where``. Nothing is bound
    where the loop is traced straight into the body of a guarded loop
    (``guarded_body``): no value leaves that body but through the outer loop's
    results, whose guard is transposed first and speaks for both."""
    bodies = FRAMES.guarded_bodies
    if bodies and any(body is current_trace() for body in bodies):
        return tree
    loop = _GuardedLoop(construct, getattr(where, "filename", None),
                        getattr(where, "lineno", None))
    return jax.tree_util.tree_map(
        lambda leaf: _guard_p.bind(leaf, loop=loop) if _is_inexact(leaf) else leaf, tree)


def guarded_body(body_fun):
    """``body_fun``, the body of an unbounded loop whose results go through
    ``reverse_guard``: while JAX traces it, loops traced straight into it (not
    through a ``cond``, a ``jit`` or another transformation, each its own trace)
    bind no guard of their own. Such a loop cannot be transposed without the outer
    one, which never is (its guard raises first), so theirs would never speak:
    one equation less per nested loop (triangle_sum's inner ``for``)."""
    def body(*args):
        with pushed(FRAMES.guarded_bodies, current_trace()):
            return body_fun(*args)
    return body


@dataclasses.dataclass(frozen=True)
class _GuardedLoop:
    """The guarded loop, a primitive parameter (hashable; short in a printed jaxpr)."""

    construct: str
    filename: str | None
    lineno: int | None

    def __str__(self):
        return f"{self.construct} at {self.filename}:{self.lineno}"

    def error(self) -> ConversionError:
        return ConversionError(
            f"this {self.construct} has no bound on its number of iterations, so it "
            "cannot be differentiated in reverse mode (jax.grad, vjp, jacrev). Add "
            "`autograph.set_loop_options(maximum_iterations=N)` as the first statement "
            "of the loop body: the loop then stops after at most N iterations and reverse "
            "mode goes through it (it still costs only the iterations it takes). Forward "
            "mode (jax.jvp, jacfwd) works without a bound.", self.filename, self.lineno)


def _is_inexact(leaf) -> bool:
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jnp.inexact)


_guard_p.def_impl(lambda x, **_: x)
_guard_p.def_abstract_eval(lambda x, **_: x)
# An identity, lowered in place: a cached lowering would build (and inline) an MLIR
# function for it, in every program (its parameter names the loop's line).
mlir.register_lowering(_guard_p, lambda ctx, x, **_: [x], cacheable=False)


def _guard_jvp(primals, tangents, *, loop):
    (x,), (t,) = primals, tangents
    out = _guard_p.bind(x, loop=loop)
    if type(t) is ad.Zero:
        return out, t
    return out, _guard_p.bind(t, loop=loop)


def _guard_transpose(ct, x, *, loop):
    del ct, x
    raise loop.error()


def _guard_batch(args, dims, *, loop):
    (x,), (d,) = args, dims
    return _guard_p.bind(x, loop=loop), d


ad.primitive_jvps[_guard_p] = _guard_jvp
ad.primitive_transposes[_guard_p] = _guard_transpose
batching.primitive_batchers[_guard_p] = _guard_batch


def checkpointed(body_fun, enabled: bool):
    """``body_fun`` under ``jax.checkpoint`` when ``enabled``: reverse mode then
    recomputes the body's intermediates instead of storing them per iteration. A
    bounded loop (``bounded_loops.py``) traces this body into its replay, whose
    blocks are checkpointed already: there it keeps, for the block being
    differentiated, one state per step instead of the body's intermediates."""
    return jax.checkpoint(body_fun) if enabled else body_fun
