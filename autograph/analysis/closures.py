"""Closures: the names a function shares with the functions nested in it.

Python keeps a variable that a nested function, lambda or generator expression
reads, or assigns through ``nonlocal``, in a *cell* that both share: the nested
code sees every later assignment, and its own assignments are seen outside.
A converted block is a function of its own, so a name it rebinds must be written
into that cell, not into a parameter of the block's function, or code sharing the
cell would not see it (``control_flow`` keeps such names in cell form).

``closure_uses(fn)`` finds, for each nested scope whose body runs later (a
``def``, a ``lambda``, a generator expression that is not consumed on the spot),
the names it reads from ``fn`` or further out, and the names it assigns there
through ``nonlocal``. A scope that runs where it stands (a list, set or dict
comprehension, a class body, a generator expression passed straight to a call,
the operand lambdas of ``ag__.and_`` and its kind) shares nothing beyond that
moment: what it reads is read there, like any other expression.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from autograph.analysis import annos
from autograph.analysis.activity import bound_names, local_names
from autograph.walk import child_nodes, walk

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
# Runtime operators that call the lambdas they are given before they return.
IMMEDIATE_OPERATORS = frozenset({"and_", "or_", "not_", "if_exp", "compare_chain",
                                 "assert_stmt", "locals_", "dir_", "raise_if",
                                 "raise_unless", "generator_"})


@dataclass(frozen=True)
class Capture:
    """One nested scope whose body runs later: ``node``, the names it ``reads``
    from outside and those it ``writes`` outside (``nonlocal``, or a walrus in a
    generator expression)."""

    node: gast.AST
    reads: frozenset
    writes: frozenset


@dataclass(frozen=True)
class Closures:
    """The nested scopes of one function that may outlive the statement defining
    them (``captures``), and what they share with it."""

    captures: tuple

    @property
    def reads(self) -> frozenset:
        return frozenset().union(*(c.reads for c in self.captures))

    @property
    def writes(self) -> frozenset:
        return frozenset().union(*(c.writes for c in self.captures))

    def reads_outside(self, inside: set) -> frozenset:
        """Names read by the scopes whose node is not in ``inside`` (a set of node
        ``id``s): closures defined elsewhere, which may be called at any time."""
        return frozenset().union(
            *(c.reads | c.writes for c in self.captures if id(c.node) not in inside))


# What ``closure_uses`` finds in a function with no nested scope.
NO_CLOSURES = Closures(())


def closure_uses(fn) -> Closures:
    """The nested scopes of ``fn`` (a function node) that run later, with the names
    each shares with ``fn`` (or with a scope around it). Nested scopes inside those
    count for the outermost one. Lambdas that generated code passes to the
    runtime's immediate operators (``annos.RUNTIME``) run on the spot."""
    immediate = _LazyImmediate(fn)
    found = []
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    _find(body, frozenset(), immediate, found)
    return Closures(tuple(found))


def immediate_lambdas(fn) -> frozenset:
    """``id`` of each lambda that generated code passes to a runtime operator that
    calls it at once (``ag__.and_(lambda: a, lambda: b)``)."""
    found = set()
    for node in walk(fn):
        if annos.runtime_operator(node) in IMMEDIATE_OPERATORS:
            found.update(id(arg) for arg in node.args if isinstance(arg, gast.Lambda))
    return frozenset(found)


class _LazyImmediate:
    """``immediate_lambdas(fn)``, found on the first question (a function without
    lambdas never asks: no walk of its tree)."""

    __slots__ = ("fn", "ids")

    def __init__(self, fn):
        self.fn, self.ids = fn, None

    def __contains__(self, ident) -> bool:
        if self.ids is None:
            self.ids = immediate_lambdas(self.fn)
        return ident in self.ids


def _find(nodes, shadowed, immediate, found):
    """Record the deferred scopes under ``nodes``, which run in the function itself
    or in a scope that runs on the spot and binds ``shadowed``."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, _FUNCTIONS) or (
                isinstance(node, gast.Lambda) and id(node) not in immediate):
            _find(_definition_parts(node), shadowed, immediate, found)
            reads, writes = _shared(node)
            found.append(Capture(node, frozenset(reads - shadowed),
                                 frozenset(writes - shadowed)))
        elif isinstance(node, gast.Lambda):      # called at once: its body runs here
            _find(_definition_parts(node), shadowed, immediate, found)
            _find([node.body], shadowed | local_names(node), immediate, found)
        elif isinstance(node, gast.GeneratorExp) and not annos.get(node, annos.CONSUMED, False):
            _find([node.generators[0].iter], shadowed, immediate, found)
            reads, writes = _shared(node)
            found.append(Capture(node, frozenset(reads - shadowed),
                                 frozenset(writes - shadowed)))
        elif isinstance(node, _COMPREHENSIONS):
            _find([node.generators[0].iter], shadowed, immediate, found)
            targets = set()
            for gen in node.generators:
                targets |= bound_names(gen.target)
            _find(_comprehension_parts(node), shadowed | targets, immediate, found)
        else:
            if isinstance(node, gast.Call):
                for arg in node.args:      # `sum(x * w for x in xs)` runs on the spot
                    if isinstance(arg, gast.GeneratorExp):
                        annos.set(arg, annos.CONSUMED, True)
            # A class body runs where it stands; its methods see past its names.
            stack.extend(reversed(list(child_nodes(node))))


def _definition_parts(scope):
    """What a ``def`` or ``lambda`` evaluates where it stands."""
    args = scope.args
    parts = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if isinstance(scope, _FUNCTIONS):
        parts += scope.decorator_list
    return parts


def _comprehension_parts(node):
    """The parts of a comprehension that run in its own scope."""
    parts = [gen.iter for gen in node.generators[1:]]
    parts += [cond for gen in node.generators for cond in gen.ifs]
    parts += [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
    return parts


def _shared(scope) -> tuple[set, set]:
    """``(reads, writes)``: the names the body of ``scope`` reads and assigns
    outside itself, its nested scopes included."""
    if isinstance(scope, _COMPREHENSIONS):
        bound = set()
        for gen in scope.generators:
            bound |= bound_names(gen.target)
        body = _comprehension_parts(scope)
        declared = set()
    else:
        bound = local_names(scope)
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        declared = _declared_nonlocal(body)
    reads, writes = set(), set(declared)
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load) and node.id not in bound:
                reads.add(node.id)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            if node.target.id not in bound:   # `x += 1` reads `x` too
                reads.add(node.target.id)
            stack.append(node.value)
        elif isinstance(node, gast.NamedExpr) and isinstance(scope, _COMPREHENSIONS):
            writes |= bound_names(node.target)     # binds in the enclosing function
            stack.append(node.value)
        elif isinstance(node, (*_FUNCTIONS, gast.Lambda, *_COMPREHENSIONS)):
            if isinstance(node, _COMPREHENSIONS):
                stack.append(node.generators[0].iter)
            else:
                stack.extend(_definition_parts(node))
            inner_reads, inner_writes = _shared(node)
            reads |= inner_reads - bound
            writes |= inner_writes - bound
        else:
            stack.extend(child_nodes(node))
    return reads, writes


def _declared_nonlocal(body) -> set:
    """The names ``body`` (a function's statements) declares ``nonlocal``."""
    names = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Nonlocal):
            names.update(node.names)
        elif not isinstance(node, (*_FUNCTIONS, gast.Lambda, gast.ClassDef, *_COMPREHENSIONS)):
            stack.extend(child_nodes(node))
    return names
