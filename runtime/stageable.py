"""What a staged branch or loop cannot do, found when it is staged, as a clear error.

Run as Python, a branch or loop can do anything the original does. Staged, its
state must have a value before it (a loop may run zero times) and be arrays or
pytrees of them, and its body must not assign ``global``/``nonlocal`` variables,
``del`` what it carries, or sit inside a ``try`` whose ``except`` would only ever
see errors raised while tracing. Each check raises a ``ConversionError`` at the
user's line that says what to change.
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import types

import jax
import numpy as np
from jax import tree_util

from autograph.errors import ConversionError
from autograph.runtime.undefined import is_undefined


def require_defined(state, names, where, construct: str):
    """Raise if a variable carried by a staged loop has no value before it."""
    for name, value in zip(names, state, strict=True):
        if is_undefined(value):
            raise ConversionError(
                f"'{name}' is first assigned inside the {construct} and used after it "
                "(or in a later iteration), but the loop is staged because its condition "
                "or iterable is traced, so it may run zero times. Give "
                f"'{name}' a value before the loop.", where.filename, where.lineno)


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
