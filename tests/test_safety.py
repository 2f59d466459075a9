"""Conversion only reads the function's source and runs nothing but the result.

- default arguments, decorators and the body are not evaluated by conversion (or
  by ``to_code``); calling the converted function runs the body exactly once;
- conversion, ``to_code`` and calls write nothing to disk;
- generated names never collide with the user's (``ag__``, ``did_return``,
  ``loop_body``... as user variables keep their values).
"""

from __future__ import annotations

import builtins
import io
import os
import shutil

import pytest

import autograph
from tests import safety_cases as cases


def test_conversion_does_not_evaluate_defaults_or_body():
    cases.EFFECTS.clear()
    converted = autograph.convert(cases.with_effectful_default)
    autograph.to_code(cases.with_effectful_default)
    autograph.to_code(cases.body_with_effects)
    assert cases.EFFECTS == []
    assert converted(5) == cases.with_effectful_default(5)
    assert cases.EFFECTS == []        # the default was evaluated once, at import
    assert autograph.convert(cases.body_with_effects)(2) == (-2, "Inner")
    assert cases.EFFECTS == ["body ran", "class body ran"]


@pytest.fixture
def no_writes(monkeypatch):
    """Record every file opened for writing (builtins.open, io.open, os.open)."""
    writes = []
    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            writes.append((file, mode))
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            writes.append((path, flags))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    return writes


def test_nothing_written_to_disk(tmp_path, no_writes):
    source = tmp_path / "user_module.py"
    shutil.copy(cases.__file__, source)
    namespace = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    no_writes.clear()   # the copy above is the test's own
    fn = namespace["uses_generated_names"]
    autograph.to_code(fn)
    autograph.convert(fn)(1, 4)
    autograph.to_graph(namespace["with_effectful_default"])(7)
    assert no_writes == []
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("args", [(1, 4), (0, 0), (9, 3), (4, 2), (5, 3)])
def test_generated_names_do_not_collide(args):
    expected = cases.uses_generated_names(*args)
    assert autograph.convert(cases.uses_generated_names)(*args) == expected


def test_generated_helpers_avoid_user_names():
    import ast

    code = autograph.to_code(cases.uses_generated_names)
    user = {n for n in cases.uses_generated_names.__code__.co_varnames}
    generated = {node.name for node in ast.walk(ast.parse(code))
                 if isinstance(node, ast.FunctionDef)} - {"uses_generated_names"}
    assert generated and not generated & user, generated & user
