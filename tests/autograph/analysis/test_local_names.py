"""activity.local_names (one walk with a stack) finds the names the visitor it
replaced found, on every function and lambda of whole files of the standard library
and of the project, and on the constructs where what binds is subtle."""

from __future__ import annotations

import ast
import os
import textwrap

import gast
import pytest

from autograph.analysis import activity
from autograph.analysis.activity import bound_names, pattern_captures
from autograph.walk import child_nodes, walk

from ..test_ast_bridge import _FILES


class _Reference(gast.NodeVisitor):
    """The visitor ``local_names`` ran before (``_Binders`` over ``_ModifiedNames``)."""

    def __init__(self):
        self.names, self.declared = set(), set()

    def generic_visit(self, node):
        for child in child_nodes(node):
            if child.__class__ not in (gast.Name, gast.Constant):
                self.visit(child)

    def visit_Constant(self, node):
        pass

    def visit_Name(self, node):
        pass

    def _target(self, target):
        self.names |= bound_names(target)

    def visit_Assign(self, node):
        for target in node.targets:
            self._target(target)
        self.visit(node.value)

    def visit_AugAssign(self, node):
        self._target(node.target)
        self.visit(node.value)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._target(node.target)
            self.visit(node.value)

    def visit_For(self, node):
        self._target(node.target)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node):
        if node.optional_vars is not None:
            self._target(node.optional_vars)

    def visit_ExceptHandler(self, node):
        if node.name is not None:
            self._target(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Delete(self, node):
        for target in node.targets:
            self._target(target)

    def visit_NamedExpr(self, node):
        self._target(node.target)
        self.visit(node.value)

    def visit_match_case(self, node):
        self.names |= pattern_captures(node.pattern)
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self.names.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node):
        self.names.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def _comprehension(self, node):
        for sub in walk(node):
            if isinstance(sub, gast.NamedExpr):
                self._target(sub.target)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Global(self, node):
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global


def _reference(fn):
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    visitor = _Reference()
    for stmt in fn.body if isinstance(fn.body, list) else [fn.body]:
        visitor.visit(stmt)
    return ({p.id for p in params} | visitor.names) - visitor.declared


_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)

_SUBTLE = '''
def f(a, *b, c=1, **d):
    x: int
    y: int = 1
    z += 1
    for i, (j, *k) in e: pass
    with g() as (w, v), h(u := 1): pass
    try: pass
    except E as err: q = 1
    del r, s[0], t.a
    [m := n for n in o if (p := n)]
    lambda: (lam := 1)
    match a:
        case [A, *rest] if (guard := 1): body = 1
        case {"k": K, **kw}: pass
    import os.path, numpy as np
    from x import y2 as z2
    class C: inner = 1
    global gl
    nonlocal_not_here = 1
    async def af(): pass
    x[i] = 1
    obj.attr = 2
'''


@pytest.mark.parametrize("filename", _FILES, ids=os.path.basename)
def test_local_names_are_the_visitors(filename):
    with open(filename, encoding="utf-8") as f:
        tree = gast.parse(f.read())
    functions = [n for n in walk(tree) if isinstance(n, _SCOPES)]
    assert functions
    for fn in functions:
        assert activity.local_names(fn) == _reference(fn), (filename, fn.lineno)


def test_local_names_of_the_subtle_bindings():
    fn = gast.parse(textwrap.dedent(_SUBTLE)).body[0]
    found = activity.local_names(fn)
    assert found == _reference(fn)
    assert {"a", "b", "c", "d", "y", "z", "i", "j", "k", "w", "v", "err", "q", "r",
            "m", "A", "rest", "guard", "K", "kw", "body", "os", "np", "z2", "C",
            "nonlocal_not_here", "af", "p"} <= found
    assert not {"x", "n", "lam", "gl", "inner", "s", "t", "obj"} & found
    assert ast.parse(_SUBTLE)     # (the sample is valid Python)
