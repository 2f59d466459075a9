"""``and``, ``or``, ``not``, chained comparisons: Python's values, staged when traced.

Generated code passes every operand as a function, so each is evaluated only when
Python would evaluate it: ``a and b`` becomes ``ag__.and_(lambda: a, lambda: b)``.

- Python operands: Python's exact semantics. ``a or b`` returns an operand (``0 or
  'x'`` is ``'x'``), and the right operand is skipped when the left decides.
- A traced operand ``a``: Python's value, ``a if a else b`` for ``or`` and
  ``b if a else a`` for ``and``, staged as a select whose dtype is the one both
  operands promote to (``scale or 1.0`` with a float32 ``scale`` is float32, a
  weakly typed operand stays weak). Boolean operands give ``jnp.logical_or`` /
  ``jnp.logical_and``, the same values. What follows a traced operand keeps
  Python's short-circuit among its own Python operands (``t or 0 or 2`` reads
  ``0 or 2`` as Python does). An array operand of more than one element (whose
  truth Python finds ambiguous) is taken element by element, as ``vmap`` of the
  scalar form would.
- An operand that changes Python state (a helper appending to a list) is refused at
  the line: staged, it would change it whatever the left operand's value.
- Staged code computes every operand, except one whose computation has effects (a
  ``print``, an ``assert``): that one runs under ``lax.cond`` only when the scalar
  condition before it does not decide, so ``i < n and check(x[i])`` keeps
  Python's short-circuit at run time.
- ``i < n and x[i] > 0`` with a traced ``i`` needs no guard: JAX clamps the
  out-of-range index and the ``and`` discards that value.
"""

from __future__ import annotations

import contextlib
import operator

import jax
import jax.numpy as jnp
import numpy as np

from autograph.errors import ConversionError, StagingTypeError
from autograph.runtime import batched_select, paths, side_effects
from autograph.runtime.abstract import abstract, placeholder
from autograph.runtime.tracing import FlatTree, caller_location, describe, is_tracer


def and_(*operands):
    """``operands[0]() and operands[1]() and ...`` with Python's short-circuit.

    Equivalent to that Python expression; from a traced operand on, its value
    is chosen while the program runs (``b if a else a``, staged as a select).
    """
    value = operands[0]()
    for i in range(1, len(operands)):
        if is_tracer(value):
            return _staged(value, operands[i:], is_or=False)
        if not value:
            return value
        value = operands[i]()
    return value


def or_(*operands):
    """``operands[0]() or operands[1]() or ...`` with Python's short-circuit
    (``a if a else b`` staged as a select from a traced operand on)."""
    value = operands[0]()
    for i in range(1, len(operands)):
        if is_tracer(value):
            return _staged(value, operands[i:], is_or=True)
        if value:
            return value
        value = operands[i]()
    return value


def not_(value):
    """``not value``; ``jnp.logical_not`` for a traced value."""
    if is_tracer(value):
        return jnp.logical_not(value)
    return not value


def is_(value, constant):
    """``value is constant`` for ``constant`` True or False, as Python means it for
    bools: a traced scalar of dtype bool is the bool it stands for (``value`` or
    ``not value``, traced); any other traced value (a number, an array) is no bool,
    so the answer is False, as in Python. Python values: Python's ``is``."""
    if not is_tracer(value):
        return value is constant
    if jnp.shape(value) != () or value.dtype != jnp.bool_:
        return False
    return value if constant else jnp.logical_not(value)


def is_not(value, constant):
    """``value is not constant`` for ``constant`` True or False: ``not is_(...)``."""
    if not is_tracer(value):
        return value is not constant
    return not_(is_(value, constant))


_COMPARISONS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "is": lambda a, b: _identity(a, b),
    "is not": lambda a, b: not_(_identity(a, b)), "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


def _identity(a, b):
    if type(b) is bool:
        return is_(a, b)
    if type(a) is bool:
        return is_(b, a)
    return a is b


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
        compare.__wrapped__ = operand   # what side_effects.watch follows, not `previous`
        return compare

    return and_(*[comparison(op, operand) for op, operand in pairs])


def _staged(value, rest, is_or, where=None):
    """``value or <rest>`` (``is_or``) or ``value and <rest>`` for a traced ``value``:
    the rest of the operands, as Python's own ``or``/``and`` of them, is traced once
    into a jaxpr (so its Python side effects happen once), then computed inline, or
    under ``lax.cond`` when it has effects and ``value`` decides it as a scalar.
    ``where``: the user's line (by default, that of the ``and_``/``or_`` call)."""
    where = caller_location(3) if where is None else where
    structure = []

    def run():
        structure.append(FlatTree(_rest(rest, is_or, where), is_tracer))
        return structure[0].selected

    # Python state the operands change (a helper appending to a list) would change
    # whatever ``value`` turns out to be: refused at the line (side_effects.py).
    effects = side_effects.watch(rest)
    with _on_path(value, is_or):   # a print there acts where the left does not decide
        closed = jax.make_jaxpr(run)()
    side_effects.settle(effects, False, "or" if is_or else "and", where,
                        lambda: jax.make_jaxpr(lambda: _rest(rest, is_or, where))())
    (flat,) = structure

    def right():
        if not flat.positions and not closed.effects:
            return flat.rebuild([])
        return flat.rebuild(jax.core.eval_jaxpr(closed.jaxpr, closed.consts))

    if len(flat.leaves) != 1 or flat.treedef != jax.tree_util.tree_structure(0) or not (
            flat.positions or _is_number(flat.leaves[0])):
        _refuse_operand(flat, is_or, where)
    right_aval = abstract(flat.leaves[0]) if not flat.positions else closed.out_avals[0]
    boolean = value.dtype == bool and right_aval.dtype == bool
    if jnp.shape(value) == () and right_aval.shape != ():
        raise StagingTypeError(
            f"`{'or' if is_or else 'and'}` gives one of its operands, chosen while the "
            f"program runs because the left one is traced ({describe(value)}); the other "
            f"is {describe(right_aval)}, of another shape, so the result's shape would "
            "depend on the data. Give both operands the same shape (jnp.broadcast_to), "
            "or use jnp.where.", where.filename, where.lineno)
    if not closed.effects or jnp.shape(value) != () or right_aval.shape != ():
        # Elementwise (or effect-free): every operand is computed.
        return _select(value, right(), is_or, boolean)
    pred = value if value.dtype == bool else value != 0
    if boolean:
        chosen, computed = (lambda: jnp.bool_(True)), lambda: jnp.asarray(right(), bool)
        return (batched_select.cond(pred, chosen, computed) if is_or
                else batched_select.cond(pred, computed, lambda: jnp.bool_(False)))
    # Each branch gives the dtype both operands promote to (weak if both are).
    left_like, right_like = placeholder(abstract(value)), placeholder(right_aval)
    keep = lambda: jnp.where(True, value, right_like)  # noqa: E731
    compute = lambda: jnp.where(True, right(), left_like)  # noqa: E731
    return (batched_select.cond(pred, keep, compute) if is_or
            else batched_select.cond(pred, compute, keep))


def _on_path(value, is_or):
    """While the right operands are traced: they run only where the scalar ``value``
    does not decide (for each example, under ``vmap``)."""
    if jnp.shape(value) != ():
        return contextlib.nullcontext()
    truth = (lambda: value) if value.dtype == bool else (lambda: value != 0)
    return paths.on_path((lambda: jnp.logical_not(truth())) if is_or else truth)


def _rest(operands, is_or, where):
    """``operands[0]() or operands[1]() or ...`` (``and`` unless ``is_or``): Python's
    short-circuit, staged from a traced operand on."""
    value = operands[0]()
    for i in range(1, len(operands)):
        if is_tracer(value):
            return _staged(value, operands[i:], is_or, where)
        if bool(value) is is_or:
            return value
        value = operands[i]()
    return value


def _select(value, right, is_or, boolean):
    if boolean:
        return (jnp.logical_or if is_or else jnp.logical_and)(value, right)
    pred = value if value.dtype == bool else value != 0
    return jnp.where(pred, value, right) if is_or else jnp.where(pred, right, value)


def _is_number(leaf) -> bool:
    return isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic, jax.Array))


def _refuse_operand(flat, is_or, where):
    other = jax.tree_util.tree_unflatten(flat.treedef, flat.leaves)
    kind = "None" if other is None else type(other).__name__
    raise ConversionError(
        f"`{'or' if is_or else 'and'}` gives one of its operands, chosen while the "
        "program runs because the left one is traced; staged, that is a select between "
        f"arrays, but the other operand is a {kind} ({other!r:.60}). Decide with a "
        "Python value (e.g. `x if flag is not None else default`), or make both "
        "operands arrays of one shape.", where.filename, where.lineno)
