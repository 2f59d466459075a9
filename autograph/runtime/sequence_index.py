"""``xs.index(v)`` of a list or tuple whose items or value are traced.

Python's ``list.index`` asks ``bool()`` of each ``item == v`` in turn and returns the
first position where it holds, raising ``ValueError`` when none does. With traced
comparisons the position is a traced int: each position where the comparison is
traced is selected in Python's order (the first that holds wins), and "none holds"
is a run-time check raising Python's own ``ValueError`` from the compiled call, as
a traced ``if ...: raise`` is (``checks.raise_if``). An item that *is* ``v`` (the
same object) or compares equal as a Python value ends the search there, as in
Python, with no check.

Before: ``k = xs.index(v)``; after:
``k = ag__.index_method(ag__.converted_call(xs.index), v)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from autograph.errors import StagingTypeError
from autograph.runtime import python_ints
from autograph.runtime.checks import raise_if
from autograph.runtime.tracing import Tracer, caller_location, describe, is_tracer


def index_method(method, value, *bounds):
    """``method(value, *bounds)`` (``method``: the bound ``xs.index``); for a list or
    tuple with traced items or a traced ``value``, the traced position of the first
    equal item, and a run-time check raising Python's ``ValueError`` where none is."""
    owner = getattr(method, "__self__", None)
    kind = type(owner)
    if (kind not in (list, tuple) or getattr(method, "__name__", None) != "index"
            or not (is_tracer(value) or any(isinstance(x, Tracer) for x in owner))
            or not all(hasattr(b, "__index__") and not is_tracer(b) for b in bounds)):
        return method(value, *bounds)   # Python's own (and its errors)
    positions = range(len(owner))[slice(*bounds)] if len(bounds) == 2 else (
        range(len(owner))[bounds[0]:] if bounds else range(len(owner)))
    traced = []
    for i in positions:
        x = owner[i]
        equal = x is value or x == value
        if not isinstance(equal, Tracer):
            if equal:
                return _first(traced, i)
            continue
        if jnp.ndim(equal) != 0:
            where = caller_location()
            raise StagingTypeError(
                f"index() compares items by == into a traced {describe(equal)}, whose "
                "truth value is ambiguous. Compare scalars, or find the position with "
                "jnp.argmax(jnp.all(array == value, axis=...)).", where.filename,
                where.lineno)
        traced.append((i, equal))
    if traced:
        absent = jnp.logical_not(jnp.any(jnp.stack([e for _, e in traced])))
    else:   # no item can be equal: Python raises for every input, where it gets here
        absent = jnp.logical_or(jnp.asarray(value) == value, True)
    raise_if(absent, _raiser(kind), lambda: (value,))
    return _first(traced, 0)


def _first(traced, otherwise):
    """The first position of ``traced`` (``(position, traced bool)`` pairs) whose
    comparison holds, else ``otherwise``: an int of the program."""
    if not traced:
        return otherwise
    out = jnp.int32(otherwise)
    for i, equal in reversed(traced):
        out = jnp.where(equal, jnp.int32(i), out)
    python_ints.mark(out)
    return out


def _raiser(kind):
    """Raise the ``ValueError`` Python's ``kind.index(value)`` raises for a value that
    is not there (its own message: ``'3 is not in list'``)."""
    def raise_not_found(value):
        kind().index(value)
    return raise_not_found


__all__ = ["index_method"]
