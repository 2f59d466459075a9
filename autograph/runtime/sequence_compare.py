"""``(a, 1) < (b, 2)``: tuples and lists compared as Python compares them, staged.

Python compares two tuples (or lists) item by item: the first pair that is not
equal (``x is y or x == y``) decides, by ``x < y`` (``==`` is false there, ``!=``
true); where every item is equal, the lengths decide. With traced items Python's
comparison asks ``bool()`` of a traced ``x == y`` and fails (a bare
``TracerBoolConversionError``). From the first pair whose equality is traced on,
the rest is staged: each later pair decides only where all before it are equal,

    where(eq0, where(eq1, len(a) < len(b), a1 < b1), a0 < b0)

a traced bool. Pairs whose equality is a Python bool are asked as Python does (a
false one ends the comparison there). Items that are tuples or lists again are
compared the same way. Where an item comparison gives an array (items that are
arrays), Python's own comparison would fail: a ``ConversionError`` at the user's
line.
"""

from __future__ import annotations

import operator

import jax.numpy as jnp

from autograph.errors import ConversionError
from autograph.runtime.tracing import Tracer, caller_location, has_tracer

_OPERATORS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
              "==": operator.eq, "!=": operator.ne}
_SEQUENCES = (tuple, list)


def compare_sequences(left, op: str, right):
    """``left <op> right`` (``op``: ``'<'``, ``'=='``...), written with a tuple or list
    display on one side; staged where traced items decide it (see the module)."""
    if not (type(left) in _SEQUENCES and type(left) is type(right)) \
            or not has_tracer((left, right)):
        return _OPERATORS[op](left, right)
    return _compared(left, op, right)


def _compared(left, op, right):
    pending = []   # (traced eq, what the pair gives where it differs), in order
    for x, y in zip(left, right, strict=False):
        eq = True if x is y else _item(x, "==", y)
        if not isinstance(eq, Tracer):
            if eq:
                continue
            result = _differing(x, op, y)
            break
        pending.append((eq, _differing(x, op, y)))
    else:
        result = _OPERATORS[op](len(left), len(right))
    for eq, differing in reversed(pending):
        result = jnp.where(eq, result, differing)
    return result


def _differing(x, op, y):
    """What a pair that is not equal gives: ``x <op> y`` (false for ``==``, true for
    ``!=``, as Python's shortcut)."""
    if op == "==":
        return False
    if op == "!=":
        return True
    return _item(x, op, y)


def _item(x, op, y):
    """``x <op> y`` of two items; a traced result must be one bool."""
    if type(x) in _SEQUENCES and type(x) is type(y) and has_tracer((x, y)):
        return _compared(x, op, y)
    result = _OPERATORS[op](x, y)
    if isinstance(result, Tracer) and result.ndim != 0:
        where = caller_location()
        raise ConversionError(
            f"this comparison of sequences compares items that are arrays ({x!s:.40} "
            f"{op} {y!s:.40} gives a {result.ndim}-d array): Python asks the truth of "
            "each item comparison, and that of an array is ambiguous. Compare the "
            "arrays with jnp.array_equal (or jnp.all/jnp.any of them), or compare "
            "scalars.", where.filename, where.lineno)
    if isinstance(result, Tracer | bool) or op not in ("==", "!="):
        return result
    return bool(result)   # (Python asks bool() of each item's ==)
