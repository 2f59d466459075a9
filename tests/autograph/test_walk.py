"""autograph.walk's field table (``NODE_FIELDS``) leaves out only fields that never
hold a node other than a leaf: the children found through it are those found
through every field, node for node, on whole files and on converted functions."""

from __future__ import annotations

import ast

import gast

from autograph import walk
from autograph.analysis import scopes
from tests.autograph.test_ast_bridge import _FILES


def children_by_every_field(node):
    """``walk.child_nodes`` as it was: every field of the node looked at."""
    children = []
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            children += [item for item in value if isinstance(item, gast.AST)
                         and item.__class__ not in walk.LEAVES]
        elif isinstance(value, gast.AST) and value.__class__ not in walk.LEAVES:
            children.append(value)
    return children


def _trees():
    for filename in _FILES:
        with open(filename, encoding="utf-8") as f:
            yield gast.ast_to_gast(ast.parse(f.read(), filename))
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads

    transpiler = Transpiler()
    for f in conversion_sources(get_workloads(None)):
        yield transpiler.program(f).node


def test_child_nodes_are_those_of_every_field():
    count = 0
    for tree in _trees():
        for node in ast.walk(tree):
            assert walk.child_nodes(node) == children_by_every_field(node), ast.dump(node)
            count += 1
    assert count > 10_000


def test_walks_see_every_node_but_leaves():
    for tree in _trees():
        expected = [n for n in ast.walk(tree) if n.__class__ not in walk.LEAVES]
        assert list(walk.walk(tree)) == expected
        assert {id(n) for n in scopes.walk_same_scope(tree)} <= {id(n) for n in expected}


def test_a_named_except_handler_has_its_name_as_a_child():
    tree = gast.ast_to_gast(ast.parse("try:\n    pass\nexcept E as e:\n    pass\n"))
    handler = tree.body[0].handlers[0]
    assert any(isinstance(c, gast.Name) and c.id == "e" for c in walk.child_nodes(handler))


def test_statement_converters_give_what_a_visit_of_every_node_gives(monkeypatch):
    """The converters that visit statements only (``Transformer.statements_only``)
    make the code they made when their visit went into every expression."""
    from autograph.converters import base
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads
    from tests.autograph import test_walk_samples

    functions = [*conversion_sources(get_workloads(None)), *test_walk_samples.FUNCTIONS]
    fast = [Transpiler().source(f) for f in functions]
    converters = [c for c in _subclasses(base.Transformer) if c.statements_only]
    assert len(converters) >= 5
    for converter in converters:
        monkeypatch.setattr(converter, "statements_only", False)
    assert [Transpiler().source(f) for f in functions] == fast


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)
