"""Files written off the caller's path: the disk cache's entries, a moment later.

A conversion that misses the disk cache hands its entry here (``submit``) and
returns: the first call it is part of does not wait for a file to be created,
written and renamed. One daemon thread per process writes what was handed in,
``DELAY`` seconds later and in a batch (by then the caller is, as a rule,
compiling with XLA, which releases the GIL). Until an entry is written,
``pending(path)`` gives its value, so the process reads its own entries back at
once.

Nothing handed in is lost at a normal exit, and no file is left half written:
an ``atexit`` handler waits for the batch being written and writes what is left
(each write is atomic, as ``DiskCache.store`` makes it). ``flush()`` does the same
on demand. A forked child starts with nothing pending (its parent writes those).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable

from autograph import headroom

DELAY = 0.02        # seconds between a first hand-in and its batch being written
MOST_FRAMES = 40    # the writer's deepest stack (a write is some 15 frames deep)

class _Queue:
    """What is pending, and the thread writing it (one per process)."""

    def __init__(self):
        self.lock = threading.Lock()          # guards ``entries`` and ``thread``
        self.wake = threading.Condition(self.lock)
        self.writing = threading.Lock()       # held while a batch is written
        self.entries: dict = {}               # path -> (write, value)
        self.thread: threading.Thread | None = None
        self.closed = False                   # at exit: the thread writes no more


_queue = _Queue()
_exit_registered = False


def submit(path: str, value, write: Callable[[], None]) -> None:
    """Have ``write()`` called soon, off this thread; until then ``pending(path)``
    is ``value``. A later hand-in for the same path replaces an earlier one. At
    exit, or where no thread can be started, ``write()`` is called now."""
    global _exit_registered
    queue = _queue
    with queue.lock:
        if not queue.closed:
            queue.entries[path] = entry = (write, value)
            if queue.thread is not None and queue.thread.is_alive():
                queue.wake.notify()
                return
            if not _exit_registered:
                atexit.register(flush, closing=True)
                _exit_registered = True
            try:
                thread = threading.Thread(target=_run, args=(queue,), daemon=True,
                                          name="autograph-disk-cache")
                thread.start()
                queue.thread = thread
                return
            except RuntimeError:           # (no thread to be had)
                if queue.entries.get(path) is entry:
                    del queue.entries[path]
    _write_one(write)


def pending(path: str):
    """The value handed in for ``path`` and not yet written, or None."""
    entry = _queue.entries.get(path)
    return None if entry is None else entry[1]


def flush(closing: bool = False) -> None:
    """Write everything pending now, after the batch being written, if any.
    ``closing``: the process is exiting; the thread writes no more."""
    queue = _queue
    with queue.writing:
        if closing:
            with queue.lock:
                queue.closed = True
        _write_batch(queue)


def _run(queue: _Queue) -> None:
    # (shallow: a lowered recursion limit may come down while it waits or writes)
    headroom.bounded_thread(MOST_FRAMES)
    try:
        while True:
            with queue.lock:
                while not queue.entries and not queue.closed:
                    queue.wake.wait()
            started = time.monotonic()
            while time.monotonic() - started < DELAY:   # (DELAY read again: tests set it)
                time.sleep(0.005)
            with queue.writing:
                if queue.closed:
                    return
                _write_batch(queue)
    finally:
        headroom.unbounded_thread()


def _write_batch(queue: _Queue) -> None:
    """Write the entries pending now; each leaves ``entries`` once written (the
    caller holds ``queue.writing``)."""
    with queue.lock:
        batch = list(queue.entries.items())
    for path, entry in batch:
        _write_one(entry[0])
        with queue.lock:
            if queue.entries.get(path) is entry:
                del queue.entries[path]


def _write_one(write) -> None:
    try:
        write()
    except Exception:  # noqa: BLE001 - a cache that cannot be written is no error
        pass


def _forget_in_child() -> None:
    global _queue
    _queue = _Queue()


os.register_at_fork(after_in_child=_forget_in_child)
