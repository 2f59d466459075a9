"""What the runtime must know, should it stage a branch or loop, that only the source says.

A staged ``if`` or loop cannot do everything the Python one does: its body runs
once while tracing, so an ``except`` around it never sees the computation's
errors, an assignment to a ``global`` or ``nonlocal`` variable happens once, and a
loop cannot carry a variable its body deletes. Whether that is so is a question
about the code, answered here once, at conversion; the converters pass the answer
to the runtime call, which raises at the user's line only if it stages.

- ``annotate_enclosing_try(fn)``: each ``if``/``while``/``for``/conditional
  expression gets ``annos.IN_TRY``, the line of the innermost ``try`` whose
  ``except`` could catch an error Python raises on values
  (``converters/try_statements.py``) and whose body holds it in the same function
  (or None).
- ``outer_write(stmts, state, globals_, nonlocals)``: the first name a block
  assigns or deletes in a scope outside the function it becomes.
- ``deleted_name(stmts, names)``: the first of ``names`` a loop body deletes.
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.walk import child_nodes

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)
_SCOPES = (*_FUNCTIONS, gast.ClassDef)
_STAGEABLE = (gast.If, gast.While, gast.For, gast.IfExp)
_TRIES = (gast.Try, gast.TryStar)
# Statements that become functions of their own in generated code.
_CONVERTED_BLOCKS = (gast.If, gast.While, gast.For)
_UNSET = object()


def annotate_enclosing_try(fn) -> None:
    """Set ``annos.IN_TRY`` on every ``if``/``while``/``for``/``a if c else b`` in
    ``fn`` that has none yet: the line of the innermost ``try`` (with ``except``
    clauses) whose body holds it, in the same function, or None. Nodes annotated
    before keep their value, so the converters after ``control_flow`` (whose
    helper functions now hold the nodes) see what it saw."""
    stack = [(child, None) for child in child_nodes(fn)]
    while stack:
        node, try_line = stack.pop()
        if isinstance(node, _FUNCTIONS):
            try_line = None
        elif isinstance(node, _STAGEABLE) and annos.get(node, annos.IN_TRY, _UNSET) is _UNSET:
            annos.set(node, annos.IN_TRY, try_line)
        if isinstance(node, _TRIES) and annos.get(node, annos.CATCHES_VALUE_ERRORS, False):
            stack.extend((stmt, node.lineno) for stmt in node.body)
            others = node.handlers + node.orelse + node.finalbody
            stack.extend((child, try_line) for child in others)
            continue
        stack.extend((child, try_line) for child in child_nodes(node))


def outer_write(stmts, state, globals_, nonlocals):
    """``(kind, name)``, kind ``"global"`` or ``"nonlocal"``, of the first name that
    ``stmts`` (the body of a branch or loop, which becomes a function of its own,
    taking ``state`` as parameters) assigns or deletes in a scope outside that
    function; or None.

    ``globals_``/``nonlocals`` are the names the enclosing function declares
    ``global``/``nonlocal``: the block's function declares them too. A function
    nested in the block writes outside when the block calls it (by its name) and
    it declares a name ``global``, or ``nonlocal`` with no scope in between binding
    it; a function only defined there writes nothing yet."""
    bound, _ = _bindings(stmts)
    bound = (bound | set(state)) - set(globals_) - set(nonlocals)
    region = _Scope(bound, set(globals_), set(nonlocals))
    called = _called_names(stmts)
    for stmt in stmts:
        found = _first_write(stmt, [region], called)
        if found is not None:
            return found
    return None


def _called_names(stmts) -> set:
    """Names ``stmts`` call: ``f(...)``, or ``ag__.converted_call(f, ...)``."""
    names = set()
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Name):
                names.add(func.id)
            elif (annos.runtime_operator(node) == "converted_call"
                  and node.args and isinstance(node.args[0], gast.Name)):
                names.add(node.args[0].id)
        stack.extend(child_nodes(node))
    return names


def deleted_name(stmts, names):
    """The first of ``names`` that ``stmts`` (a loop body) deletes with ``del`` in the
    function the body becomes (not in the nested blocks and functions that become
    functions of their own), or None."""
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Delete):
            for target in node.targets:
                if isinstance(target, gast.Name) and target.id in names:
                    return target.id
        if isinstance(node, (*_SCOPES, *_CONVERTED_BLOCKS)):
            continue
        stack.extend(reversed(list(child_nodes(node))))
    return None


class _Scope:
    __slots__ = ("bound", "globals_", "nonlocals", "is_class")

    def __init__(self, bound, globals_, nonlocals, is_class=False):
        self.bound, self.globals_, self.nonlocals = bound, globals_, nonlocals
        self.is_class = is_class


def _first_write(node, scopes, called):
    """The first outer write under ``node``, ``scopes`` the scopes around it
    (innermost last; ``scopes[0]`` is the block's own function); ``called``: the
    names the block calls (a function it only defines writes nothing)."""
    for name in _names_written(node):
        found = _resolve(name, scopes)
        if found is not None:
            return found
    if isinstance(node, gast.Lambda):
        return None   # a lambda binds nothing outside itself
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and len(scopes) == 1 and (
            node.name not in called):
        return None
    if isinstance(node, _SCOPES):
        scopes, children = [*scopes, _scope_of(node)], node.body
    else:
        children = _children(node)
    for child in children:
        found = _first_write(child, scopes, called)
        if found is not None:
            return found
    return None


def _children(node):
    """``node``'s children, less a comprehension's own loop variables (they are the
    comprehension's, not the enclosing function's)."""
    if isinstance(node, gast.comprehension):
        return [node.iter, *node.ifs]
    return child_nodes(node)


def _names_written(node):
    """The names ``node`` itself binds or deletes in its scope."""
    if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
        return [node.id]
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return [node.name]
    if isinstance(node, (gast.Import, gast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return []


def _resolve(name, scopes):
    scope = scopes[-1]
    if name in scope.globals_:
        return "global", name
    if name not in scope.nonlocals:
        return None
    for outer in reversed(scopes[:-1]):
        if outer.is_class:
            continue
        if outer is scopes[0]:
            return None if name in outer.bound else ("nonlocal", name)
        if name in outer.nonlocals:
            continue
        if name in outer.bound:
            return None
    return "nonlocal", name


def _scope_of(node) -> _Scope:
    """The names a nested function or class binds and declares."""
    bound, declared = _bindings(node.body)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        args = node.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        bound |= {p.id for p in params}
    bound -= declared[gast.Global] | declared[gast.Nonlocal]
    return _Scope(bound, declared[gast.Global], declared[gast.Nonlocal],
                  is_class=isinstance(node, gast.ClassDef))


def _bindings(stmts):
    """``(names, declared)``: the names ``stmts`` bind or delete in their own scope,
    and ``{gast.Global: names, gast.Nonlocal: names}`` they declare."""
    declared = {gast.Global: set(), gast.Nonlocal: set()}
    bound = set()
    stack = list(stmts)
    while stack:
        sub = stack.pop()
        if isinstance(sub, (gast.Global, gast.Nonlocal)):
            declared[type(sub)].update(sub.names)
        bound.update(_names_written(sub))
        if not isinstance(sub, _SCOPES):
            stack.extend(_children(sub))
    return bound, declared
