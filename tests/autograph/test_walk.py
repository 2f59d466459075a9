"""autograph.walk's field table (``NODE_FIELDS``) leaves out only fields that never
hold a node other than a leaf: the children found through it are those found
through every field, node for node, on whole files and on converted functions."""

from __future__ import annotations

import ast
import inspect
import textwrap

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
        yield transpiler.tree(f)


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
        assert walk.walk_list(tree) == expected
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


def test_converters_not_visiting_names_and_constants_make_the_same_code(monkeypatch):
    """A converter's visit passes over a name without an annotation (where it has no
    ``visit_Name``) and a constant: the code is what visiting them made; and a name
    with an annotation is still visited (a call in it is the converter's)."""
    from autograph.converters import base
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads
    from tests.autograph import test_walk_samples

    functions = [*conversion_sources(get_workloads(None)), *test_walk_samples.FUNCTIONS]
    fast = [Transpiler().source(f) for f in functions]
    converters = list(_subclasses(base.Transformer))
    assert sum(c._passes_names for c in converters) >= 5
    for converter in converters:
        monkeypatch.setattr(converter, "_passes_names", False)
        monkeypatch.setattr(converter, "_passes_constants", False)
    assert [Transpiler().source(f) for f in functions] == fast

    class Calls(base.Transformer):
        def __init__(self):
            self.seen = []

        def visit_Call(self, node):
            self.seen.append(ast.unparse(gast.gast_to_ast(node)))
            return self.generic_visit(node)

    tree = gast.parse("def f(x: make(1), y=g(2)):\n    return h(x, 3)")
    found = Calls()
    found.visit(tree)
    assert found.seen == ["make(1)", "g(2)", "h(x, 3)"]


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_converters_skipped_by_their_gate_would_change_nothing(monkeypatch):
    """A converter the transpiler skips where its ``needed(nodes, ctx)`` says so (the
    walk then stays current for the next one) makes the code it made when it always
    ran: the gates only leave out passes that change nothing."""
    from autograph import transpiler
    from autograph.converters import break_statements, return_statements
    from autograph.transpiler import Transpiler
    from benchmarks.suite import conversion_sources
    from benchmarks.workloads import get_workloads
    from tests.autograph import test_walk_samples
    from tests.converters import (
        test_augmented_assignments,
        test_break_statements,
        test_builtin_functions,
        test_call_trees,
        test_logical_expressions,
        test_return_statements,
    )

    functions = [*conversion_sources(get_workloads(None)), *test_walk_samples.FUNCTIONS,
                 *_functions_of(test_break_statements), *_functions_of(test_return_statements),
                 *_functions_of(test_builtin_functions), *_functions_of(test_call_trees),
                 *_functions_of(test_logical_expressions),
                 *_functions_of(test_augmented_assignments)]
    gated = [c for c in transpiler.DEFAULT_CONVERTERS if hasattr(c, "rewrite")]
    assert {c.__name__.rsplit(".", 1)[1] for c in gated} >= {
        "directives", "break_statements", "return_statements", "lists", "slices",
        "builtin_functions", "call_trees", "logical_expressions", "augmented_assignments"}
    # (the gates do skip passes on these functions)
    assert sum(not c.needed(list(walk.walk(_parsed(f))), None)
               for c in (break_statements, return_statements) for f in functions) > 10

    def outputs():
        out = []
        for f in functions:
            try:
                out.append(Transpiler().source(f))
            except Exception as e:      # a refusal is output too
                out.append(f"{type(e).__name__}: {e}")
        return out

    gate_skips = outputs()
    for converter in gated:
        monkeypatch.setattr(converter, "needed", lambda nodes, ctx: True)
    assert outputs() == gate_skips


def test_return_and_break_gates():
    """``return_statements`` is needed for a return inside a block (of the function
    or of a nested one), not for returns at the top of function bodies;
    ``break_statements`` for a ``break`` or a loop ``else``."""
    from autograph.converters import break_statements, return_statements

    def needed(module, source):
        return module.needed(list(walk.walk(gast.parse(textwrap.dedent(source)).body[0])))

    assert not needed(return_statements, """
        def f(x):
            def g(y):
                return y
            for i in range(3):
                x += g(i)
            return x
        """)
    assert needed(return_statements, """
        def f(x):
            if x:
                return 1
            return 2
        """)
    assert needed(return_statements, """
        def f(x):
            def g(y):
                while y:
                    return y
            return g
        """)
    assert not needed(break_statements, """
        def f(x):
            for i in x:
                x += i
            while x:
                x -= 1
        """)
    assert needed(break_statements, "def f(x):\n    for i in x:\n        break\n")
    assert needed(break_statements, "def f(x):\n    while x:\n        x -= 1\n    else:\n"
                                    "        x = 2\n")


def _parsed(f):
    from autograph import parsing

    return parsing.parse_function(f).node


def _functions_of(module):
    return [f for name, f in sorted(vars(module).items())
            if inspect.isfunction(f) and f.__module__ == module.__name__
            and not name.startswith("test_")]


def test_a_gate_asked_of_the_parsed_walk_sees_the_function_as_parsed(monkeypatch):
    """A converter declaring ``NEEDED_ON_SOURCE`` (slices) is asked ``needed`` of the
    walk of the function as parsed where converters have changed the tree since
    (builtin_functions here): that walk is the parsed one, and an item assignment
    after such a change is still rewritten."""
    from autograph.analysis import annos
    from autograph.converters import slices
    from autograph.transpiler import Transpiler

    asked = []
    needed = slices.needed

    def spy(nodes, ctx=None):
        asked.append(nodes)
        return needed(nodes, ctx)

    monkeypatch.setattr(slices, "needed", spy)

    def f(xs):
        ys = [0, 0]
        ys[0] = max(xs[0], xs[1])
        return ys

    def g(xs):
        return max(xs[0], xs[1])

    assert "ag__.setitem(ys, 0, ag__.max_(" in Transpiler().source(f)
    source = Transpiler().source(g)
    assert "setitem" not in source and "ag__.max_(" in source
    assert len(asked) == 2
    for nodes in asked:
        # (the walk taken before builtin_functions: none of the ag__.max_ it made,
        # though the call it changed in place is in it)
        assert nodes[0].name in ("f", "g")
        assert not any(isinstance(n, gast.Attribute) for n in nodes)
        assert any(annos.runtime_operator(n) == "max_" for n in nodes)
    assert Transpiler().convert(f)([3, 5]) == f([3, 5]) == [5, 0]


def _unchanged_before_control_flow(x):
    def g(y):
        z = y
        return z
    if x > 0:
        x = 1
    return x, g


def _called_before_control_flow(x):
    def g(y):
        z = y
        return z
    if x > 0:
        x = g(x)
    return x


def test_local_names_of_the_parsed_tree_reused_while_no_converter_changed_it(monkeypatch):
    """Where no converter ran before ``control_flow``, its definedness analysis takes
    each function's local names from those ``_context`` found in the parsed tree
    (the same names it would find); where one did (``call_trees`` here), it finds
    them again."""
    from autograph.analysis import local_names
    from autograph.converters import control_flow
    from autograph.transpiler import Transpiler

    seen = []
    annotate = control_flow.annotate_definedness

    def spy(fn, nodes=None, locals_of=None, known=None):
        seen.append(known if known is None else {
            id(sub): (known[id(sub)], local_names(sub)) for sub in nodes
            if isinstance(sub, gast.FunctionDef)})
        return annotate(fn, nodes, locals_of, known)

    monkeypatch.setattr(control_flow, "annotate_definedness", spy)
    plain = Transpiler().source(_unchanged_before_control_flow)
    assert len(seen) == 1 and len(seen[0]) == 2
    assert all(reused == found for reused, found in seen[0].values())
    seen.clear()
    Transpiler().source(_called_before_control_flow)
    assert seen == [None]
    monkeypatch.setattr(control_flow, "annotate_definedness",
                        lambda fn, nodes=None, locals_of=None, known=None:
                        annotate(fn, nodes, locals_of))
    assert Transpiler().source(_unchanged_before_control_flow) == plain
