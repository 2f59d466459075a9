"""Python's recursion limit, raised for autograph's own needs and put back after.

Two needs raise the process-wide limit, and share one ledger of them:

- Conversion (``headroom()``) walks trees recursively (parsing, the converters,
  compiling), so the Python recursion it needs grows with how deeply the user's
  function nests, not with where it is called from. Yet the recursion limit counts
  the caller's frames too: a flat function converted deep in a recursive program,
  or under a lowered ``sys.setrecursionlimit``, would fail with "nests too
  deeply". While a conversion runs, the limit is at least the current depth plus
  ``MARGIN`` (the limit a fresh interpreter starts with), so the same function
  converts, or is refused, the same way everywhere. A function that really nests
  too deeply still exhausts that room and raises ``RecursionError`` (which the
  transpiler turns into a ``ConversionError``).
- Converted code (``lend``): the frames of autograph's runtime on a thread's stack
  are lent to it, so that the user's own frames reach the user's limit
  (``runtime/recursion.py``).

The limit is the user's limit plus the most any thread has been lent, and at least
what any running conversion needs; when nothing needs more, the user's limit is
put back (unless someone changed it meanwhile, which makes that the user's limit).
The limit only comes down while every other thread is far below the new limit:
CPython 3.11 cannot recover a thread that a lowered limit leaves past it (a thread
that went deep in the room raised for another), so until then the limit waits
(``pending``), and the next ``settle()`` tries again.
"""

from __future__ import annotations

import contextlib
import sys
import threading

MARGIN = 1000
_SHALLOW = 100     # frames: a thread this far below a limit keeps running when it is set

_lock = threading.Lock()
_user_limit: int | None = None    # the user's limit while autograph raised it
_set_limit: int | None = None     # the limit autograph last set
_conversions: list = []           # the limit each running conversion needs
_lent: dict = {}                  # thread id -> frames lent to that thread
_pending = False                  # the limit is above what is needed (waits to come down)
_bounded: dict = {}               # thread id -> (thread, the most frames it ever holds)


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
    wanted = stack_depth() + margin
    with _lock:
        _conversions.append(wanted)
        _apply()
    try:
        yield
    finally:
        with _lock:
            _conversions.remove(wanted)
            _apply()


def user_limit() -> int:
    """The recursion limit as the user set it (``sys.getrecursionlimit()`` while
    autograph has not raised it)."""
    with _lock:
        current = sys.getrecursionlimit()
        if _user_limit is None or current != _set_limit:
            return current
        return _user_limit


def lend(thread: int, frames: int) -> None:
    """Lend ``frames`` to the thread ``thread`` (0: lend it nothing): the limit is
    the user's plus the most any thread is lent."""
    with _lock:
        if frames:
            _lent[thread] = frames
        else:
            _lent.pop(thread, None)
        _apply()


def any_lent() -> bool:
    """Whether some thread is lent frames, or the limit waits to come down."""
    return bool(_lent) or _pending


def pending() -> bool:
    """Whether the limit is still higher than needed (``settle()`` tries again)."""
    return _pending


def settle() -> None:
    """Bring the limit down to what the ledger asks, if the other threads allow."""
    with _lock:
        _apply()


def _apply() -> None:
    """Set the limit the ledger asks for (holding ``_lock``)."""
    global _user_limit, _set_limit, _pending
    current = sys.getrecursionlimit()
    if _set_limit is not None and current != _set_limit:
        _user_limit = current           # changed meanwhile: the user's new limit
    if _user_limit is None:
        _user_limit = current
    asked = max(_user_limit + max(_lent.values(), default=0), *_conversions, _user_limit)
    wanted = asked
    if wanted < current and not _other_threads_below(wanted):
        wanted = current
    if wanted != current:
        try:
            sys.setrecursionlimit(wanted)
        except RecursionError:          # lower than this thread's depth: keep it
            pass
    now = sys.getrecursionlimit()
    _pending = now > asked
    if not _conversions and not _lent and now == _user_limit:
        _user_limit = _set_limit = None
        return
    _set_limit = now


def bounded_thread(frames: int) -> None:
    """Declare that the calling thread (one of autograph's own, such as the disk
    cache's writer) never holds more than ``frames`` frames, C calls included: a
    limit above that may come down while it runs, however shallow the limit."""
    thread = threading.current_thread()
    with _lock:
        _bounded[thread.ident] = (thread, frames)


def unbounded_thread() -> None:
    """The calling thread, about to end, is no longer declared (``bounded_thread``)."""
    with _lock:
        _bounded.pop(threading.get_ident(), None)


def _other_threads_below(limit: int) -> bool:
    """Whether every other thread's stack holds fewer than ``limit - _SHALLOW``
    frames: far enough below ``limit`` (C calls count against it too) to keep
    running when the limit comes down to it. A thread declared bounded
    (``bounded_thread``) needs only its bound below ``limit``."""
    frames = sys._current_frames()
    # This thread's frame dropped first: held by a local, it would be a reference
    # cycle (the frame holds its locals) left for the garbage collector.
    del frames[threading.get_ident()]
    room = limit - _SHALLOW
    for ident, frame in frames.items():
        declared = _bounded.get(ident)
        if declared is not None and declared[0].is_alive() and declared[0].ident == ident:
            if declared[1] < limit:
                continue
        depth = 0
        while frame is not None:
            depth += 1
            if depth >= room:
                return False
            frame = frame.f_back
    return True
