"""pending_writes: writes handed in run later, off the caller's thread, and never get lost."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from autograph import pending_writes


@pytest.fixture
def slow(monkeypatch):
    pending_writes.flush()
    monkeypatch.setattr(pending_writes, "DELAY", 60.0)


def test_a_write_runs_later_on_another_thread_and_flush_waits_for_it(slow):
    threads = []
    pending_writes.submit("/p/a", "value", lambda: threads.append(threading.get_ident()))
    assert pending_writes.pending("/p/a") == "value" and threads == []
    pending_writes.flush()
    assert pending_writes.pending("/p/a") is None and len(threads) == 1


def test_the_thread_writes_after_the_delay(monkeypatch):
    pending_writes.flush()
    monkeypatch.setattr(pending_writes, "DELAY", 0.0)
    done = threading.Event()
    pending_writes.submit("/p/b", 1, done.set)
    assert done.wait(30)
    assert done.is_set()


def test_a_later_hand_in_replaces_an_earlier_one_and_a_failure_is_ignored(slow):
    written = []
    pending_writes.submit("/p/c", 1, lambda: written.append(1))
    pending_writes.submit("/p/c", 2, lambda: written.append(2))
    pending_writes.submit("/p/d", 3, lambda: 1 / 0)
    assert pending_writes.pending("/p/c") == 2
    pending_writes.flush()
    assert written == [2] and pending_writes.pending("/p/d") is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_leaves_its_parents_writes_to_the_parent(slow, tmp_path):
    marker = tmp_path / "written"
    pending_writes.submit("/p/e", 1, lambda: marker.write_text(str(os.getpid())))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:       # the child: nothing pending, and its exit writes nothing
        os.write(write, b"1" if pending_writes.pending("/p/e") is None else b"0")
        pending_writes.flush(closing=True)
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert not marker.exists()
    pending_writes.flush()
    assert marker.read_text() == str(os.getpid())
    os.close(read)
    os.close(write)


def test_the_writer_lets_a_lowered_recursion_limit_come_back(slow, tmp_path):
    """The writer thread is shallow and says so (headroom.bounded_thread): a
    conversion under a lowered limit puts that limit back though the thread runs."""
    import linecache

    from autograph.headroom import stack_depth
    from autograph.transpiler import Transpiler

    pending_writes.submit("/p/f", 1, lambda: None)        # the writer thread is up
    assert any(t.name == "autograph-disk-cache" for t in threading.enumerate())
    path = tmp_path / "ag_lowered.py"
    path.write_text("def f(x):\n    return x + 1 if x > 0 else x\n")
    scope = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    linecache.checkcache(str(path))
    limit = sys.getrecursionlimit()
    lowered = stack_depth() + 45
    sys.setrecursionlimit(lowered)
    try:
        converted = Transpiler().convert(scope["f"])
        assert sys.getrecursionlimit() == lowered
    finally:
        sys.setrecursionlimit(limit)
    assert converted(2) == 3
