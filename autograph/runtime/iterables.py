"""``enumerate`` and ``zip`` in a ``for`` statement: Python's, or one staged ``scan``.

The list converter turns ``for i, x in enumerate(xs)`` into a loop over
``ag__.enumerate_(xs)`` (likewise ``zip``, when the names are Python's builtins).
Over Python iterables they are Python's ``enumerate`` and ``zip``. Over traced
arrays they give a ``Scanned``: the arrays (a pytree) that ``for_stmt`` scans
together along their leading axis, each item being the matching slice, shaped
as Python's item: ``(index, row)`` for ``enumerate``, a tuple for ``zip``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

from autograph.runtime.trace_context import weak_cast
from autograph.runtime.tracing import is_tracer


class Scanned:
    """Arrays a staged ``for`` scans together; each item is their slice ``xs[k]``.
    ``items()`` gives the items as Python's iteration would (an ``enumerate`` index
    as a Python int), for a loop that runs unrolled."""

    def __init__(self, xs, items=None, counted=False, start=0):
        self.xs = xs
        self._items = items
        self.counted = counted   # each item is (an enumerate index, the slice)
        self.start = start       # an enumerate's first index

    def items(self):
        if self._items is not None:
            return self._items()
        return (tree_util.tree_map(lambda x, k=k: x[k], self.xs) for k in range(self.length))

    @property
    def length(self) -> int:
        return tree_util.tree_leaves(self.xs)[0].shape[0]

    def item_aval(self):
        return tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype,
                                           weak_type=jax.typeof(x).weak_type),
            self.xs)


def _is_scanned(value) -> bool:
    """Whether a ``for`` over ``value`` is a staged scan (a traced array, or arrays
    that ``enumerate_``/``zip_`` already set up to scan)."""
    return is_tracer(value) or isinstance(value, Scanned)


def _array_like(value) -> bool:
    return _is_scanned(value) or isinstance(value, (jax.Array, np.ndarray))


def enumerate_(iterable, start=0):
    """``enumerate(iterable, start)``; scanned when ``iterable`` is traced."""
    if not _is_scanned(iterable):
        return enumerate(iterable, start)
    xs = iterable.xs if isinstance(iterable, Scanned) else iterable
    if not isinstance(iterable, Scanned) and jnp.ndim(iterable) == 0:
        raise TypeError("iteration over a 0-d array")
    length = tree_util.tree_leaves(xs)[0].shape[0]
    # The index is weakly typed, as Python's int is under jax.jit of the original.
    index = weak_cast(start + jnp.arange(length), np.dtype(np.int32))
    return Scanned((index, xs),
                   lambda: enumerate(_python_items(iterable), start), counted=True,
                   start=start)


def zip_(*iterables, strict=False):
    """``zip(*iterables)``; scanned when some are traced and all are arrays."""
    if not (any(_is_scanned(it) for it in iterables)
            and all(_array_like(it) for it in iterables)):
        return zip(*iterables, strict=strict)
    xs = [it.xs if isinstance(it, Scanned) else jnp.asarray(it) for it in iterables]
    lengths = [tree_util.tree_leaves(x)[0].shape[0] for x in xs]
    if strict and len(set(lengths)) > 1:
        raise ValueError(_strict_zip_message(lengths))
    n = min(lengths)
    return Scanned(tuple(tree_util.tree_map(lambda a: a[:n], x) for x in xs),
                   lambda: zip(*(_python_items(it) for it in iterables), strict=strict))


def _strict_zip_message(lengths) -> str:
    """The message of Python's ``zip(..., strict=True)`` for arguments of these
    lengths: the first to run out is named against those before it, or, where the
    first runs out first, the first longer one."""
    shortest = min(lengths)
    first = lengths.index(shortest)
    if first:
        which, how = first, "shorter"
    else:
        which, how = next(i for i, n in enumerate(lengths) if n > shortest), "longer"
    before = "argument 1" if which == 1 else f"arguments 1-{which}"
    return f"zip() argument {which + 1} is {how} than {before}"


def _python_items(iterable):
    """The items of ``iterable`` as a Python loop takes them."""
    if isinstance(iterable, Scanned):
        return iterable.items()
    return iter(iterable)


__all__ = ["Scanned", "enumerate_", "zip_"]
