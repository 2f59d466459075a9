"""Which names a piece of code reads, binds and modifies.

Scopes are respected: the bodies of nested functions, lambdas and comprehensions
bind their own names; the names they read from outside count as reads of the
enclosing code (a closure reads its free variables).
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.analysis.scopes import SCOPES, walk_same_scope
from autograph.walk import LEAVES, NODE_FIELDS, child_nodes, walk

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_PASSED = frozenset((gast.Name, gast.Constant))
_NAME = gast.Name


def bound_names(target) -> set[str]:
    """Names bound by an assignment target (``a``, ``a, (b, *c)``); none for ``x[i]``."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)):
        names = set()
        for elt in target.elts:
            names |= bound_names(elt)
        return names
    if isinstance(target, gast.Starred):
        return bound_names(target.value)
    return set()


def _base_name(target):
    """``x`` for ``x[i]``, ``x.a.b``, ``x[i].a``; None when the base is not a name."""
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def pattern_captures(pattern) -> frozenset:
    """Names a ``case`` pattern binds when it matches (``x``, ``[a, *rest]``, ``{**kw}``)."""
    names = set()
    for node in walk(pattern):
        for field in ("name", "rest"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                names.add(value)
    return frozenset(names)


def modified_names(stmts) -> set[str]:
    """Names that ``stmts`` rebind or mutate through item or attribute assignment.

    ``x[i] = v`` and ``x.a = v`` modify ``x``: in a staged region the new value
    of ``x`` has to be carried out of the region like a rebinding.
    """
    visitor = _ModifiedNames()
    for stmt in stmts if isinstance(stmts, list) else [stmts]:
        visitor.visit(stmt)
    return visitor.names


class _ModifiedNames(gast.NodeVisitor):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    _methods: dict = {}

    def __init__(self):
        self.names = set()

    def visit(self, node):
        # NodeVisitor.visit with each node type's method found once per class:
        # local_names runs for every function at every step of a conversion.
        cls = node.__class__
        method = self._methods.get(cls)
        if method is None:
            method = self._methods[cls] = getattr(
                type(self), "visit_" + cls.__name__, type(self).generic_visit)
        return method(self, node)

    def generic_visit(self, node):
        visit = self.visit
        for child in child_nodes(node):   # (operator and context leaves: nothing here)
            if child.__class__ not in _PASSED:    # (visit_Name, visit_Constant: nothing)
                visit(child)

    def visit_Constant(self, node):
        pass   # (NodeVisitor's own visit_Constant looks for legacy visit_Num & co.)

    def visit_Name(self, node):
        pass

    def _target(self, target):
        self.names |= bound_names(target)
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._target(elt)
        elif isinstance(target, gast.Starred):
            self._target(target.value)
        else:
            base = _base_name(target)
            if base is not None:
                self.names.add(base)

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
        if node.guard is not None:
            self.visit(node.guard)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node):
        for alias in node.names:
            self.names.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_FunctionDef(self, node):
        self.names.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def _comprehension(self, node):
        # Only a walrus inside a comprehension binds in the enclosing scope.
        for sub in walk(node):
            if isinstance(sub, gast.NamedExpr):
                self._target(sub.target)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def read_names(node) -> set[str]:
    """Names read by ``node`` (an expression, statement or list of statements).

    Reads inside nested functions, lambdas and comprehensions count when the name
    is not bound inside them: those are the values a closure captures.
    """
    names = set()
    for item in node if isinstance(node, list) else [node]:
        _collect_reads(item, names)
    return names


def _collect_reads(node, names):
    if isinstance(node, gast.Name):
        if not isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
        return
    if isinstance(node, SCOPES) or isinstance(node, _COMPREHENSIONS):
        names |= _free_names(node)
        return
    for child in child_nodes(node):
        if child.__class__ is _NAME:      # (the first case above, inlined)
            if not isinstance(child.ctx, (gast.Store, gast.Param)):
                names.add(child.id)
        else:
            _collect_reads(child, names)


def _free_names(scope) -> set[str]:
    """Names a nested scope reads from the enclosing one."""
    outer = set()
    if isinstance(scope, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        args = scope.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            _collect_reads(default, outer)
        if not isinstance(scope, gast.Lambda):
            for decorator in scope.decorator_list:
                _collect_reads(decorator, outer)
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        inner_bound = local_names(scope)
    elif isinstance(scope, gast.ClassDef):
        for expr in scope.bases + scope.decorator_list:
            _collect_reads(expr, outer)
        body, inner_bound = scope.body, set()
    else:  # comprehension
        generators = scope.generators
        _collect_reads(generators[0].iter, outer)
        inner_bound = set()
        for gen in generators:
            inner_bound |= bound_names(gen.target)
        body = [gen.iter for gen in generators[1:]]
        body += [cond for gen in generators for cond in gen.ifs]
        body += [scope.key, scope.value] if isinstance(scope, gast.DictComp) else [scope.elt]
    inner_reads = set()
    for item in body:
        _collect_reads(item, inner_reads)
    return outer | (inner_reads - inner_bound)


def local_names(fn) -> set[str]:
    """Names local to function ``fn``: its parameters and every name its body binds,
    less those declared ``global`` or ``nonlocal``.

    What binds is what ``modified_names`` finds but item and attribute assignment:
    assignment targets (``x: int`` without a value binds nothing here), loop and
    ``with`` targets, ``except ... as`` names, ``del``, ``:=`` (also in a
    comprehension), ``case`` captures, imports and definitions; the bodies of
    nested functions, lambdas and classes are not entered, nor a ``with``'s
    context expression or an ``except``'s type."""
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    names = {p.id for p in params}
    declared = set()
    stack = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    pop, push, extend = stack.pop, stack.append, stack.extend
    kinds, fields_of, leaves, node_type = _BINDING_KINDS, NODE_FIELDS, LEAVES, gast.AST
    while stack:
        node = pop()
        cls = node.__class__
        kind = kinds.get(cls)
        if kind is None:         # binds nothing itself: its children may
            values = node.__dict__
            for field in fields_of[cls]:
                value = values.get(field)
                if value.__class__ is list:
                    extend([item for item in value if isinstance(item, node_type)
                            and item.__class__ not in leaves])
                elif isinstance(value, node_type) and value.__class__ not in leaves:
                    push(value)
        elif kind == _ASSIGNS:
            for target in node.targets:
                names |= bound_names(target)
            push(node.value)
        elif kind == _TARGET_VALUE:
            if cls is not gast.AnnAssign or node.value is not None:
                names |= bound_names(node.target)
                push(node.value)
        elif kind == _FOR:
            names |= bound_names(node.target)
            extend([node.target, node.iter, *node.body, *node.orelse])
        elif kind == _WITH_ITEM:
            if node.optional_vars is not None:
                names |= bound_names(node.optional_vars)
        elif kind == _HANDLER:
            if node.name is not None:
                names |= bound_names(node.name)
            extend(node.body)
        elif kind == _DELETE:
            for target in node.targets:
                names |= bound_names(target)
        elif kind == _CASE:
            names |= pattern_captures(node.pattern)
            extend([node.pattern, *([node.guard] if node.guard is not None else []),
                    *node.body])
        elif kind == _IMPORT:
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif kind == _DEFINITION:
            names.add(node.name)
        elif kind == _COMPREHENSION:   # (only a walrus in it binds out here)
            for sub in walk(node):
                if sub.__class__ is gast.NamedExpr:
                    names |= bound_names(sub.target)
        elif kind == _DECLARATION:
            declared.update(node.names)
        # (_NOTHING: a name, a constant, a lambda)
    return names - declared


# Node class -> what ``local_names`` does with it (a class absent: its children).
(_NOTHING, _ASSIGNS, _TARGET_VALUE, _FOR, _WITH_ITEM, _HANDLER, _DELETE, _CASE, _IMPORT,
 _DEFINITION, _COMPREHENSION, _DECLARATION) = range(12)
_BINDING_KINDS = {
    gast.Name: _NOTHING, gast.Constant: _NOTHING, gast.Lambda: _NOTHING,
    gast.Assign: _ASSIGNS, gast.AugAssign: _TARGET_VALUE, gast.AnnAssign: _TARGET_VALUE,
    gast.NamedExpr: _TARGET_VALUE, gast.For: _FOR, gast.AsyncFor: _FOR,
    gast.withitem: _WITH_ITEM, gast.ExceptHandler: _HANDLER, gast.Delete: _DELETE,
    gast.match_case: _CASE, gast.Import: _IMPORT, gast.ImportFrom: _IMPORT,
    gast.FunctionDef: _DEFINITION, gast.AsyncFunctionDef: _DEFINITION,
    gast.ClassDef: _DEFINITION, gast.ListComp: _COMPREHENSION,
    gast.SetComp: _COMPREHENSION, gast.DictComp: _COMPREHENSION,
    gast.GeneratorExp: _COMPREHENSION, gast.Global: _DECLARATION,
    gast.Nonlocal: _DECLARATION}


def mutated_objects(stmts) -> tuple[set, set]:
    """``(mutated, rebound)`` for ``stmts``, in their own scope: the names whose
    objects they change in place (``x.a = v``, ``x[k] += v``, ``del x.a``, and
    ``x = <runtime>.setitem(x, ...)``, which the slices converter makes of
    ``x[k] = v``), and the names they bind or delete otherwise.

    A name in the first set and not the second still denotes the same object after
    the statements: what changed is that object's state."""
    mutated, rebound = set(), set()
    kinds = _TARGET_KINDS
    for node in walk_same_scope(stmts):
        kind = kinds.get(node.__class__)
        if kind is None:
            continue               # (binds nothing: most nodes)
        if kind == "assign":
            if is_setitem(node):
                mutated.add(node.targets[0].id)
                continue
            targets = node.targets
        elif kind == "target":
            targets = [node.target]
        elif kind == "with":
            if node.optional_vars is None:
                continue
            targets = [node.optional_vars]
        elif kind == "handler":
            if node.name is None:
                continue
            targets = [node.name]
        elif kind == "definition":
            rebound.add(node.name)
            continue
        else:   # "import"
            rebound.update((a.asname or a.name).split(".")[0] for a in node.names)
            continue
        for target in targets:
            _split_target(target, mutated, rebound)
    return mutated, rebound


# Node class -> how ``mutated_objects`` finds what it binds (found by class, not by
# a chain of isinstance tests per node).
_TARGET_KINDS = {
    gast.Assign: "assign", gast.Delete: "assign",
    gast.AugAssign: "target", gast.AnnAssign: "target", gast.For: "target",
    gast.AsyncFor: "target", gast.NamedExpr: "target",
    gast.withitem: "with", gast.ExceptHandler: "handler",
    gast.FunctionDef: "definition", gast.AsyncFunctionDef: "definition",
    gast.ClassDef: "definition", gast.Import: "import", gast.ImportFrom: "import"}


def _split_target(target, mutated, rebound):
    if isinstance(target, gast.Name):
        rebound.add(target.id)
    elif isinstance(target, (gast.Tuple, gast.List)):
        for elt in target.elts:
            _split_target(elt, mutated, rebound)
    elif isinstance(target, gast.Starred):
        _split_target(target.value, mutated, rebound)
    else:
        base = _base_name(target)
        if base is not None:
            mutated.add(base)


def items_assigned(stmts) -> set[str]:
    """The names whose items ``stmts`` assign, in their own scope
    (``x = ag__.setitem(x, ...)``, the slices converter's ``x[k] = v``)."""
    return {node.targets[0].id for node in walk_same_scope(stmts) if is_setitem(node)}


def is_setitem(node) -> bool:
    """Whether ``node`` is ``x = ag__.setitem(x, ...)`` (the slices converter's
    ``x[k] = v``)."""
    value = getattr(node, "value", None)
    return (isinstance(node, gast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
            and annos.runtime_operator(value) == "setitem"
            and bool(value.args) and isinstance(value.args[0], gast.Name)
            and value.args[0].id == node.targets[0].id)
