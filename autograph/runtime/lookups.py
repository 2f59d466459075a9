"""A Python list of numbers indexed by a traced int: a gather from the list as an array.

``table[n]``, where the converter sees ``table`` bound to a list or tuple (a list
display, comprehension, ``list(...)`` or ``[0] * k`` in the function, or a global
or closure variable holding one), becomes ``ag__.list_item(table, n)``. With a
Python index (or anything but a list or tuple) it *is* ``table[n]``. With a traced
index, a list whose items are numbers of one kind (all ``bool``, all ``int`` or
all ``float``; Python numbers or traced scalars) is read as an array at that
index; an index outside the list raises Python's ``IndexError`` from the compiled
call (a run-time check, as a traced ``assert`` is), where an array read would
clamp it silently. A list of mixed kinds, or of anything else, is refused at the
user's line: one array cannot hold what Python would return for each item.
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp

from autograph.errors import StagingTypeError
from autograph.runtime.checks import check_value
from autograph.runtime.tracing import Tracer, caller_location, is_tracer


def list_item(sequence, index):
    """``sequence[index]``; a traced index into a list of numbers gathers from it."""
    if not is_tracer(index) or type(sequence) not in (list, tuple):
        return sequence[index]
    kinds = {_kind(item) for item in sequence}
    if len(kinds) != 1 or None in kinds or jnp.ndim(index) != 0:
        where = caller_location()
        what = ("numbers of more than one kind" if None not in kinds and kinds
                else "items that are not numbers" if kinds else "no items")
        raise StagingTypeError(
            f"this {type(sequence).__name__} is indexed by a traced value, and it holds "
            f"{what}: it can be read as an array only when it holds numbers of one kind "
            "(all int, all float or all bool). Make it an array (jnp.asarray) or index "
            "it with a Python int.", where.filename, where.lineno)
    size = len(sequence)
    check_value((index >= -size) & (index < size), IndexError,
                f"{type(sequence).__name__} index out of range")
    return jnp.stack([jnp.asarray(item) for item in sequence])[index]


def _kind(item):
    """``bool``, ``int`` or ``float`` for a number (Python or traced scalar), else None."""
    if isinstance(item, Tracer):
        if jnp.ndim(item) != 0:
            return None
        for kind, dtypes in ((bool, jnp.bool_), (int, jnp.integer), (float, jnp.floating)):
            if jnp.issubdtype(item.dtype, dtypes):
                return kind
        return None
    if isinstance(item, bool):
        return bool
    if isinstance(item, numbers.Integral):
        return int
    if isinstance(item, numbers.Real):
        return float
    return None
