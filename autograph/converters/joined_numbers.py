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
operand is a name that an ``if`` or conditional expression binds and whose values may
come from two sources (``_Sources``: ``m = 3`` / ``m = 1.5``; not ``n = 3 * n + 1``),
a name computed from such a name by arithmetic, or such an operation itself. Where
such a value is read otherwise (a call's argument but ``print``, ``isinstance``,
``float``...; an item of a display; an index) it is written ``ag__.one_type(m)``,
which refuses a number whose type a traced condition decided; a ``return`` of it,
``ag__.one_type(m, returned=True)``, lets the compiled function's own result through.
A comparison or a test reads it as it is. Nothing else changes; a function with no ``if`` is not
walked.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import walk_same_scope
from autograph.analysis.number_sources import Sources, bound, is_abs, joined_names
from autograph.converters.base import Transformer
from autograph.walk import walk_list

NODE_TYPES = (gast.If, gast.IfExp)
_SYMBOLS = {
    gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
    gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|",
    gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>",
}
_UNARY = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~"}
_JOINS = frozenset({gast.If, gast.IfExp})
_FUNCTIONS = frozenset({gast.FunctionDef, gast.AsyncFunctionDef})


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the arithmetic of ``node`` on names its ``if``s may join (and guard
    their other reads)."""
    return _JoinedNumbers(ctx, {}).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where some function of ``node`` has such a name."""
    nodes = walk_list(node) if nodes is None else nodes
    walked, known = ctx.joined_numbers
    if walked is not nodes:
        known = _joined_by_function(nodes, ctx.runtime_name)
    if not any(known.values()):
        return node
    return _JoinedNumbers(ctx, dict(known)).visit(node)


def needed(nodes, ctx=None) -> bool:
    """Whether a function walked as ``nodes`` has a name its ``if``s or conditional
    expressions may join as numbers of two types (worked out here, for ``rewrite``
    to reuse: a function without one is left as it is, and the transpiler keeps its
    walk of the tree for the converters after this one)."""
    if not any(sub.__class__ in _JOINS for sub in nodes):
        return False
    if ctx is None:
        return True
    known = _joined_by_function(nodes, ctx.runtime_name)
    ctx.joined_numbers = (nodes, known)
    return any(known.values())


def _joined_by_function(nodes, ag) -> dict:
    return {id(sub): joined_names(sub, ag) for sub in nodes
            if sub.__class__ in _FUNCTIONS and sub.body}


# The calls that read such a number as Python would (``print`` shows it as its path's
# type, ``isinstance``/``type`` answer by path or refuse, ``float``/``int``/``bool``
# give one type): their arguments stay as written.
_READERS = frozenset({"print", "isinstance", "type", "float", "int", "bool", "str",
                      "repr", "format", "print_", "isinstance_", "type_", "float_",
                      "int_", "bool_", "str_", "repr_", "format_builtin", "format_",
                      "percent_format", "number_op", "one_type", "round", "round_",
                      "augmented_assign"})


class _JoinedNumbers(Transformer):

    def __init__(self, ctx, known):
        self.ag = ctx.runtime_name
        self.known = known   # id of a function -> its names, worked out already
        self.names = []   # per function: the names its ifs join

    def visit_FunctionDef(self, node):
        # (a nested function reads the enclosing one's names it does not bind)
        outer = self.names[-1] - _bound_in(node) if self.names else set()
        own = self.known.pop(id(node), None)
        self.names.append((joined_names(node, self.ag) if own is None else own) | outer)
        try:
            return self.generic_visit(node)
        finally:
            self.names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.names.append(self.names[-1] - bound([node.args]) if self.names else set())
        try:
            # (its body is its result: read as a `return`'s, as it is; a converted
            # caller computing on it is not followed)
            return self.generic_visit(node)
        finally:
            self.names.pop()

    def _tracked(self, node) -> bool:
        if isinstance(node, gast.Name):
            return isinstance(node.ctx, gast.Load) and node.id in self.names[-1]
        if isinstance(node, gast.IfExp):
            return Sources(None, [], self.ag).may_differ(node)
        return getattr(node, "_number_op", False)

    def _runtime(self, node, name, args):
        new = gast.Call(func=gast.Attribute(value=templates.name(self.ag), attr=name,
                                            ctx=gast.Load()),
                        args=args, keywords=[])
        templates.set_location(new, node)
        return new

    def _call(self, node, *args):
        new = self._runtime(node, "number_op", [_literal(a) for a in args])
        new._number_op = True
        return new

    def _guarded(self, node):
        """``node``, checked to be no number whose type a traced condition decided
        where it is read otherwise than as a number (a call's argument, an item of a
        display, an index): ``ag__.one_type(m)``."""
        return self._runtime(node, "one_type", [node]) if self._tracked(node) else node

    def _guard_all(self, nodes):
        return [self._guarded(n) for n in nodes]

    def visit_BinOp(self, node):
        if isinstance(node.op, gast.Mod) and isinstance(node.left, gast.Constant) \
                and isinstance(node.left.value, str):
            # ``'%s' % (m * 2,)``, ``'%.2f' % m``: text formatted from the numbers (or
            # refused) by printing.py, not arithmetic
            if isinstance(node.right, gast.Tuple):
                node.right.elts = [self.visit(e) for e in node.right.elts]
            else:
                node.right = self.visit(node.right)
            return node
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
        if is_abs(node) and self._tracked(node.args[0]) and "abs" not in self.names[-1]:
            return self._call(node, "abs", node.args[0])
        func = node.func
        name = func.id if isinstance(func, gast.Name) else \
            func.attr if isinstance(func, gast.Attribute) else None
        if name in _READERS and not (name in ("round", "round_") and len(node.args) > 1):
            return node
        node.args = [gast.Starred(value=self._guarded(a.value), ctx=a.ctx)
                     if isinstance(a, gast.Starred) else self._guarded(a) for a in node.args]
        for keyword in node.keywords:
            keyword.value = self._guarded(keyword.value)
        return node

    def _visit_display(self, node):
        node = self.generic_visit(node)
        if not isinstance(getattr(node, "ctx", None), gast.Store):
            node.elts = self._guard_all(node.elts)
        return node

    visit_List = visit_Tuple = visit_Set = _visit_display

    def visit_Dict(self, node):
        node = self.generic_visit(node)
        node.keys = [k if k is None else self._guarded(k) for k in node.keys]
        node.values = self._guard_all(node.values)
        return node

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        if isinstance(node.ctx, gast.Load):
            node.value, node.slice = self._guarded(node.value), self._guarded(node.slice)
        return node

    def visit_Attribute(self, node):
        node = self.generic_visit(node)
        if isinstance(node.ctx, gast.Load):
            node.value = self._guarded(node.value)
        return node

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        node.values = self._guard_all(node.values)
        return node

    def visit_Starred(self, node):
        node = self.generic_visit(node)
        node.value = self._guarded(node.value)
        return node

    def visit_Return(self, node):
        # A function's result: an array for the compiled function's caller, but a
        # converted caller would compute on it untracked (``returned=True``).
        value = node.value
        if isinstance(value, gast.Tuple):
            value.elts = [self._returned(self.visit(e)) for e in value.elts]
            return node
        node = self.generic_visit(node)
        if value is not None:
            node.value = self._returned(node.value)
        return node

    def _returned(self, node):
        if not self._tracked(node):
            return node
        new = self._runtime(node, "one_type", [node])
        new.keywords = [gast.keyword(arg="returned", value=gast.Constant(value=True,
                                                                         kind=None))]
        return new

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        symbol = _SYMBOLS.get(type(node.op))
        target = node.target
        if symbol is None or not isinstance(target, gast.Name) \
                or not (self._tracked(templates.name(target.id)) or self._tracked(node.value)):
            return node
        value = self._call(node, templates.name(target.id), symbol + "=", node.value)
        new = templates.replace("target = value", target=target.id, value=value)
        templates.set_location(new, node)
        return new


def _bound_in(fn) -> set:
    """The names ``fn`` binds: its parameters and its own assignments."""
    return bound([fn.args]) | bound(fn.body) | {
        a.id for a in walk_same_scope([fn.args]) if isinstance(a, gast.Name)}


def _literal(value):
    return gast.Constant(value=value, kind=None) if isinstance(value, str) else value
