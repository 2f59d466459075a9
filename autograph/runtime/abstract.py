"""The types of staged state: abstract values, how two states differ, how they join.

A staged ``if`` gives each variable one type whichever branch runs, and a staged
loop carries each with one type across iterations. These helpers compare the
abstract states (``jax.ShapeDtypeStruct`` pytrees) that JAX traces give, join the
dtypes that NumPy-style promotion joins as Python would (``1`` vs ``2.5``), and
raise a ``StagingTypeError`` naming the variable, both types and the user's line.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util

from autograph.errors import StagingTypeError
from autograph.runtime.tracing import describe


def abstract(tree):
    """``jax.ShapeDtypeStruct`` leaves for a pytree of arrays and numbers."""
    return tree_util.tree_map(
        lambda leaf: jax.ShapeDtypeStruct(jnp.shape(leaf), jnp.result_type(leaf),
                                          weak_type=_is_weak(leaf)), tree)


def _is_weak(leaf) -> bool:
    if isinstance(leaf, (bool, int, float, complex)):
        return True
    return bool(getattr(jax.typeof(leaf), "weak_type", False))


def mismatches(names, first, second):
    """``(name, first type, second type, joinable)`` for each variable whose pytree
    structure, shape or dtype differs between two abstract states. ``joinable`` is
    true when only dtypes differ and each differing pair involves a weak type (a
    Python scalar), which NumPy-style promotion joins as Python would."""
    found = []
    for name, a, b in zip(names, first, second, strict=True):
        a_leaves, a_tree = tree_util.tree_flatten(a)
        b_leaves, b_tree = tree_util.tree_flatten(b)
        if a_tree != b_tree:
            found.append((name, _tree_repr(a), _tree_repr(b), False))
            continue
        for x, y in zip(a_leaves, b_leaves, strict=True):
            if x.shape == y.shape and x.dtype == y.dtype:
                continue
            joinable = x.shape == y.shape and (x.weak_type or y.weak_type)
            found.append((name, describe(x), describe(y), joinable))
            break
    return found


def _tree_repr(tree) -> str:
    leaves, treedef = tree_util.tree_flatten(tree)
    if treedef == tree_util.tree_structure(0):
        return describe(leaves[0])
    return f"a pytree {tree_util.tree_unflatten(treedef, [describe(x) for x in leaves])}"


def joined_dtypes(first, second):
    """The promoted dtype of each leaf of two abstract states of equal structure."""
    return tree_util.tree_map(
        lambda x, y: jnp.result_type(_example(x), _example(y)), first, second)


def _example(aval):
    if aval.weak_type:
        return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[np.dtype(aval.dtype).kind]
    return np.zeros((), aval.dtype)


def placeholder(tree):
    """Zeros of the abstract pytree ``tree``, weak Python scalars kept weak."""
    def zeros(aval):
        if aval.weak_type and aval.shape == ():
            return _example(aval)
        return jnp.zeros(aval.shape, aval.dtype)
    return tree_util.tree_map(zeros, tree)


def cast_to(tree, dtypes):
    """``tree`` with each leaf converted to the matching dtype of ``dtypes``."""
    return tree_util.tree_map(
        lambda leaf, dtype: leaf if jnp.result_type(leaf) == dtype
        else lax.convert_element_type(leaf, dtype), tree, dtypes)


def mismatch_error(construct_phrase, name, first, second, where, fix, labels=None):
    """A ``StagingTypeError`` naming the variable, both types and the user's line;
    ``labels`` say where each type comes from (``("in the `if` branch", ...)``)."""
    types_ = (f"{first} {labels[0]}, {second} {labels[1]}" if labels
              else f"{first} and {second}")
    error = StagingTypeError(
        f"'{name}' {construct_phrase}: {types_}. {fix}", where.filename, where.lineno)
    # Raised while handling JAX's own type error: ours says it all (as `from None`).
    error.__suppress_context__ = True
    return error
