"""``and``, ``or``, ``not``, chained comparisons: Python's, or ``jnp.logical_*`` when traced.

Generated code passes every operand as a function, so each is evaluated only when
Python would evaluate it: ``a and b`` becomes ``ag__.and_(lambda: a, lambda: b)``.

- Python operands: Python's exact semantics. ``a or b`` returns an operand (``0 or
  'x'`` is ``'x'``), and the right operand is skipped when the left decides.
- From the first traced operand on, the result is ``jnp.logical_and`` /
  ``jnp.logical_or`` of the operands (a boolean array). Staged code computes every
  operand, except one whose computation has effects (a ``print``, an ``assert``):
  that one runs under ``lax.cond`` only when the scalar condition before it does
  not decide, so ``i < n and check(x[i])`` keeps Python's short-circuit at run time.
- ``i < n and x[i] > 0`` with a traced ``i`` needs no guard: JAX clamps the
  out-of-range index and the ``and`` discards that value.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.runtime.tracing import FlatTree, is_tracer


def and_(*operands):
    """``operands[0]() and operands[1]() and ...`` with Python's short-circuit.

    Equivalent to that Python expression for Python values; a traced operand makes
    the result ``jnp.logical_and`` of it and the remaining operands.
    """
    value = operands[0]()
    for i, operand in enumerate(operands[1:], start=1):
        if is_tracer(value):
            return _combine_traced(jnp.logical_and, value, operands[i:], decides=False)
        if not value:
            return value
        value = operand()
    return value


def or_(*operands):
    """``operands[0]() or operands[1]() or ...`` with Python's short-circuit."""
    value = operands[0]()
    for i, operand in enumerate(operands[1:], start=1):
        if is_tracer(value):
            return _combine_traced(jnp.logical_or, value, operands[i:], decides=True)
        if value:
            return value
        value = operand()
    return value


def not_(value):
    """``not value``; ``jnp.logical_not`` for a traced value."""
    if is_tracer(value):
        return jnp.logical_not(value)
    return not value


_COMPARISONS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "is": operator.is_,
    "is not": operator.is_not, "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


def compare_chain(left, *ops_and_operands):
    """``left op1 b op2 c ...`` given as ``(left, 'op1', lambda: b, 'op2', lambda: c)``.

    Python's chained comparison: each operand evaluated once, and the chain stops
    at the first false comparison, whose result it returns. From the first traced
    comparison on, the rest is combined with ``jnp.logical_and``.
    """
    pairs = list(zip(ops_and_operands[::2], ops_and_operands[1::2], strict=True))
    previous = [left]

    def comparison(op, operand):
        def compare():
            right = operand()
            result = _COMPARISONS[op](previous[0], right)
            previous[0] = right
            return result
        return compare

    return and_(*[comparison(op, operand) for op, operand in pairs])


def _combine_traced(op, value, rest, decides):
    """``op`` over the traced ``value`` and the ``rest`` operands; ``decides`` is the
    value of ``value`` that makes the right operand irrelevant (``True`` for ``or``)."""
    for operand in rest:
        value = op(value, _lazy(value, operand, decides))
    return value


def _lazy(value, operand, decides):
    """The right operand's value, computed under ``lax.cond`` (only when ``value`` is
    not ``decides``) if computing it has effects, else computed inline.

    The operand is traced once into a jaxpr (so its Python side effects happen
    once); the jaxpr's effects decide how it is evaluated.
    """
    structure = []

    def run():
        structure.append(FlatTree(operand(), is_tracer))
        return structure[0].selected

    closed = jax.make_jaxpr(run)()
    (flat,) = structure

    def inline():
        return flat.rebuild(jax.core.eval_jaxpr(closed.jaxpr, closed.consts))

    if not closed.effects and not flat.positions:
        return flat.rebuild([])
    if not closed.effects:
        return inline()
    if jnp.shape(value) != () or len(flat.leaves) != 1 or np.shape(flat.leaves[0]) != ():
        return inline()   # elementwise: every operand is computed
    pred = value if value.dtype == bool else value != 0
    right = lambda: jnp.asarray(inline(), bool)  # noqa: E731
    if decides:  # `or`: the right operand runs only when `value` is false
        return lax.cond(pred, lambda: jnp.bool_(True), right)
    return lax.cond(pred, right, lambda: jnp.bool_(False))
