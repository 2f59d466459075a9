"""What a staged branch or loop cannot do, found when it is staged, as a clear error.

Run as Python, a branch or loop can do anything the original does. Staged, its
state must have a value before it (a loop may run zero times) and be arrays or
pytrees of them, and its body must not assign ``global``/``nonlocal`` variables,
``del`` what it carries, or sit inside a ``try`` whose ``except`` would only ever
see errors raised while tracing. Each check raises a ``ConversionError`` at the
user's line that says what to change. What the user's code does is known from
conversion (``StagingObstacles``): nothing here reads source or bytecode.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np
from jax import tree_util

from autograph.errors import ConversionError
from autograph.runtime.handlers import try_error_text
from autograph.runtime.undefined import is_undefined, is_undefined_return


def require_defined(state, names, where, construct: str):
    """Raise if a variable carried by a staged loop has no value before it."""
    for name, value in zip(names, state, strict=True):
        if is_undefined_return(value):   # nothing after the loop reads it
            raise ConversionError(
                f"'{name}' may be read before it is assigned in an iteration of this "
                f"{construct}: which path the iteration takes depends on traced values. "
                f"Give '{name}' a value before the loop.", where.filename, where.lineno)
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


@dataclass(frozen=True)
class StagingObstacles:
    """What the converters found in the user's code that a staged branch or loop
    cannot honour (``autograph/analysis/stageability.py``), passed to the runtime
    call as keywords where it holds: ``in_try``, the line of a ``try`` with
    ``except`` clauses around it in the same function; ``assigns_global`` /
    ``assigns_nonlocal``, the first such variable its body assigns; ``deletes``,
    the first variable a loop body deletes that the loop carries; ``item_writes``,
    the carried variables whose items the block assigns and whose object something
    else may hold too."""

    in_try: int | None = None
    assigns_global: str | None = None
    assigns_nonlocal: str | None = None
    deletes: str | None = None
    item_writes: tuple = ()


NO_OBSTACLES = StagingObstacles()


def check_item_writes(values, names, written, where, construct: str):
    """Raise where a staged block assigns items of a NumPy array that something else
    holds too (``written``: such variables, of ``names``). Python writes into that
    array, and every holder sees the change; staged, the block's value is traced,
    NumPy cannot hold it, and the write makes a new JAX array the other holders
    never see. (A loop of static trip count runs unrolled instead, where the write
    itself is refused if its value is traced: ``slices.setitem``'s ``held``.)"""
    for name, value in zip(names, values, strict=False):
        if name in written and isinstance(value, np.ndarray):
            raise ConversionError(
                f"'{name}' holds a NumPy array that something else may hold too (the "
                f"caller that passed it in, another name, a view of it, a list it was "
                f"put in), and this {construct} assigns its items ({name}[...] = ...). "
                f"Staged (its condition or trip count is traced), the {construct} writes "
                "traced values, which NumPy cannot hold: the write would make a new JAX "
                "array that the other holders never see, where Python changes the one "
                f"array they all hold. Make a JAX array that this name alone holds "
                f"before it (`{name} = jnp.array({name})`) and return it to the code "
                "that needs it.", where.filename, where.lineno)


def check_stageable(obstacles: StagingObstacles, where, construct: str):
    """Raise for what a staged branch or loop cannot do, now that it is staged: a
    body that assigns a ``global`` or ``nonlocal`` variable, a loop body that
    deletes a variable the loop carries, a staged statement inside a ``try`` with
    ``except`` clauses (run as Python, all of them work)."""
    once = "once while tracing (both branches of an `if`)" if construct == "if" else (
        "once while tracing")
    written = obstacles.assigns_global or obstacles.assigns_nonlocal
    if written is not None:
        kind = "global" if obstacles.assigns_global is not None else "nonlocal"
        raise ConversionError(
            f"'{written}' is declared `{kind}` and assigned inside this {construct}, which "
            f"is staged because its condition or iterable is traced. A staged {construct} "
            f"runs its body {once}, not when the program runs, so the assignment cannot "
            f"be staged. Make '{written}' a local variable of the function (read it into a "
            "local before, assign the result after), or return the new value.",
            where.filename, where.lineno)
    name = obstacles.deletes
    if name is not None and construct in ("while loop", "for loop"):
        raise ConversionError(
            f"'{name}' is deleted (`del {name}`) inside this {construct}, which carries "
            "it from one iteration to the next and is staged because its condition or "
            f"iterable is traced: a staged loop needs a value for '{name}' at the end of "
            f"every iteration. Assign '{name}' a new value instead, or `del` it after "
            "the loop.", where.filename, where.lineno)
    if obstacles.in_try is not None:
        raise ConversionError(try_error_text(
            f"the `try` at line {obstacles.in_try}",
            f"this {construct}, staged because its condition or iterable is traced, "
            "lies in its body"),
            where.filename, where.lineno)


def _is_array_like(leaf) -> bool:
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
        return True
    try:
        jax.typeof(leaf)
        return True
    except TypeError:
        return False
