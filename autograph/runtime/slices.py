"""Item assignment: ``x[i] = v`` and ``x[i] += v`` for arrays, lists and dicts.

The slices converter turns ``x[i] = v`` into ``x = ag__.setitem(x, i, v)`` and
``x[i] += v`` into ``x = ag__.setitem(x, i, v, op='+')``. A JAX array (traced or
not) cannot be mutated, so it gets the functional update ``x.at[i].set(v)`` (or
``.add``, ``.multiply``...); everything else (NumPy arrays, lists, dicts, user
objects) is mutated in place, as the original does, and returned as the same
object, except a NumPy array given a traced value or index, which cannot hold it:
it becomes a JAX array updated functionally. ``ag__.index[a:b, i]`` spells a key
holding slices. A slice of static width at a staged loop's index (``xs[i:i + k]``)
is read with ``ag__.getitem(xs, ag__.index[i:i + k], (k,))`` and written with
``setitem(..., widths=(k,))``: a ``lax.dynamic_slice`` / ``dynamic_update_slice``.
"""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.errors import ConversionError
from autograph.runtime import intervals, joined_numbers, side_effects
from autograph.runtime.lists import TensorList
from autograph.runtime.tracing import caller_location, is_tracer

_INPLACE = {
    "+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
    "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow,
    "@": operator.imatmul, "&": operator.iand, "|": operator.ior, "^": operator.ixor,
    "<<": operator.ilshift, ">>": operator.irshift,
}
_BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
    "@": operator.matmul, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift,
}
_PYTHON_CONTAINERS = frozenset({list, dict})
# Augmented operators that JAX's ``.at[]`` does in one scatter.
_AT_METHODS = {"+": "add", "*": "multiply", "/": "divide", "**": "power"}


def augmented_assign(target, value, op):
    """``target <op>= value`` (``op`` one of ``+``, ``*``, ``|``), returning what
    Python's statement binds. A list or dict it would extend in place is checked
    first: a change refused since a staged region made its identity depend on a
    traced condition (``side_effects.refuse_if_replaced``) is a ``ConversionError``
    at the user's line. A number whose type a traced condition decided gets the
    result's type noted (``joined_numbers``)."""
    if side_effects.REPLACED and type(target) in _PYTHON_CONTAINERS:
        side_effects.refuse_if_replaced(target)
    return joined_numbers.number_op(target, op + "=", value)


def setitem(target, key, value, op=None, widths=None, shared=None, alias=None, held=None):
    """``target[key] = value``, or ``target[key] <op>= value``; returns the target
    (a new array for a JAX array, the same object otherwise). ``widths`` are
    ``getitem``'s: a slice of static width at a staged loop's index is written
    with ``lax.dynamic_update_slice``. ``shared``: the name of the parameter the
    target is, which the function neither rebinds nor returns: its caller sees the
    object it passed, so an update that would make a new array instead (a JAX
    array, a NumPy array given a traced value) is a ``ConversionError`` here, not an
    update the caller silently never sees. ``alias``: another name of the function
    that may hold the same object (``z = y``), which likewise sees only an update
    in place: a new array is a ``ConversionError`` too."""
    if type(target) in _PYTHON_CONTAINERS:  # the common case in Python mode, first
        if side_effects.REPLACED:
            side_effects.refuse_if_replaced(target)
        if op is None:
            target[key] = value
        else:
            target[key] = _INPLACE[op](target[key], value)
        return target
    if isinstance(target, np.ndarray) and (is_tracer(value) or _traced_key(key)):
        name = held or shared or alias
        if name is not None:
            raise _numpy_write_unseen(name)
        # NumPy cannot hold a traced value: the update is functional, as for a JAX
        # array (the original fails here under jax.jit).
        target = jnp.asarray(target)
    if (shared is not None or alias is not None) and isinstance(target, jax.Array):
        raise _unseen_update(shared) if shared is not None else _unseen_by_alias(alias)
    if widths is not None:
        window = _window(target, key, widths)
        if window is not None:
            starts, sizes, rest = window
            part = setitem(lax.dynamic_slice(target, starts, sizes), rest, value, op)
            return lax.dynamic_update_slice(target, part.astype(target.dtype), starts)
    if isinstance(target, jax.Array):
        at = target.at[key]
        if op is None:
            return at.set(value)
        if op in _AT_METHODS:
            return getattr(at, _AT_METHODS[op])(value)
        return at.set(_BINARY[op](target[key], value))
    if isinstance(target, TensorList):
        if op is not None:
            value = _BINARY[op](target[key], value)
        return target._set(key, value)
    if op is None:
        target[key] = value
    else:
        target[key] = _INPLACE[op](target[key], value)
    return target


def _unseen_update(name):
    where = caller_location()
    return ConversionError(
        f"'{name}' is a parameter of this function, and this assigns into the array "
        f"it holds: a JAX array cannot change in place, so the update makes a new "
        f"array ({name}.at[...].set(...)) that the caller, which passed '{name}' in, "
        "would never see (Python changes a list for the caller too). Return the new "
        f"array (`return {name}`) and assign it where the function is called "
        f"(`{name} = f({name}, ...)`).", where.filename, where.lineno)


def _numpy_write_unseen(name):
    where = caller_location()
    return ConversionError(
        f"'{name}' holds a NumPy array that something else may hold too (the caller "
        "that passed it in, another name, a view of it, a list it was put in), and this "
        "writes a traced value into it. Python writes into that array, where every "
        "holder sees the change; NumPy cannot hold a traced value, so the update would "
        "make a new JAX array that the other holders never see. Make a JAX array that "
        f"this name alone holds (`{name} = jnp.array({name})`), update it with "
        f"`{name} = {name}.at[i].set(v)`, and return it to the code that needs it.",
        where.filename, where.lineno)


def _unseen_by_alias(alias):
    where = caller_location()
    return ConversionError(
        f"this assigns into an array that '{alias}' may hold too (an assignment such as "
        f"`{alias} = ...` names the same object): a JAX array cannot change in place, so "
        f"the update makes a new array that '{alias}' would never see (Python changes a "
        "list for every name that holds it). Make one of the names a copy "
        f"(`{alias} = jnp.array(...)`), or update the array by name only "
        "(`x = x.at[i].set(v)`).", where.filename, where.lineno)


def _traced_key(key) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(is_tracer(p) or isinstance(p, slice) and (
        is_tracer(p.start) or is_tracer(p.stop) or is_tracer(p.step)) for p in parts)


def getitem(target, key, widths):
    """``target[key]``, where ``widths`` gives, for each entry of ``key`` (a tuple
    for several), the static width ``k`` of a slice written ``a:a + k``, or None.

    A slice whose start is a staged loop's index has traced bounds, which JAX's
    indexing refuses; with its width static and the index's range keeping it
    inside the array (``intervals``), it is a ``lax.dynamic_slice``, and the loop
    stays staged. Anything else is ``target[key]`` as written (where that needs
    Python ints, a static loop runs unrolled, as under ``jax.jit``).
    """
    window = _window(target, key, widths)
    if window is None:
        return target[key]
    starts, sizes, rest = window
    return lax.dynamic_slice(target, starts, sizes)[rest]


def _window(target, key, widths):
    """``(starts, sizes, rest)`` when ``key`` holds slices of static width with
    traced starts that stay inside ``target``: ``target[key]`` is
    ``lax.dynamic_slice(target, starts, sizes)[rest]``. None otherwise."""
    parts = key if isinstance(key, tuple) else (key,)
    if not isinstance(target, jax.Array) or len(parts) != len(widths):
        return None
    starts = [0] * target.ndim
    sizes = list(target.shape)
    rest = list(parts)
    axis = 0
    for position, (part, width) in enumerate(zip(parts, widths, strict=True)):
        if part is Ellipsis:
            if any(w is not None for w in widths[position:]):
                return None
            break
        if part is None:
            continue
        if width is not None and isinstance(part, slice) and (
                is_tracer(part.start) or is_tracer(part.stop)):
            if axis >= target.ndim or not _stays_inside(part, width, target.shape[axis]):
                return None
            starts[axis], sizes[axis] = part.start, width
            rest[position] = slice(None)
        axis += 1
    if rest == list(parts):
        return None
    return starts, sizes, tuple(rest) if isinstance(key, tuple) else rest[0]


def _stays_inside(part, width, size) -> bool:
    """Whether the slice ``part`` (``a:a + width``) lies whole inside an axis of
    ``size`` for every value its start takes, so that Python's slice has exactly
    ``width`` items and ``dynamic_slice`` (which would shift it) the same ones."""
    if part.step is not None or type(width) is not int or width < 0:
        return False
    known = intervals.bounds(part.start)
    return known is not None and known[0] >= 0 and known[1] + width <= size


class _Index:
    """``index[k]`` is ``k``: a way to write slices outside a subscript."""

    def __getitem__(self, key):
        return key

    def __repr__(self):
        return "ag__.index"


index = _Index()

__all__ = ["getitem", "index", "setitem"]
