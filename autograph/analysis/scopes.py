"""Scopes: the node types that open one, and the nodes that run in a given scope.

A nested function, lambda or class has a scope of its own: its body runs there.
What its definition evaluates (decorators, default values, base classes) runs in
the enclosing scope, where the definition stands.
"""

from __future__ import annotations

import gast

from autograph.walk import LEAVES, NODE_FIELDS

_AST = gast.AST

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def walk_same_scope(node, skip=()):
    """``node`` (a node or a list of statements) and the nodes under it that run in
    the same scope, depth first. A nested function, lambda or class is yielded with
    the parts of its definition evaluated here, not its body; a node of a type in
    ``skip`` is neither yielded nor entered. (Operator and context leaves, as
    ``walk.child_nodes`` leaves them out.)"""
    for root in node if isinstance(node, list) else [node]:
        stack = [root]
        pop, append, extend = stack.pop, stack.append, stack.extend
        while stack:
            current = pop()
            yield current
            if isinstance(current, SCOPES):
                extend(_evaluated_by_definition(current))
                continue
            # (walk.child_nodes, inlined: this walk runs several times per block)
            for field in NODE_FIELDS[current.__class__]:
                value = getattr(current, field, None)
                if value.__class__ is list:
                    extend([item for item in value
                            if isinstance(item, _AST) and item.__class__ not in LEAVES
                            and not (skip and isinstance(item, skip))])
                elif (isinstance(value, _AST) and value.__class__ not in LEAVES
                      and not (skip and isinstance(value, skip))):
                    append(value)


def _evaluated_by_definition(scope):
    """The parts of a definition that run where it stands."""
    if isinstance(scope, gast.ClassDef):
        return [*scope.decorator_list, *scope.bases, *(k.value for k in scope.keywords)]
    args = scope.args
    defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    return defaults if isinstance(scope, gast.Lambda) else [*scope.decorator_list, *defaults]


def assigns_in_scope(node) -> bool:
    """Whether ``node`` holds an assignment expression (``y := f()``) that binds in
    the scope ``node`` runs in (one in a comprehension does; one in a nested
    function or lambda does not)."""
    return any(isinstance(sub, gast.NamedExpr) for sub in walk_same_scope(node))
