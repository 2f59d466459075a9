"""Item assignment: ``x[i] = v`` and ``x[i] += v`` for arrays, lists and dicts.

The slices converter turns ``x[i] = v`` into ``x = ag__.setitem(x, i, v)`` and
``x[i] += v`` into ``x = ag__.setitem(x, i, v, op='+')``. A JAX array (traced or
not) cannot be mutated, so it gets the functional update ``x.at[i].set(v)`` (or
``.add``, ``.multiply``...); everything else (NumPy arrays, lists, dicts, user
objects) is mutated in place, as the original does, and returned as the same
object. ``ag__.index[a:b, i]`` spells a key holding slices.
"""

from __future__ import annotations

import operator

import jax

from autograph.runtime.lists import TensorList

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


def setitem(target, key, value, op=None):
    """``target[key] = value``, or ``target[key] <op>= value``; returns the target
    (a new array for a JAX array, the same object otherwise)."""
    if type(target) in _PYTHON_CONTAINERS:  # the common case in Python mode, first
        if op is None:
            target[key] = value
        else:
            target[key] = _INPLACE[op](target[key], value)
        return target
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


class _Index:
    """``index[k]`` is ``k``: a way to write slices outside a subscript."""

    def __getitem__(self, key):
        return key

    def __repr__(self):
        return "ag__.index"


index = _Index()

__all__ = ["index", "setitem"]
