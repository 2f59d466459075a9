"""Scopes: the node types that open one, and the nodes that run in a given scope.

A nested function, lambda or class has a scope of its own: its body runs there.
What its definition evaluates (decorators, default values, base classes) runs in
the enclosing scope, where the definition stands.
"""

from __future__ import annotations

import gast

from autograph.walk import child_nodes

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def walk_same_scope(node, skip=()):
    """``node`` (a node or a list of statements) and the nodes under it that run in
    the same scope, depth first. A nested function, lambda or class is yielded with
    the parts of its definition evaluated here, not its body; a node of a type in
    ``skip`` is neither yielded nor entered."""
    for root in node if isinstance(node, list) else [node]:
        stack = [root]
        while stack:
            current = stack.pop()
            yield current
            if isinstance(current, SCOPES):
                stack.extend(_evaluated_by_definition(current))
                continue
            if skip:
                stack.extend(child for child in child_nodes(current)
                             if not isinstance(child, skip))
            else:
                stack.extend(child_nodes(current))


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
