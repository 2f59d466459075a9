"""pending_writes: writes handed in run later, off the caller's thread, and never get lost."""

from __future__ import annotations

import os
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
