"""autograph.ast_bridge makes the very trees gast's translators make: the same node
types, the same fields and locations, node for node, on whole files of the standard
library and of the project, both ways."""

from __future__ import annotations

import ast
import inspect
import os
import sysconfig

import gast
import pytest

import autograph
from autograph import ast_bridge

_STDLIB = sysconfig.get_paths()["stdlib"]
_FILES = [os.path.join(_STDLIB, name) for name in (
    "ast.py", "dataclasses.py", "inspect.py", "typing.py", "argparse.py", "asyncio/tasks.py",
    "contextlib.py", "functools.py", "enum.py", "pathlib.py", "textwrap.py", "re/_parser.py")]
_FILES += [os.path.join(os.path.dirname(autograph.__file__), name) for name in (
    "transpiler.py", "fingerprint.py", "runtime/loops.py", "converters/control_flow.py")]


def same_tree(a, b, path="tree"):
    """``None`` when ``a`` and ``b`` are the same tree (node types, every attribute),
    else where they differ."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__module__}.{type(a).__name__} vs " \
               f"{type(b).__module__}.{type(b).__name__}"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = same_tree(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, ast.AST):
        for name in {*a._fields, *a._attributes}:
            x, y = getattr(a, name, "<unset>"), getattr(b, name, "<unset>")
            found = same_tree(x, y, f"{path}.{name}")
            if found:
                return found
        return None
    return None if a == b or (a != a and b != b) else f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("filename", _FILES, ids=os.path.basename)
def test_files_convert_as_gast_converts_them(filename):
    with open(filename, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename)
    ours, theirs = ast_bridge.to_gast(tree), gast.ast_to_gast(tree)
    assert same_tree(ours, theirs) is None
    assert same_tree(ast_bridge.to_ast(theirs), gast.gast_to_ast(theirs)) is None
    compile(ast_bridge.to_ast(ours), filename, "exec")


def test_converted_functions_convert_back_as_gast_converts_them():
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads

    transpiler = Transpiler()
    for f in conversion_sources(get_workloads(None)):
        node = transpiler.tree(f)
        assert same_tree(ast_bridge.to_ast(node), gast.gast_to_ast(node)) is None, f


def test_the_comparison_sees_a_difference():
    tree = ast.parse(inspect.getsource(same_tree))
    other = ast.parse(inspect.getsource(same_tree))
    other.body[0].body[1].lineno += 1
    assert same_tree(tree, other) is not None
    assert same_tree(gast.ast_to_gast(tree), tree) is not None     # gast.Name vs ast.Name


def _strip_some_locations(tree, every):
    """Take part of the location off every ``every``-th located node of ``tree``
    (by turns: all of it, the start only, the end only, the end set to None)."""
    located = [n for n in gast.walk(tree) if "lineno" in n._attributes]
    for i, node in enumerate(located[::every]):
        kind = i % 4
        for attr in (("lineno", "col_offset", "end_lineno", "end_col_offset"),
                     ("lineno", "col_offset"), ("end_lineno", "end_col_offset"), ())[kind]:
            node.__dict__.pop(attr, None)
        if kind == 3:
            node.end_lineno = node.end_col_offset = None
    return len(located[::every])


@pytest.mark.parametrize("filename", _FILES[:6], ids=os.path.basename)
@pytest.mark.parametrize("every", [1, 7, 50])
def test_located_trees_are_what_fix_missing_locations_makes(filename, every):
    with open(filename, encoding="utf-8") as f:
        tree = ast_bridge.to_gast(ast.parse(f.read(), filename))
    assert same_tree(ast_bridge.to_located_ast(tree), ast_bridge.to_ast(tree)) is None
    assert _strip_some_locations(tree, every) > 0
    expected = ast.fix_missing_locations(gast.gast_to_ast(tree))
    assert same_tree(ast_bridge.to_located_ast(tree), expected) is None
    assert same_tree(ast_bridge.to_ast(tree), expected) is not None   # (it had to fill)


def test_a_tree_located_throughout_is_not_walked_again(monkeypatch):
    tree = ast_bridge.to_gast(ast.parse(inspect.getsource(same_tree)))
    monkeypatch.setattr(ast_bridge, "fill_missing_locations", None)   # (a call would fail)
    assert same_tree(ast_bridge.to_located_ast(tree), ast_bridge.to_ast(tree)) is None
