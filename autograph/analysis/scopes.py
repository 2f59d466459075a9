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
_SCOPE_CLASSES = frozenset(SCOPES)


def walk_same_scope(node, skip=()) -> list:
    """``node`` (a node or a list of statements) and the nodes under it that run in
    the same scope, depth first, as a list. A nested function, lambda or class is
    given with the parts of its definition evaluated here, not its body; a node of a
    type in ``skip`` is neither given nor entered. (Operator and context leaves, as
    ``walk.child_nodes`` leaves them out.) Built without a generator: this walk runs
    several times per block."""
    found = []
    found_append = found.append
    fields, leaves, scopes, node_type = NODE_FIELDS, LEAVES, _SCOPE_CLASSES, _AST
    name_class = gast.Name
    for root in node if isinstance(node, list) else [node]:
        stack = [root]
        pop, append, extend = stack.pop, stack.append, stack.extend
        while stack:
            current = pop()
            found_append(current)
            cls = current.__class__
            values = current.__dict__
            if cls is name_class:
                if values.get("annotation") is None:
                    continue          # (nothing under it)
            elif cls in scopes:
                extend(_evaluated_by_definition(current))
                continue
            # (walk.child_nodes, inlined)
            for field in fields[cls]:
                value = values.get(field)
                if value.__class__ is list:
                    if skip:
                        extend([item for item in value
                                if isinstance(item, node_type) and item.__class__ not in leaves
                                and not isinstance(item, skip)])
                    else:
                        extend([item for item in value
                                if isinstance(item, node_type)
                                and item.__class__ not in leaves])
                elif (isinstance(value, node_type) and value.__class__ not in leaves
                      and not (skip and isinstance(value, skip))):
                    append(value)
    return found


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
