"""Stack room for conversion, whatever the depth of the caller's stack.

Conversion walks trees recursively (parsing, the converters, compiling), so the
Python recursion it needs grows with how deeply the user's function nests, not
with where it is called from. Yet the recursion limit counts the caller's frames
too: a flat function converted deep in a recursive program, or under a lowered
``sys.setrecursionlimit``, would fail with "nests too deeply". ``headroom()``
gives the conversion its own room: while one runs, the limit is at least the
current depth plus ``MARGIN`` (the limit a fresh interpreter starts with), so
the same function converts, or is refused, the same way everywhere. A function
that really nests too deeply still exhausts that room and raises
``RecursionError`` (which the transpiler turns into a ``ConversionError``).

The limit is process-wide: concurrent conversions share one raise, and the last
to finish puts back the limit it found (unless someone changed it meanwhile).
"""

from __future__ import annotations

import contextlib
import sys
import threading

MARGIN = 1000

_lock = threading.Lock()
_active = 0
_saved_limit = 0
_raised_limit = 0


def stack_depth() -> int:
    """The number of Python frames on the calling thread's stack."""
    depth = 0
    frame = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


@contextlib.contextmanager
def headroom(margin: int = MARGIN):
    """While the ``with`` block runs, the recursion limit is at least the caller's
    depth plus ``margin`` (never lowered)."""
    global _active, _saved_limit, _raised_limit
    wanted = stack_depth() + margin
    with _lock:
        current = sys.getrecursionlimit()
        if _active == 0:
            _saved_limit = current
        _active += 1
        if wanted > current:
            sys.setrecursionlimit(wanted)
            _raised_limit = wanted
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _raised_limit and sys.getrecursionlimit() == _raised_limit:
                sys.setrecursionlimit(_saved_limit)
            if _active == 0:
                _raised_limit = 0
