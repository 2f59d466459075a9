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
_NESTED = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda})


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the arithmetic of ``node`` on names its ``if``s may join (and guard
    their other reads)."""
    return _JoinedNumbers(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where some function of ``node`` has such a name."""
    nodes = walk_list(node) if nodes is None else nodes
    if not joined_names(node) and not any(
            sub.__class__ in _NESTED for sub in nodes[1:]):
        return node
    return transform(node, ctx)


def needed(nodes, ctx=None) -> bool:
    """Whether the function walked as ``nodes`` holds an ``if`` or a conditional
    expression (one of its names may then hold numbers of two types)."""
    return any(sub.__class__ in _JOINS for sub in nodes)


def joined_names(fn) -> set:
    """The names an ``if`` of ``fn`` (its own scope) binds, or a conditional expression
    gives, that may hold Python numbers of two types (``_Sources``); and those bound
    (anywhere in it) from an expression reading one of them."""
    nodes = walk_same_scope(fn.body)
    sources = _Sources(fn, nodes)
    names = set()
    for node in nodes:
        if isinstance(node, gast.If):
            names.update(_bound(node.body + node.orelse))
        elif isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None \
                and any(isinstance(n, gast.IfExp) for n in walk_same_scope(node.value)):
            names.update(_targets(node))
    names = {name for name in names if sources.may_differ(templates.name(name))}
    assignments = [(_targets(n), n.value) for n in nodes
                   if isinstance(n, (gast.Assign, gast.AugAssign, gast.AnnAssign))
                   and n.value is not None]
    grown = True
    while grown:
        grown = False
        for targets, value in assignments:
            if not targets <= names and _computes_from(value, names):
                names |= {t for t in targets if sources.may_differ(templates.name(t))}
                grown = True
    return names


class _Sources:
    """Where the values of a function's names may come from, each a Python number
    type (``int`` from ``3``, ``float`` from ``0.5`` or a true division) or a value
    of unknown type (a parameter, a call, an attribute: named by its text). A name
    whose values have one source (``n`` of ``n = 3 * n + 1``, a counter ``k = 0``,
    ``k += 1``) holds one type on every path; with two (``m = 3`` / ``m = 1.5``,
    ``y = x`` / ``y = 0``) an ``if`` may join two types."""

    def __init__(self, fn, nodes):
        self.bindings = {}   # name -> the expressions bound to it (None: unknown)
        if fn is not None:
            args = fn.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                        args.kwarg]:
                if isinstance(arg, gast.Name):
                    self.bindings[arg.id] = [None]
        assigned = set()   # the ids of the names the assignments bind
        for node in nodes:
            if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                for target in targets:
                    names = [n for n in walk_same_scope(target) if isinstance(n, gast.Name)]
                    assigned.update(map(id, names))
                    value = node.value if isinstance(target, gast.Name) else None
                    for name in names:
                        self.bindings.setdefault(name.id, []).append(value)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                assigned.add(id(node.target))
                self.bindings.setdefault(node.target.id, []).append(
                    gast.BinOp(left=node.target, op=node.op, right=node.value))
        for node in nodes:
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                    and id(node) not in assigned:
                self.bindings.setdefault(node.id, []).append(None)   # (a loop's target)
        self.of_name = dict.fromkeys(self.bindings, frozenset())
        changed = True
        while changed:   # (each pass only adds sources)
            changed = False
            for name, values in self.bindings.items():
                found = frozenset().union(*(
                    self.of(value) if value is not None else {"?" + name}
                    for value in values))
                if found != self.of_name[name]:
                    self.of_name[name], changed = found, True

    def may_differ(self, node) -> bool:
        return len(self.of(node)) > 1

    def of(self, node) -> frozenset:
        if isinstance(node, gast.Constant):
            return frozenset({type(node.value).__name__})
        if isinstance(node, gast.Name):
            return self.of_name.get(node.id, frozenset({node.id}))   # (else a global)
        if isinstance(node, gast.BinOp):
            left, right = self._operand(node.left, node.right), self._operand(node.right,
                                                                              node.left)
            return left | right | ({"float"} if isinstance(node.op, gast.Div) else set())
        if isinstance(node, gast.UnaryOp):
            return frozenset({"bool"}) if isinstance(node.op, gast.Not) else self.of(node.operand)
        if isinstance(node, gast.IfExp):
            return self.of(node.body) | self.of(node.orelse)
        if isinstance(node, gast.BoolOp):
            return frozenset().union(*(self.of(v) for v in node.values))
        if isinstance(node, gast.Compare):
            return frozenset({"bool"})
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id in ("int", "float", "len", "round") \
                and node.func.id not in self.bindings and len(node.args) == 1:
            return frozenset({"float" if node.func.id == "float" else "int"})
        return frozenset({gast.dump(node)})

    def _operand(self, node, other) -> frozenset:
        """An operand's sources; none for an int literal beside a non-literal (``3 * n``
        has ``n``'s type)."""
        if isinstance(node, gast.Constant) and type(node.value) is int \
                and not isinstance(other, gast.Constant):
            return frozenset()
        return self.of(node)


def _bound(statements) -> set:
    return {n.id for n in walk_same_scope(statements)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _targets(node) -> set:
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    return _bound(targets)


def _computes_from(value, names) -> bool:
    """Whether the number ``value`` gives may be one of ``names``' computed on (a
    name, arithmetic, ``abs``, a conditional expression; not a call's result)."""
    if isinstance(value, gast.Name):
        return value.id in names
    if isinstance(value, gast.BinOp):
        return _computes_from(value.left, names) or _computes_from(value.right, names)
    if isinstance(value, gast.UnaryOp):
        return _computes_from(value.operand, names)
    if isinstance(value, gast.IfExp):
        return _computes_from(value.body, names) or _computes_from(value.orelse, names)
    return _is_abs(value) and _computes_from(value.args[0], names)


def _is_abs(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "abs" and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], gast.Starred)


# The calls that read such a number as Python would (``print`` shows it as its path's
# type, ``isinstance``/``type`` answer by path or refuse, ``float``/``int``/``bool``
# give one type): their arguments stay as written.
_READERS = frozenset({"print", "isinstance", "type", "float", "int", "bool", "str",
                      "repr", "format", "print_", "isinstance_", "type_", "float_",
                      "int_", "bool_", "str_", "repr_", "format_builtin", "format_",
                      "percent_format", "number_op", "one_type", "round", "round_"})


class _JoinedNumbers(Transformer):

    def __init__(self, ctx):
        self.ag = ctx.runtime_name
        self.names = []   # per function: the names its ifs join

    def visit_FunctionDef(self, node):
        # (a nested function reads the enclosing one's names it does not bind)
        outer = self.names[-1] - _bound_in(node) if self.names else set()
        self.names.append(joined_names(node) | outer)
        try:
            return self.generic_visit(node)
        finally:
            self.names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.names.append(self.names[-1] - _bound([node.args]) if self.names else set())
        try:
            node = self.generic_visit(node)
            node.body = self._guarded(node.body)
            return node
        finally:
            self.names.pop()

    def _tracked(self, node) -> bool:
        if isinstance(node, gast.Name):
            return isinstance(node.ctx, gast.Load) and node.id in self.names[-1]
        if isinstance(node, gast.IfExp):
            return _Sources(None, []).may_differ(node)
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
                and isinstance(node.left.value, str) and isinstance(node.right, gast.Tuple):
            # ``'%s' % (m * 2,)``: formatted as the numbers (or refused) by printing.py
            node.right.elts = [self.visit(e) for e in node.right.elts]
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
        if _is_abs(node) and self._tracked(node.args[0]) and "abs" not in self.names[-1]:
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
    return _bound([fn.args]) | _bound(fn.body) | {
        a.id for a in walk_same_scope([fn.args]) if isinstance(a, gast.Name)}


def _literal(value):
    return gast.Constant(value=value, kind=None) if isinstance(value, str) else value
