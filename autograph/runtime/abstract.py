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
from autograph.runtime.trace_context import weak_cast
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
    Python scalar), which NumPy-style promotion joins as Python would, without
    changing the dtype of a strongly typed side (``_joinable``)."""
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
            joinable = _joinable(x, y)
            found.append((name, describe(x), describe(y), joinable))
            break
    return found


def _joinable(x, y) -> bool:
    """Whether two leaves of one shape and different dtypes join by promotion: both
    weakly typed (``1`` and ``2.5``), or one weak and the promoted dtype that of the
    strong one (``0`` and a float32 array). A strong int32 array meeting a weak
    float32 (``x + 0.5``) would become float32 where Python keeps it int32 (and
    lose digits beyond 2**24): not joinable."""
    if x.shape != y.shape or not (x.weak_type or y.weak_type):
        return False
    if x.weak_type and y.weak_type:
        return True
    strong = y if x.weak_type else x
    return jnp.result_type(_example(x), _example(y)) == strong.dtype


def _tree_repr(tree) -> str:
    leaves, treedef = tree_util.tree_flatten(tree)
    if treedef == tree_util.tree_structure(0):
        return describe(leaves[0])
    return f"a pytree {tree_util.tree_unflatten(treedef, [describe(x) for x in leaves])}"


def joined_dtypes(first, second):
    """The promoted type of each leaf of two abstract states of equal structure, a
    ``jax.ShapeDtypeStruct``: weakly typed only where both are (``0`` in one branch
    and a weak float32 in the other join as a weak float32, as Python's value is
    in either branch)."""
    return tree_util.tree_map(
        lambda x, y: jax.ShapeDtypeStruct(
            x.shape, jnp.result_type(_example(x), _example(y)),
            weak_type=x.weak_type and y.weak_type), first, second)


def check_python_scalars_fit(python_leaves, dtypes, names, where, construct):
    """Raise a ``StagingTypeError`` at ``where`` if a Python scalar a branch gives
    does not fit the joined dtype (``unfit_python_scalar``)."""
    unfit = unfit_python_scalar(python_leaves, dtypes)
    if unfit is None:
        return
    i, value, dtype = unfit
    kind = np.dtype(dtype).name
    raise mismatch_error(
        f"has a different type in the two branches of this staged {construct}",
        names[i], f"the Python {type(value).__name__} {value!r}",
        f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} array",
        where, f"Joined, {value!r} would become a {kind} out of its range, which Python's "
        "value is not; convert the array side (e.g. with .astype) or compute the value "
        "outside the branch.", ("in one branch", "in the other"))


def unfit_python_scalar(python_leaves, dtypes):
    """``(output position, value, dtype)`` of the first Python scalar a branch gives
    (``python_leaves``: ``(treedef, {leaf position: value})`` per output) that the
    joined ``dtypes`` (``joined_dtypes`` per output, or None) cannot hold: an int
    out of a strongly typed integer dtype's range (``-1`` meeting a uint8 array
    would be 255) or a number a float dtype makes infinite; None when all fit."""
    if dtypes is None:
        return None
    for i, ((treedef, scalars), target) in enumerate(zip(python_leaves, dtypes,
                                                         strict=True)):
        types = tree_util.tree_leaves(target)
        if not scalars or treedef.num_leaves != len(types):
            continue
        for k, value in scalars.items():
            to = types[k]
            if to.weak_type or isinstance(value, bool):
                continue
            kind = np.dtype(to.dtype).kind
            if kind in "iu" and isinstance(value, int):
                info = np.iinfo(to.dtype)
                if not info.min <= value <= info.max:
                    return i, value, to.dtype
            elif kind in "fc" and isinstance(value, int | float) and np.isfinite(value):
                with np.errstate(over="ignore"):
                    if not np.isfinite(np.asarray(value, to.dtype)):
                        return i, value, to.dtype
    return None


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


def cast_to(tree, types):
    """``tree`` with each leaf converted to the dtype and weak type of the matching
    leaf of ``types`` (``joined_dtypes``)."""
    def cast(leaf, to):
        aval = jax.typeof(leaf)
        if aval.dtype == to.dtype and aval.weak_type == to.weak_type:
            return leaf
        if to.weak_type:
            return weak_cast(leaf, to.dtype)
        return lax.convert_element_type(leaf, to.dtype)
    return tree_util.tree_map(cast, tree, types)


def run_or_keep(pred, run, carry):
    """``run(carry)`` where ``pred`` holds, else ``carry``, as one ``lax.cond``, each
    output leaf strongly typed where either branch's is: the join of the two types,
    as a loop's carry is promoted. ``lax.cond`` itself gives the weak type of one
    branch (the no-op's, in JAX 0.10).

    Before: ``lam = 0.0`` that a loop with ``break`` sets to a float32 array came out
    of the loop weakly typed (the no-op after the exit kept the start's weak type).
    After: float32, as Python's ``lam`` is once the body has run."""
    ran = []

    def traced_run(c):
        out = run(c)
        ran.append([_is_weak(x) for x in tree_util.tree_leaves(out)])
        return out

    out = lax.cond(pred, traced_run, lambda c: c, carry)
    leaves, treedef = tree_util.tree_flatten(out)
    kept = [_is_weak(x) for x in tree_util.tree_leaves(carry)]
    if not ran or len(ran[-1]) != len(leaves) or len(kept) != len(leaves):
        return out
    joined = [lax.convert_element_type(x, x.dtype)
              if _is_weak(x) and not (r and k) else x
              for x, r, k in zip(leaves, ran[-1], kept, strict=True)]
    return tree_util.tree_unflatten(treedef, joined)


def _is_weak(value) -> bool:
    try:
        return jax.typeof(value).weak_type
    except TypeError:
        return False


def structure_hint(first, second):
    """What to change where a variable's pytree structure differs between the
    branches of a staged ``if`` in one of two common ways, or None: ``None`` in one
    branch (``best_i = None`` before the loop that sets it), or a list whose length
    differs (an ``append`` in one branch only)."""
    none = tree_util.tree_structure(None)
    trees = [tree_util.tree_structure(first), tree_util.tree_structure(second)]
    if none in trees:
        return ("It is None in one branch: give it a value of the other branch's type "
                "before the `if` (e.g. -1, 0.0 or jnp.zeros(...)), and test that value "
                "where the program tests `is None`.")
    if all(type(x) is list for x in (first, second)) and len(first) != len(second):
        return ("It is a list whose length differs between the branches (an append or "
                "pop in one), and a staged `if` cannot give a variable two lengths. In a "
                "loop, a list the function itself makes and grows under a traced "
                "condition is staged as a buffer (read it with len() and autograph.stack); "
                "elsewhere append in both branches, or keep an array of fixed size and a "
                "mask (jnp.where).")
    return None


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
