"""Which names of a function an ``if`` may leave Python numbers of two types.

A staged ``if`` joins what its branches give into one traced scalar; where they give
Python numbers of two types (``m = 3`` / ``m = 1.5``) the runtime notes which
(``runtime/python_ints.Either``), and ``converters/joined_numbers.py`` rewrites the
arithmetic on such names so the note goes on. Which names: those an ``if`` or a
conditional expression binds whose values' sources (``Sources``) hold two Python number
types, and those computed from them by arithmetic (``joined_names``).
"""

from __future__ import annotations

import gast

from autograph.analysis.scopes import walk_same_scope


def joined_names(fn, ag="ag__") -> set:
    """The names an ``if`` of ``fn`` (its own scope) binds, or a conditional expression
    gives, that may hold Python numbers of two types (``Sources``); and those computed
    from one of them by arithmetic (``k = m * 2``), where they may too."""
    nodes = walk_same_scope(fn.body)
    candidates = set()
    for node in nodes:
        if node.__class__ is gast.If:
            candidates.update(bound(node.body + node.orelse))
        elif node.__class__ in _ASSIGNS and node.value is not None \
                and any(n.__class__ is gast.IfExp for n in walk_same_scope(node.value)):
            candidates.update(_targets(node))
    if not candidates:
        return set()
    sources = Sources(fn, nodes, ag)
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


class Sources:
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


def bound(statements) -> set:
    """The names ``statements`` (or nodes) bind in their own scope."""
    return {n.id for n in walk_same_scope(statements)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _targets(node) -> set:
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    return bound(targets)


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
    return is_abs(value) and _computes_from(value.args[0], names)


def is_abs(node) -> bool:
    """Whether ``node`` is ``abs(x)``, one plain argument."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "abs" and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], gast.Starred)
