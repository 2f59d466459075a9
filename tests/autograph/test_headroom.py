"""Conversion does not depend on how deep the caller's stack is (issue 21, class 7):
a flat function converts under a lowered recursion limit and deep in a recursion;
a function that really nests too deeply is refused the same way everywhere."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from autograph import ConversionError
from autograph.headroom import headroom, stack_depth
from autograph.transpiler import Transpiler
from tests.autograph.test_cache import load_module
from tests.test_hostile_input import _elif_chain_source

FLAT = '''\
def flat(x):
    y = x + 1
    if y > 2:
        y = y * 2
    for i in range(3):
        y = y + i
    while y > 100:
        y = y // 2
    return y
'''


@pytest.fixture
def flat(tmp_path):
    return load_module(tmp_path, FLAT).flat


@pytest.fixture
def too_deep(tmp_path):
    """An ``elif`` chain of 1,500 branches: more nesting than conversion has room for."""
    return load_module(tmp_path, _elif_chain_source(1500)).chain


def _recurse(depth, then):
    if depth <= 0:
        return then()
    return _recurse(depth - 1, then)


def test_flat_function_under_a_lowered_recursion_limit(flat):
    limit = sys.getrecursionlimit()
    lowered = stack_depth() + 40
    sys.setrecursionlimit(lowered)
    try:
        converted = Transpiler().convert(flat)
        assert sys.getrecursionlimit() == lowered          # put back as it was
    finally:
        sys.setrecursionlimit(limit)
    assert converted(2) == flat(2)


def test_flat_function_deep_in_the_callers_stack(flat):
    room = sys.getrecursionlimit() - stack_depth()
    converted = _recurse(room - 30, lambda: Transpiler().convert(flat))
    assert converted(5) == flat(5)


@pytest.mark.parametrize("where", ["top", "deep", "thread", "lowered limit"])
def test_too_deep_is_a_conversion_error_everywhere(too_deep, where):
    limit = sys.getrecursionlimit()
    outcome = {}

    def convert():
        try:
            Transpiler().convert(too_deep)
        except ConversionError as error:
            outcome["error"] = error

    if where == "top":
        convert()
    elif where == "deep":
        _recurse(limit - stack_depth() - 40, convert)
    elif where == "thread":
        thread = threading.Thread(target=convert)
        thread.start()
        thread.join()
    else:
        sys.setrecursionlimit(stack_depth() + 60)
        try:
            convert()
        finally:
            sys.setrecursionlimit(limit)
    assert "nests too deeply" in str(outcome["error"])
    assert f"{too_deep.__code__.co_filename}:1" in str(outcome["error"])
    assert sys.getrecursionlimit() == limit


def test_concurrent_conversions_put_the_limit_back(tmp_path):
    limit = sys.getrecursionlimit()
    modules = [load_module(tmp_path, FLAT) for _ in range(8)]
    results, errors = [], []

    def work(module):
        try:
            results.append(_recurse(200, lambda: Transpiler().convert(module.flat)(3)))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(m,)) for m in modules]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [modules[0].flat(3)] * 8
    assert sys.getrecursionlimit() == limit


def test_headroom_never_lowers_the_limit():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 5000)
    try:
        with headroom(margin=10):
            assert sys.getrecursionlimit() == limit + 5000
        assert sys.getrecursionlimit() == limit + 5000
    finally:
        sys.setrecursionlimit(limit)


def test_a_limit_changed_during_conversion_is_left_alone():
    limit = sys.getrecursionlimit()
    try:
        with headroom(margin=limit + 100):
            sys.setrecursionlimit(limit + 7)          # the user's own change, meanwhile
        assert sys.getrecursionlimit() == limit + 7
    finally:
        sys.setrecursionlimit(limit)


def test_deep_chain_never_crashes_the_interpreter(tmp_path):
    """Longer chains in a fresh interpreter, converted deep in its stack: a clean
    ConversionError (or CPython's own refusal to compile the module), no crash."""
    lines = ["import importlib.util, sys, threading",
             "from autograph import ConversionError",
             "from autograph.transpiler import Transpiler",
             "def recurse(n, then):",
             "    return then() if n <= 0 else recurse(n - 1, then)",
             "for length in (3000, 6000):",
             f"    path = {str(tmp_path)!r} + f'/chain_{{length}}.py'",
             "    body = ['def chain(x):', '    if x == 0:', '        y = 0']",
             "    for k in range(1, length):",
             "        body += [f'    elif x == {k}:', f'        y = {k}']",
             "    body += ['    return y']",
             "    open(path, 'w').write('\\n'.join(body) + '\\n')",
             "    spec = importlib.util.spec_from_file_location(f'chain_{length}', path)",
             "    module = importlib.util.module_from_spec(spec)",
             "    try:",
             "        spec.loader.exec_module(module)",
             "    except (RecursionError, MemoryError, SyntaxError):",
             "        print(length, 'cpython refuses')",
             "        continue",
             "    def convert():",
             "        try:",
             "            Transpiler().convert(module.chain)",
             "        except ConversionError as error:",
             "            assert 'nests too deeply' in str(error)",
             "            print(length, 'refused')",
             "    recurse(sys.getrecursionlimit() - 50, convert)",
             "    t = threading.Thread(target=convert); t.start(); t.join()"]
    done = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused") + done.stdout.count("cpython refuses") >= 2
