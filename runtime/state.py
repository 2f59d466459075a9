"""The state that staged branches and loops carry: tuples of pytrees, checked by name.

Generated functions take their state variables as parameters and return them: a
bare value for one variable, a tuple for several, nothing for none. These helpers
move between that form and a tuple, and explain, by variable name and the user's
line, a state that JAX cannot carry.
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util

from autograph.errors import ConversionError, StagingTypeError
from autograph.runtime.tracing import describe
from autograph.runtime.undefined import Undefined, is_undefined


def as_tuple(value, count: int) -> tuple:
    """The generated form of ``count`` state values, as a tuple."""
    if count == 0:
        return ()
    if count == 1:
        return (value,)
    return tuple(value)


def from_tuple(values: tuple):
    """A tuple of state values, in the generated form."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return tuple(values)


def require_defined(state, names, where, construct: str):
    """Raise if a variable carried by a staged loop has no value before it."""
    for name, value in zip(names, state, strict=True):
        if is_undefined(value):
            raise ConversionError(
                f"'{name}' is first assigned inside the {construct} and used after it "
                "(or in a later iteration), but the loop is staged because its condition "
                "or iterable is traced, so it may run zero times. Give "
                f"'{name}' a value before the loop.", where.filename, where.lineno)


def fill_undefined(body_fun, state, item):
    """Give the state variables that are unbound before a loop known to run at least
    once the zeros of the type one iteration gives them (``body_fun(item, state)``
    returns the new state), so the staged loop can carry them. Variables a first
    iteration may leave unbound stay ``Undefined``."""
    holes = [i for i, value in enumerate(state) if is_undefined(value)]
    if not holes:
        return state

    def one_iteration(item, defined):
        full = list(state)
        for i, value in zip((i for i in range(len(state)) if i not in holes), defined,
                            strict=True):
            full[i] = value
        out = body_fun(item, tuple(full))
        return tuple(None if is_undefined(out[i]) else out[i] for i in holes)

    defined = tuple(v for i, v in enumerate(state) if i not in holes)
    shapes = jax.eval_shape(one_iteration, item, defined)
    filled = list(state)
    for i, shape in zip(holes, shapes, strict=True):
        if shape is not None:
            filled[i] = tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shape)
    return tuple(filled)


def through_unbound(stage, run, state, *abstract_args):
    """``stage(state)`` (a staged loop) for a state in which the variables that are
    unbound before the loop and that one iteration (``run(state, *abstract_args)``)
    leaves unbound are carried as ``None``, an empty pytree, and come out unbound
    again: a ``return`` under a branch that Python decides as not taken, say, never
    binds ``retval`` in the staged loop."""
    if not any(is_undefined(v) for v in state):
        return stage(state)
    holes = {i: v for i, v in enumerate(state) if is_undefined(v)}

    def one_iteration(defined, *args):
        it = iter(defined)
        full = tuple(holes[i] if i in holes else next(it) for i in range(len(state)))
        out = run(full, *args)
        return tuple(is_undefined(out[i]) for i in holes)

    defined = tuple(v for i, v in enumerate(state) if i not in holes)
    still_unbound = []
    try:
        jax.eval_shape(lambda d, *a: still_unbound.append(one_iteration(d, *a)),
                       defined, *abstract_args)
    except Exception:  # the body needs concrete values: let the staging path decide
        return stage(state)
    through = {i for i, unbound in zip(holes, still_unbound[0], strict=True) if unbound}
    if not through:
        return stage(state)
    out = stage(tuple(None if i in through else v for i, v in enumerate(state)))
    return tuple(holes[i] if i in through else v for i, v in enumerate(out))


def check_carriable(state, names, where, construct: str):
    """Raise if a state variable holds something JAX cannot stage (a str, an object)."""
    for name, value in zip(names, state, strict=True):
        for leaf in tree_util.tree_leaves(value):
            if not _is_array_like(leaf):
                raise ConversionError(
                    f"'{name}' holds a {type(leaf).__name__} ({leaf!r:.60}), which the staged "
                    f"{construct} cannot carry: only arrays, numbers and pytrees of them "
                    f"can. Keep '{name}' out of the {construct}, or make it an array.",
                    where.filename, where.lineno)


def check_stageable(bodies, where, construct: str):
    """Raise for what a staged branch or loop cannot do, found only now that it is
    staged: a body that assigns a ``global`` or ``nonlocal`` variable, or a staged
    statement inside a ``try`` with ``except`` clauses (run as Python, both work)."""
    once = "once while tracing (both branches of an `if`)" if construct == "if" else (
        "once while tracing")
    for body in bodies:
        found = _outer_write(getattr(body, "__code__", None))
        if found is None:
            continue
        name, kind = found
        raise ConversionError(
            f"'{name}' is declared `{kind}` and assigned inside this {construct}, which is "
            f"staged because its condition or iterable is traced. A staged {construct} "
            f"runs its body {once}, not when the program runs, so the assignment cannot "
            f"be staged. Make '{name}' a local variable of the function (read it into a "
            "local before, assign the result after), or return the new value.",
            where.filename, where.lineno)
    if construct in ("while loop", "for loop"):
        _check_no_deleted_carry(bodies[-1], where, construct)
    try_line = enclosing_try(where.filename, where.lineno)
    if try_line is not None:
        raise ConversionError(
            f"this {construct} is staged because its condition or iterable is traced, and "
            f"it lies inside the `try` at line {try_line}, whose `except` clauses would "
            "only see errors raised while the staged code is traced (every branch is "
            "traced, whatever the condition), never errors of the computation when it "
            "runs. Move the `try` into the code that needs it "
            "outside the staged region, or replace the exception by a value check "
            "(jnp.where, or an `assert` / jax.experimental.checkify for run-time checks).",
            where.filename, where.lineno)


def _check_no_deleted_carry(loop_body, where, construct):
    code = getattr(loop_body, "__code__", None)
    if code is None:
        return
    carried = code.co_varnames[(construct == "for loop"):code.co_argcount]
    for instruction in dis.get_instructions(code):
        if instruction.opname == "DELETE_FAST" and instruction.argval in carried:
            name = instruction.argval
            raise ConversionError(
                f"'{name}' is deleted (`del {name}`) inside this {construct}, which carries "
                "it from one iteration to the next and is staged because its condition or "
                f"iterable is traced: a staged loop needs a value for '{name}' at the end of "
                f"every iteration. Assign '{name}' a new value instead, or `del` it after "
                "the loop.", where.filename, where.lineno)


def enclosing_try(filename: str, lineno: int):
    """The line of the ``try`` statement with ``except`` clauses whose body holds line
    ``lineno`` of ``filename`` in the same function, or None."""
    source = "".join(linecache.getlines(filename))
    if not source:
        return None
    for start, end, try_line, scope in _try_bodies(filename, source):
        if start <= lineno <= end and _scope_of(filename, source, lineno) == scope:
            return try_line
    return None


@functools.lru_cache(maxsize=64)
def _parsed_scopes(filename, source):
    """``(try bodies, function spans)`` of a source file, or empty on a parse error."""
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError):
        return (), ()
    functions = tuple(
        (node.lineno, node.end_lineno) for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
    return tuple(
        (node.body[0].lineno, node.body[-1].end_lineno, node.lineno, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) and node.handlers
    ), functions


def _try_bodies(filename, source):
    tries, _ = _parsed_scopes(filename, source)
    return [(start, end, line, _scope_of(filename, source, anchor))
            for start, end, line, anchor in tries]


def _scope_of(filename, source, lineno):
    """The span of the innermost function holding ``lineno`` (None: module level)."""
    _, functions = _parsed_scopes(filename, source)
    spans = [(a, b) for a, b in functions if a <= lineno <= b]
    return min(spans, key=lambda span: span[1] - span[0]) if spans else None


def _outer_write(code, outside=None):
    """``(name, 'global' | 'nonlocal')`` for the first variable of an outer scope that
    ``code`` (or code nested in it) assigns or deletes, or None."""
    if code is None:
        return None
    outside = set(code.co_freevars) if outside is None else outside & set(code.co_freevars)
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return instruction.argval, "global"
        if instruction.opname in ("STORE_DEREF", "DELETE_DEREF") and (
                instruction.argval in outside):
            return instruction.argval, "nonlocal"
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found = _outer_write(const, outside)
            if found is not None:
                return found
    return None


def _is_array_like(leaf) -> bool:
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
        return True
    try:
        jax.typeof(leaf)
        return True
    except TypeError:
        return False


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


__all__ = [
    "Undefined",
    "abstract",
    "as_tuple",
    "cast_to",
    "check_carriable",
    "check_stageable",
    "enclosing_try",
    "from_tuple",
    "joined_dtypes",
    "mismatch_error",
    "mismatches",
    "placeholder",
    "require_defined",
]
