"""The return value of a function with early returns, while staged.

The return converter keeps the value in ``retval`` (starting as
``UndefinedReturn``) and a flag ``did_return``. ``retval`` is only read once a
``return`` ran, so where a staged ``if`` or loop still holds it unset, a
placeholder of the type the returns give (zeros) stands in. All returns of a
staged region must give the same type; when they do not, the error names the two
``return`` lines and their types.
"""

from __future__ import annotations

import dis
import linecache
import re
import sys

import jax

from autograph.errors import StagingTypeError
from autograph.runtime.abstract import placeholder
from autograph.runtime.state import split_unbound
from autograph.runtime.undefined import is_undefined, is_undefined_return

_RETURN_NAME = re.compile(r"retval(_\d+)?$")


def is_return_name(name: str) -> bool:
    """Whether ``name`` is the variable the return converter keeps the value in."""
    return bool(_RETURN_NAME.match(name))


def fill_undefined_returns(iteration, state, item):
    """``state`` with each ``UndefinedReturn`` replaced by zeros of the type that
    ``iteration(state, item)`` (a loop body giving the new state tuple) gives it."""
    if not any(is_undefined_return(v) for v in state):
        return state
    # Every unbound value stays out of the abstract trace, not only the return's.
    operands, _, rebuild = split_unbound(state)
    unset = set()

    def probe(ops, item):
        out = list(iteration(rebuild(ops), item))
        for i, value in enumerate(out):
            if is_undefined(value):
                unset.add(i)
                out[i] = None
        return tuple(out)

    out = jax.eval_shape(probe, operands, item)
    return tuple(placeholder(out[i])
                 if is_undefined_return(value) and i not in unset else value
                 for i, value in enumerate(state))


def fill_for_branches(true_run, false_run, state, operands):
    """For a staged ``if``: ``{position: placeholder}`` for each ``UndefinedReturn``
    that one branch sets and the other leaves unset."""
    if not any(is_undefined_return(v) for v in state):
        return {}
    outs, unset = [], []
    for run in (true_run, false_run):
        missing = set()

        def probe(ops, run=run, missing=missing):
            out = list(run(ops))
            for i, value in enumerate(out):
                if is_undefined(value):
                    missing.add(i)
                    out[i] = None
            return tuple(out)

        outs.append(jax.eval_shape(probe, operands))
        unset.append(missing)
    fill = {}
    for i in unset[0] ^ unset[1]:
        if is_undefined_return(state[i]):
            fill[i] = placeholder(outs[1][i] if i in unset[0] else outs[0][i])
    return fill


def mismatch_error(name, first, second, if_true, if_false, where):
    """The error for returns of different types meeting in a staged ``if``, or None
    if ``name`` is not assigned by any ``return``."""
    true_lines = _store_lines(if_true.__code__, name)
    false_lines = _store_lines(if_false.__code__, name)
    if not true_lines or not false_lines:
        everywhere = set()
        frame = sys._getframe(1)
        while frame is not None:  # the generated functions around the `if`
            if frame.f_code.co_filename == where.filename:
                everywhere |= _store_lines(frame.f_code, name)
            frame = frame.f_back
        if not true_lines:
            true_lines = everywhere - false_lines
        if not false_lines:
            false_lines = everywhere - true_lines
    true_where, false_where = _where(true_lines, where), _where(false_lines, where)
    if true_where is None and false_where is None:
        return None  # a user's own variable that happens to have this name
    return StagingTypeError(
        f"the function returns {_kind(first)} {true_where or 'from an earlier `return`'} "
        f"but {_kind(second)} {false_where or 'from an earlier `return`'}, and both meet "
        "in a staged "
        "`if`/loop (its condition is traced). Every `return` of a staged region must give "
        "the same pytree structure, shape and dtype; make the returns agree (e.g. "
        "return an array on every path, with .astype for the dtype).",
        where.filename, where.lineno)


def _kind(description):
    return "None" if description == "a pytree None" else description


def _where(lines, where):
    parts = []
    for line in sorted(lines):
        text = linecache.getline(where.filename, line).strip()
        if text.startswith("return"):
            parts.append(f"at line {line} (`{text}`)")
        elif text.startswith(("def ", "async def ")):
            parts.append(f"by falling off the end of the function defined at line {line}")
    return " or ".join(parts) or None


def _store_lines(code, name) -> set:
    """Lines of ``code`` (and the functions nested in it) that assign ``name``."""
    lines = set()
    for instr in dis.get_instructions(code):
        if instr.opname.startswith("STORE_") and instr.argval == name:
            if instr.positions is not None and instr.positions.lineno is not None:
                lines.add(instr.positions.lineno)
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            lines |= _store_lines(const, name)
    return lines
