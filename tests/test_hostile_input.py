"""Odd and hostile input: each row converts and behaves exactly as Python, or raises
``ConversionError`` naming the user's file and line.

Never an internal ``KeyError``/``AttributeError``/``RecursionError`` from the
transpiler, never a hang (every call runs under a timeout), never a silent change
of meaning. Rows are ``(function, args, expected)``: ``SAME`` compares the
converted function called with Python values against the original (value, type and
side effects); ``error(k)`` expects a ``ConversionError`` at the function's first
line + ``k`` (``None``: a function with no file to point at).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import types

import pytest

import autograph
from autograph import ConversionError
from tests import hostile_rows as rows
from tests.hostile_rows import ROWS, SAME

TIMEOUT_S = 60


def _outcome(fn, args):
    """``("ok", value)`` or ``("raised", exception)``, with side effects recorded."""
    try:
        result = fn(*args)
        if isinstance(result, types.CoroutineType):
            result = asyncio.run(result)
        return "ok", _listed(result)
    except BaseException as e:  # noqa: BLE001 - the test compares what is raised
        return "raised", e


def _listed(result):
    """A generator's items (a generator function runs as it is: compare what it yields)."""
    return list(result) if isinstance(result, types.GeneratorType) else result


def run_with_timeout(fn, *args, timeout=TIMEOUT_S):
    """``fn(*args)`` in a thread; fail the test (not hang) if it takes too long."""
    box = {}

    def target():
        box["out"] = _outcome(fn, args)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not finish in {timeout}s (a hang)")
    return box["out"]


def _first_line(fn):
    code = getattr(fn, "__code__", None)
    return code.co_firstlineno if code else None


@pytest.mark.parametrize("label,fn,args,expected", ROWS, ids=[r[0] for r in ROWS])
def test_row(label, fn, args, expected):
    rows.EVENTS.clear()
    if expected == SAME:
        counter_before = rows.COUNTER
        want = _outcome(fn, args)
        want_events = list(rows.EVENTS)
        rows.EVENTS.clear()
        rows.COUNTER = counter_before
        got = run_with_timeout(lambda *a: _listed(autograph.convert(fn)(*a)), *args)
        assert got[0] == want[0], f"{label}: {got!r} vs Python {want!r}"
        if want[0] == "ok":
            assert type(got[1]) is type(want[1]) and got[1] == want[1], (got, want)
        else:
            assert type(got[1]) is type(want[1]), f"raised {got[1]!r}, Python {want[1]!r}"
            assert str(got[1]) == str(want[1])
        assert rows.EVENTS == want_events
        return
    _, offset, words = expected
    kind, exc = run_with_timeout(lambda *a: autograph.convert(fn)(*a), *args)
    assert kind == "raised" and isinstance(exc, ConversionError), f"{label}: {exc!r}"
    message = str(exc)
    for word in words:
        assert word in message, message
    if offset is not None:
        assert f"{rows.__file__}:{_first_line(fn) + offset}" in message, message


def test_effectful_decorator_and_defaults_not_rerun():
    before = list(rows.EFFECTS)
    autograph.convert(rows.has_effectful_decorator)(3)
    autograph.to_code(rows.has_effectful_decorator)
    assert rows.EFFECTS == before


# -- generated inputs: very deep nesting, huge functions -----------------------------

def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    namespace = {}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]


def _deep_if_source(depth):
    lines = ["def deep(x):", "    y = 0"]
    for level in range(depth):
        pad = "    " * (level + 1)
        lines += [f"{pad}if x > {level}:", f"{pad}    y += 1"]
    lines.append("    return y")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth", [50, 98])
def test_deep_nesting(tmp_path, depth):
    """Nested ``if`` up to the tokenizer's limit (100 indents): converts and agrees,
    or says it is too deeply nested (a ConversionError at its line), never a RecursionError."""
    try:
        fn = _load(tmp_path, "deep", _deep_if_source(depth))
    except (RecursionError, MemoryError, SyntaxError):
        pytest.skip(f"CPython itself cannot compile {depth} nested blocks")
    kind, got = run_with_timeout(lambda: autograph.convert(fn)(depth // 2))
    if kind == "raised":
        assert isinstance(got, ConversionError), repr(got)
        assert f"{tmp_path / 'deep.py'}:1" in str(got) and "nest" in str(got), str(got)
    else:
        assert got == fn(depth // 2)


def _huge_source(blocks):
    lines = ["def huge(x):", "    y = 0"]
    for k in range(blocks):
        lines += [f"    if x % {k % 7 + 2} == {k % 3}:", f"        y += {k}",
                  "    else:", f"        y -= {k % 5}", f"    x = (x + {k}) % 1000"]
    lines.append("    return x, y")
    return "\n".join(lines) + "\n"


def test_huge_function(tmp_path):
    """A function of thousands of lines converts in reasonable time and agrees."""
    fn = _load(tmp_path, "huge", _huge_source(600))   # 3002 lines
    kind, got = run_with_timeout(lambda: autograph.convert(fn)(3))
    assert kind == "ok", got
    assert got == fn(3)


def test_recursion_limit_restored():
    limit = sys.getrecursionlimit()
    autograph.convert(rows.recursive)(3)
    assert sys.getrecursionlimit() == limit


def _elif_chain_source(length):
    lines = ["def chain(x):", "    if x == 0:", "        y = 0"]
    for k in range(1, length):
        lines += [f"    elif x == {k}:", f"        y = {k * 3}"]
    lines += ["    else:", "        y = -1", "    return y"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("length", [300, 1500])
def test_long_elif_chain(tmp_path, length):
    """``elif`` nests each test in the previous one's ``else``: hundreds of levels in
    the tree. Converts and agrees, or a ConversionError saying it nests too deeply."""
    fn = _load(tmp_path, "chain", _elif_chain_source(length))
    kind, got = run_with_timeout(lambda: autograph.convert(fn)(length - 2))
    if kind == "raised":
        assert isinstance(got, ConversionError), repr(got)
        assert f"{tmp_path / 'chain.py'}:1" in str(got) and "nest" in str(got), str(got)
    else:
        assert got == fn(length - 2)
