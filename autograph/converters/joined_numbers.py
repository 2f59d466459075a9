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
_FUNCTIONS = frozenset({gast.FunctionDef, gast.AsyncFunctionDef})


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the arithmetic of ``node`` on names its ``if``s may join (and guard
    their other reads)."""
    return _JoinedNumbers(ctx, {}).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where some function of ``node`` has such a name."""
    nodes = walk_list(node) if nodes is None else nodes
    ag = ctx.runtime_name
    known = {id(sub): joined_names(sub, ag) for sub in nodes
             if sub.__class__ in _FUNCTIONS and sub.body}
    if not any(known.values()):
        return node
    return _JoinedNumbers(ctx, known).visit(node)


def needed(nodes, ctx=None) -> bool:
    """Whether the function walked as ``nodes`` holds an ``if`` or a conditional
    expression (one of its names may then hold numbers of two types)."""
    return any(sub.__class__ in _JOINS for sub in nodes)


def joined_names(fn, ag="ag__") -> set:
    """The names an ``if`` of ``fn`` (its own scope) binds, or a conditional expression
    gives, that may hold Python numbers of two types (``_Sources``); and those computed
    from one of them by arithmetic (``k = m * 2``), where they may too."""
    nodes = walk_same_scope(fn.body)
    candidates = set()
    for node in nodes:
        if node.__class__ is gast.If:
            candidates.update(_bound(node.body + node.orelse))
        elif node.__class__ in _ASSIGNS and node.value is not None \
                and any(n.__class__ is gast.IfExp for n in walk_same_scope(node.value)):
            candidates.update(_targets(node))
    if not candidates:
        return set()
    sources = _Sources(fn, nodes, ag)
    names = {name for name in candidates if sources.name_may_differ(name)}
    if not names:
        return names
    assignments = [(_targets(n), n.value) for n in nodes
                   if n.__class__ in _ASSIGNS and n.value is not None]
    grown = True
    while grown:
        grown = False
        for targets, value in assignments:
            if not targets <= names and _computes_from(value, names):
                new = {t for t in targets - names if sources.name_may_differ(t)}
                names |= new
                grown = grown or bool(new)
    return names


_ASSIGNS = frozenset({gast.Assign, gast.AugAssign, gast.AnnAssign})
# Calls whose result is a Python number of a known type (as the converters before
# this one write them: ``int(x)`` is ``ag__.int_(x)``).
_NUMBER_CALLS = {"int": "int", "float": "float", "len": "int", "round": "int",
                 "int_": "int", "float_": "float", "len_": "int", "round_": "int"}
_COUNTING = frozenset({"range", "range_", "enumerate", "enumerate_"})


class _Sources:
    """Where the values of a function's names may come from, each a Python number
    type (``int`` from ``3``, ``float`` from ``0.5`` or a true division) or a value
    of unknown type (the parameters, a call, an attribute). A name whose values come
    from numbers of two types (``m = 3`` / ``m = 1.5``; ``x = c`` / ``x = x / 2``
    with an int ``c``... is not told: only literals' and known calls' types count,
    which keeps ``n = 3 * n + 1``, counters and ``retval`` of ``return mid`` /
    ``return -1`` as written) is one an ``if`` may join. Worked out on demand."""

    def __init__(self, fn, nodes, ag):
        self.ag = ag
        self.bindings = {}   # name -> the expressions bound to it (None: unknown)
        if fn is not None:
            args = fn.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                        args.kwarg]:
                if isinstance(arg, gast.Name):
                    # (the parameters as one source: a caller passing a Python int
                    # and a Python float for two of them is rare; arrays are arrays)
                    self.bindings[arg.id] = [_PARAMETER]
        assigned = set()   # the ids of the names the assignments bind
        for node in nodes:
            cls = node.__class__
            if cls in _ASSIGNS and cls is not gast.AugAssign and node.value is not None:
                if self._placeholder(node.value):
                    continue   # (`retval = ag__.UndefinedReturn('retval')`)
                targets = node.targets if cls is gast.Assign else [node.target]
                for target in targets:
                    for name, value in _pairs(target, node.value):
                        assigned.add(id(name))
                        self.bindings.setdefault(name.id, []).append(value)
            elif cls is gast.AugAssign and node.target.__class__ is gast.Name:
                assigned.add(id(node.target))
                self.bindings.setdefault(node.target.id, []).append(
                    gast.BinOp(left=node.target, op=node.op, right=node.value))
            elif cls is gast.For:
                assigned.update(self._counted(node))
        for node in nodes:
            if node.__class__ is gast.Name and node.ctx.__class__ is gast.Store \
                    and id(node) not in assigned:
                self.bindings.setdefault(node.id, []).append(None)   # (unknown)
        self.memo, self.depth, self.low = {}, {}, _DEEPEST

    def _counted(self, loop) -> list:
        """The ids of the names a ``for`` over ``range``/``enumerate`` binds to its
        count (bound here as ints)."""
        call = loop.iter
        if call.__class__ is not gast.Call or _called_name(call) not in _COUNTING:
            return []
        target = loop.target
        if _called_name(call).startswith("enumerate"):
            if target.__class__ is not gast.Tuple or not target.elts \
                    or target.elts[0].__class__ is not gast.Name:
                return []
            target = target.elts[0]
        if target.__class__ is not gast.Name:
            return []
        self.bindings.setdefault(target.id, []).append(gast.Constant(value=0, kind=None))
        return [id(target)]

    def _placeholder(self, value) -> bool:
        return value.__class__ is gast.Call and value.func.__class__ is gast.Attribute \
            and value.func.value.__class__ is gast.Name and value.func.value.id == self.ag \
            and value.func.attr in ("Undefined", "UndefinedReturn")

    def name_may_differ(self, name) -> bool:
        return len(self._of_name(name) & _NUMBER_KINDS) > 1

    def may_differ(self, node) -> bool:
        return len(self.of(node) & _NUMBER_KINDS) > 1

    def _of_name(self, name) -> frozenset:
        found = self.memo.get(name)
        if found is not None:
            return found
        values = self.bindings.get(name)
        if values is None:
            return frozenset({name})   # (a global)
        depth = self.depth.get(name)
        if depth is not None:   # (in a cycle: what it adds is its own sources)
            self.low = min(self.low, depth)
            return frozenset()
        self.depth[name] = depth = len(self.depth)
        outer_low, self.low = self.low, _DEEPEST
        try:
            found = frozenset().union(*(
                self.of(value) if value is not None else {"?" + name} for value in values))
        finally:
            del self.depth[name]
        if self.low >= depth:   # (no name still being worked out was read)
            self.memo[name] = found
        self.low = min(outer_low, self.low)
        return found

    def of(self, node) -> frozenset:
        cls = node.__class__
        if cls is gast.Constant:
            return frozenset({type(node.value).__name__})
        if cls is gast.Name:
            return self._of_name(node.id) if node is not _PARAMETER else _PARAMETERS
        if cls is gast.BinOp:
            return _combined(self.of(node.left), self.of(node.right),
                             node.op.__class__ is gast.Div)
        if cls is gast.UnaryOp:
            return frozenset({"bool"}) if node.op.__class__ is gast.Not \
                else self.of(node.operand)
        if cls is gast.IfExp:
            return self.of(node.body) | self.of(node.orelse)
        if cls is gast.BoolOp:
            return frozenset().union(*(self.of(v) for v in node.values))
        if cls is gast.Compare:
            return frozenset({"bool"})
        if cls is gast.Call:
            return self._of_call(node)
        return frozenset({id(node)})

    def _of_call(self, node) -> frozenset:
        name = _called_name(node)
        if name is not None and (node.func.__class__ is gast.Attribute
                                 or name not in self.bindings) and not node.keywords:
            if len(node.args) == 1 and name in _NUMBER_CALLS:
                return frozenset({_NUMBER_CALLS[name]})
            if name in _PICKS and node.args and not any(
                    a.__class__ is gast.Starred for a in node.args):
                return frozenset().union(*(self.of(a) for a in node.args))
        # (the calls of one function: one source)
        return frozenset({_dotted(node.func) or id(node)})



_DEEPEST = float("inf")
_RANK = {"bool": 0, "int": 1, "float": 2, "complex": 3}


def _combined(left, right, division) -> frozenset:
    """The sources of ``left <op> right``: the Python number type of each pair of
    number types (``int * float`` a float, ``True + True`` an int; ``/`` a float at
    least), and the unknown sources of both, with a number type that would change
    theirs (``x * 0.5``: a float; ``3 * n`` has ``n``'s type)."""
    floor = "float" if division else "int"
    found = {k for k in left | right if k not in _RANK}
    for a in left & _NUMBER_KINDS:
        for b in right & _NUMBER_KINDS:
            found.add(max(a, b, floor, key=_RANK.get))
    if found - _NUMBER_KINDS:   # (an unknown operand)
        found.update(max(k, floor, key=_RANK.get) for k in (left | right) & _NUMBER_KINDS
                     if division or _RANK[k] >= _RANK["float"])
        if division and "complex" not in found:
            found.add("float")   # (`a / b` of numbers is a float)
    return frozenset(found)


_NUMBER_KINDS = frozenset({"int", "float", "bool", "complex"})
# Calls giving one of their arguments (``abs`` is rewritten as an operator).
_PICKS = frozenset({"abs", "max", "min", "abs_", "max_", "min_"})


def _pairs(target, value):
    """``(name, value)`` for each name the assignment ``target = value`` binds: the
    value, an item of a display unpacked into a display of as many, or None."""
    if target.__class__ is gast.Name:
        return [(target, value)]
    if target.__class__ in (gast.Tuple, gast.List):
        if value.__class__ in (gast.Tuple, gast.List) and len(value.elts) == len(
                target.elts) and not any(e.__class__ is gast.Starred for e in target.elts):
            return [p for t, v in zip(target.elts, value.elts, strict=True)
                    for p in _pairs(t, v)]
        return [(n, None) for n in walk_same_scope(target)
                if n.__class__ is gast.Name and n.ctx.__class__ is gast.Store]
    return []   # (an item or attribute written: no name bound)


def _dotted(node):
    """``math.sin`` for ``math.sin``; None for anything but names and attributes."""
    if node.__class__ is gast.Name:
        return node.id
    if node.__class__ is gast.Attribute:
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None
_PARAMETERS = frozenset({"parameter"})
_PARAMETER = gast.Name(id="", ctx=gast.Load(), annotation=None, type_comment=None)


def _called_name(call):
    """The name a call calls: ``range`` of ``range(n)`` and of the runtime's
    ``range_``; else None."""
    func = call.func
    if func.__class__ is gast.Name:
        return func.id
    if func.__class__ is gast.Attribute and func.value.__class__ is gast.Name:
        return func.attr
    return None


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
        self.names.append(self.names[-1] - _bound([node.args]) if self.names else set())
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
            return _Sources(None, [], self.ag).may_differ(node)
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
