"""Arithmetic on names an ``if`` binds, into ``ag__.number_op`` calls.

A staged ``if`` may leave a name a Python number of one type on one path and of
another on the other (``m = 3`` / ``m = 1.5``): one float32 scalar, noted as either
type by the traced condition (``runtime/python_ints.Either``). Arithmetic on it must
carry that note on (``m * 2`` is ``6`` on one path, ``3.0`` on the other), or refuse
where Python's result differs by path in a way one array cannot hold
(``runtime/joined_numbers.py``).

Before:

    def f(x):
        if x > 0:
            m = 3
        else:
            m = 1.5
        print(m * 2 + 1)

After:

    def f(x):
        if x > 0:
            m = 3
        else:
            m = 1.5
        print(ag__.number_op(ag__.number_op(m, '*', 2), '+', 1))

Rewritten: a binary or unary arithmetic operator, ``abs(...)`` and an augmented
assignment (as ``m = ag__.number_op(m, '+=', 1)``, in place as Python's is) whose
operand is a name bound inside some ``if`` of the function, a name bound from such a
name, or such an operation itself. Nothing else changes; a function with no ``if``
is not walked.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import walk_same_scope
from autograph.converters.base import Transformer

NODE_TYPES = (gast.If,)
_SYMBOLS = {
    gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
    gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|",
    gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>",
}
_UNARY = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~"}
_ARITHMETIC = (gast.BinOp, gast.UnaryOp, gast.AugAssign)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the arithmetic of ``node`` on names its ``if``s bind."""
    return _JoinedNumbers(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx=None) -> bool:
    """Whether the function walked as ``nodes`` holds an ``if`` and arithmetic."""
    present = {sub.__class__ for sub in nodes}
    return gast.If in present and any(t in present for t in _ARITHMETIC)


def joined_names(fn) -> set:
    """The names an ``if`` of ``fn`` (its own scope) binds, and those bound (anywhere in
    it) from an expression reading one of them."""
    nodes = walk_same_scope(fn.body)
    names = set()
    for node in nodes:
        if isinstance(node, gast.If):
            names.update(_bound(node.body + node.orelse))
    assignments = [(_targets(n), n.value) for n in nodes
                   if isinstance(n, (gast.Assign, gast.AugAssign, gast.AnnAssign))
                   and n.value is not None]
    grown = True
    while grown:
        grown = False
        for targets, value in assignments:
            if not targets <= names and _reads(value, names):
                names |= targets
                grown = True
    return names


def _bound(statements) -> set:
    return {n.id for n in walk_same_scope(statements)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _targets(node) -> set:
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    return _bound(targets)


def _reads(value, names) -> bool:
    return any(isinstance(n, gast.Name) and n.id in names for n in walk_same_scope(value))


class _JoinedNumbers(Transformer):

    def __init__(self, ctx):
        self.ag = ctx.runtime_name
        self.names = []   # per function: the names its ifs join

    def visit_FunctionDef(self, node):
        self.names.append(joined_names(node))
        try:
            return self.generic_visit(node)
        finally:
            self.names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.names.append(set())
        try:
            return self.generic_visit(node)
        finally:
            self.names.pop()

    def _tracked(self, node) -> bool:
        if isinstance(node, gast.Name):
            return node.id in self.names[-1]
        return getattr(node, "_number_op", False)

    def _call(self, node, *args):
        new = gast.Call(func=gast.Attribute(value=templates.name(self.ag), attr="number_op",
                                            ctx=gast.Load()),
                        args=[_literal(a) for a in args], keywords=[])
        new._number_op = True
        templates.set_location(new, node)
        return new

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        symbol = _SYMBOLS.get(type(node.op))
        if symbol is None or not (self._tracked(node.left) or self._tracked(node.right)):
            return node
        return self._call(node, node.left, symbol, node.right)

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        symbol = _UNARY.get(type(node.op))
        if symbol is None or not self._tracked(node.operand):
            return node
        return self._call(node, symbol, node.operand)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "abs" \
                and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], gast.Starred) \
                and self._tracked(node.args[0]) and "abs" not in self.names[-1]:
            return self._call(node, "abs", node.args[0])
        return node

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        symbol = _SYMBOLS.get(type(node.op))
        target = node.target
        if symbol is None or not isinstance(target, gast.Name) \
                or not (self._tracked(target) or self._tracked(node.value)):
            return node
        value = self._call(node, templates.name(target.id), symbol + "=", node.value)
        new = templates.replace("target = value", target=target.id, value=value)
        templates.set_location(new, node)
        return new


def _literal(value):
    return gast.Constant(value=value, kind=None) if isinstance(value, str) else value
