"""Python's recursion limit, counted in the user's frames.

A call of a converted function runs in more Python frames than the original's
one: the function (and at an entry point the ``convert`` wrapper), and on the way
to its next call the runtime operator and the generated helper of each block it is
in (``if_stmt`` and ``if_false``). Python's limit counts every frame, so a
recursive function, converted, would stop at about a quarter of the original's
depth (250 levels instead of 1000 at the default limit).

The runtime's frames are lent to the limit instead. Before each converted call
``near_limit()`` asks, for the cost of one small C recursion, whether fewer than
``PROBE_DEPTH`` frames are left; only then ``lend`` walks the stack, counts the
frames that are autograph's own (the runtime's, and the generated helpers and
operand lambdas it calls) and has the limit raised by that many, plus room for the
next ``2 * PROBE_DEPTH`` frames (the ledger is in
``autograph/headroom.py``). The user's frames, the converted functions' and those
of any code they call, converted or not, reach the user's limit as in Python, where
Python raises ``RecursionError``: a recursion Python runs runs converted (to within
``PROBE_DEPTH`` frames), and one that fails in Python fails converted. The user's
frames never get more room than in Python (the runtime's frames are counted when
lent, and more of them only take room); code that is not converted, recursing
deep below a deep converted recursion, may get less (the runtime's frames pushed
since the last lending are not lent yet). What was lent is repaid when the
outermost ``convert`` call that lent it returns. While frames are lent,
``sys.getrecursionlimit()`` shows the raised limit.

Why this is sound, given that CPython 3.11 counts Python frames and C recursion
against one limit: the original's recursive calls run inline in the interpreter
(no C stack); so do converted ones (``ag__.converted_call(f)(x - 1)`` returns the
converted function and the user's frame calls it), and the ``convert`` wrapper adds
one C-level call (it calls the function with ``*args``), as a decorated function in
plain Python does, whose recursion Python allows up to the same limit. The lent
frames of an ``if`` are called inline (``if_stmt`` spells the branch's arguments
out instead of ``*state``), so lending them adds no C stack.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from autograph import headroom
from autograph.runtime.trace_context import FRAMES

PROBE_DEPTH = 32


def _nested_types(depth):
    nested = (int,)
    for _ in range(depth - 1):
        nested = (nested,)
    return nested


# `isinstance(0, NESTED)` recurses PROBE_DEPTH times in C, each level counted
# against the recursion limit: it raises RecursionError exactly when fewer are left.
NESTED = _nested_types(PROBE_DEPTH)
# Codes whose callee is a frame of the user's (converted_call, the convert wrapper).
ENTRY_CODES: set = set()
ACTIVE = [False]          # whether some thread holds lent frames (read without a lock)


def _own_files() -> frozenset:
    here = Path(__file__)
    names = {p.name for p in here.resolve().parent.glob("*.py")}
    folders = {here.parent, here.resolve().parent}
    api = here.parent.parent / "api.py"
    return frozenset({str(folder / name) for folder in folders for name in names}
                     | {str(api), str(api.resolve())})


_OWN_FILES = _own_files()


def near_limit() -> bool:
    """Whether fewer than ``PROBE_DEPTH`` frames are left before the recursion limit."""
    try:
        isinstance(0, NESTED)
    except RecursionError:
        return True
    return False


PYTHON_MESSAGE = "maximum recursion depth exceeded"
PYTHON_MESSAGE_ARGS = (PYTHON_MESSAGE,)


def lend(frame, is_converted_code) -> None:
    """Near the limit at ``frame`` (a converted call about to call the function):
    lend the thread the frames of autograph's on its stack, plus room for the next
    ``2 * PROBE_DEPTH`` frames unless the user's own frames are near the user's
    limit (then just the runtime's, so Python's ``RecursionError`` comes where it
    would). ``is_converted_code(code)``: whether
    ``code`` is generated code (a converted function or one of its helpers).

    Lending runs Python code of its own; where the stack has no room left even for
    that, the user's recursion is out of room as Python's would be: it raises
    Python's ``RecursionError`` (its message, no chained probe error), not the one
    of whatever comparison or call of the ledger ran out."""
    try:
        _lend(frame, is_converted_code)
    except RecursionError:
        raise RecursionError(PYTHON_MESSAGE) from None


def _lend(frame, is_converted_code) -> None:
    raw = own = 0
    owner = None
    current = frame
    while current is not None:
        raw += 1
        code = current.f_code
        caller = current.f_back
        if code.co_filename in _OWN_FILES:
            own += 1
            if code in ENTRY_CODES and code.co_name == "wrapper":
                owner = id(current)
        elif (caller is not None and caller.f_code.co_filename in _OWN_FILES
              and caller.f_code not in ENTRY_CODES and is_converted_code(code)):
            own += 1          # a generated helper or operand, called by the runtime
        current = caller
    if owner is None:
        return    # no `convert` call on this stack would repay it (a bare Transpiler's)
    if raw - own + PROBE_DEPTH >= headroom.user_limit():
        # The user's frames are near the user's limit: lend exactly the runtime's
        # frames, no room ahead (the probe fires again at the next call), so the
        # user's frames meet Python's RecursionError where the original's would.
        room = 0
    else:
        room = 2 * PROBE_DEPTH
    # The owner is known by id, not held: a held frame would keep the user's locals
    # alive after a RecursionError unwinds them (it is on the stack until it repays).
    FRAMES.lending = owner
    ACTIVE[0] = True
    headroom.lend(threading.get_ident(), own + room)


def repay(frame) -> None:
    """When the ``convert`` call at ``frame`` returns (while some thread holds lent
    frames): if it is the outermost one of a lending on this thread, repay it."""
    lending = FRAMES.lending
    if lending is not None and lending == id(frame):
        FRAMES.lending = None
        headroom.lend(threading.get_ident(), 0)
    elif lending is None and headroom.pending() and _shallow():
        headroom.settle()     # a thread that was deeper then may be done by now
    ACTIVE[0] = headroom.any_lent()


def _shallow() -> bool:
    """Whether the calling thread's stack holds fewer than 200 frames."""
    try:
        sys._getframe(200)
    except ValueError:
        return True
    return False


def stopping_error(error: RecursionError, region):
    """The error for a recursion through a staged region (``region``) that ran out of
    the recursion limit while tracing: its stopping test is traced."""
    from autograph.errors import ConversionError

    where = region.where
    new = ConversionError(
        f"this recursion passes through the staged {region.construct} here at every "
        "level and ran out of Python's recursion limit while tracing. Its condition is "
        "traced, and a staged branch is traced whatever the condition, so a recursion "
        "whose stopping test is traced never stops while tracing. Stop it on a Python "
        "value (a static argument: jax.jit(f, static_argnums=...)), or write it as a "
        "loop (while/for), which autograph stages.",
        getattr(where, "filename", None), getattr(where, "lineno", None))
    new.__suppress_context__ = True
    return new
