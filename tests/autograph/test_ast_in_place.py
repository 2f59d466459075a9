"""autograph.ast_in_place makes, of the tree it is given, the trees autograph.ast_bridge
makes anew: the same node types, fields and locations, node for node, over whole files
of the standard library and of the project, both ways; and compiling them gives the
same code."""

from __future__ import annotations

import ast
import os

import pytest

from autograph import ast_bridge, ast_in_place
from autograph.walk import walk_list

from .test_ast_bridge import _FILES, _strip_some_locations, same_tree

pytestmark = pytest.mark.skipif(not ast_in_place.AVAILABLE,
                                reason="written for the node types of Python 3.11")


def _source(filename):
    with open(filename, encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("filename", _FILES, ids=os.path.basename)
def test_to_gast_in_place_is_to_gast(filename):
    source = _source(filename)
    tree = ast.parse(source, filename)
    nodes = ast_in_place.walk_as_gast(tree)
    ours, walked = ast_in_place.to_gast(tree, nodes)
    assert ours is tree
    assert same_tree(ours, ast_bridge.to_gast(ast.parse(source, filename))) is None
    assert [id(n) for n in walked] == [id(n) for n in walk_list(ours)]


@pytest.mark.parametrize("filename", _FILES, ids=os.path.basename)
@pytest.mark.parametrize("every", [0, 7])
def test_to_ast_in_place_is_to_ast(filename, every):
    source = _source(filename)
    trees = [ast_bridge.to_gast(ast.parse(source, filename)) for _ in range(2)]
    if every:
        for tree in trees:
            _strip_some_locations(tree, every)
    expected, expected_missing = ast_bridge.to_ast_noting_locations(trees[0])
    ours, missing = ast_in_place.to_ast(trees[1])
    assert ours is trees[1]
    assert missing == expected_missing == bool(every)
    assert same_tree(ours, expected) is None
    if not every:     # (a stripped tree's filled ranges need not be valid ones)
        assert compile(ours, filename, "exec") == compile(expected, filename, "exec")


def test_a_node_held_twice_is_converted_once():
    tree = ast_bridge.to_gast(ast.parse("x = f(y)\n"))
    call = tree.body[0].value
    tree.body.append(ast_bridge.to_gast(ast.parse("z = 1\n")).body[0])
    tree.body[1].value = call          # the same call in two statements
    ours, _ = ast_in_place.to_ast(tree)
    assert type(ours.body[1].value) is ast.Call and ours.body[1].value is call
    assert ast.unparse(ours) == "x = f(y)\nz = f(y)"


def test_converted_functions_compile_as_they_do_from_a_new_tree():
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads

    for f in conversion_sources(get_workloads(None)):
        expected, expected_missing = ast_bridge.to_ast_noting_locations(Transpiler().tree(f))
        ours, missing = ast_in_place.to_ast(Transpiler().tree(f))
        assert missing == expected_missing, f
        assert same_tree(ours, expected) is None, f
