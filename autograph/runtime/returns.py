"""The return value of a function with early returns, while staged.

The return converter keeps the value in ``retval`` (starting as
``UndefinedReturn``) and a flag ``did_return``. ``retval`` is only read once a
``return`` ran, so where a staged ``if`` or loop still holds it unset, a
placeholder of the type the returns give (zeros) stands in. All returns of a
staged region must give the same type; when they do not, the error gives both
types, and the converted function's boundary adds a note naming the two
``return`` lines (it reads the generated code then, never while tracing).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from autograph.errors import StagingTypeError
from autograph.runtime.undefined import is_undefined_return

_RETURN_NAME = re.compile(r"retval(_\d+)?$")
_MISMATCH = "__autograph_return_mismatch__"


def is_return_value(name: str, where) -> bool:
    """Whether ``name`` is the variable the return converter keeps the value in: a
    generated function on the stack, in the user's file ``where.filename``, starts
    it as ``ag__.UndefinedReturn(name)``. (A user's own variable may have the same
    name.) Reads code objects' names and constants, not their instructions."""
    if not _RETURN_NAME.match(name):
        return False
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if (code.co_filename == where.filename and "UndefinedReturn" in code.co_names
                and name in code.co_consts):
            return True
        frame = frame.f_back
    return False


def check_failed_probe(error: Exception, state) -> None:
    """A staged loop's abstract probe of one iteration (``state.HoleProbe``) failed
    with ``error``, where ``state`` has unbound variables. Without the probe no
    ``UndefinedReturn`` in ``state`` gets a placeholder: raise ``error``, which
    tracing the body again would raise, unless it is the ``UnboundLocalError`` of
    reading such a return value (``stageable.require_defined`` then says what to
    change). With no ``UndefinedReturn``, nothing to fill: return."""
    if not any(is_undefined_return(v) for v in state):
        return
    if isinstance(error, UnboundLocalError) and any(
            is_undefined_return(v) and f"'{v.name}'" in str(error) for v in state):
        return
    raise error


@dataclass(frozen=True)
class ReturnMismatch:
    """Returns of different types that meet in a staged ``if``, recorded on its error:
    the value variable's ``name``, its type from each branch (``types``, described)
    and the code of each branch function (``branches``). The boundary of the
    converted function names the ``return`` lines from them (error_notes.py)."""

    name: str
    types: tuple
    branches: tuple


def mismatch_error(name, first, second, if_true, if_false, where):
    """The error for returns of different types meeting in a staged ``if``."""
    error = StagingTypeError(
        f"the function returns {_kind(first)} on one path but {_kind(second)} on "
        "another, and both meet in a staged `if`/loop (its condition is traced). Every "
        "`return` of a staged region must give the same pytree structure, shape and "
        "dtype; make the returns agree (e.g. return an array on every path, with "
        ".astype for the dtype).", where.filename, where.lineno)
    setattr(error, _MISMATCH, ReturnMismatch(
        name, (_kind(first), _kind(second)), (if_true.__code__, if_false.__code__)))
    return error


def mismatch_of(error: BaseException) -> ReturnMismatch | None:
    """What ``mismatch_error`` recorded on ``error``, or None."""
    return getattr(error, _MISMATCH, None)


def _kind(description):
    return "None" if description == "a pytree None" else description
