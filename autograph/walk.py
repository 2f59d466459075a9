"""Faster equivalents of ``ast.iter_child_nodes`` and ``ast.walk`` for gast trees.

The analyses and converters walk each function's tree many times per conversion;
the standard library's walkers go through two nested generators per node
(``iter_child_nodes`` over ``iter_fields``). These give the same nodes in the same
order, less the leaves that stand for an operator or a context (``Load``, ``Add``,
``Eq``...: nothing under them, and no analysis asks for them; they are read through
their parent, ``node.ctx``, ``node.op``): ``child_nodes`` as a list, ``walk``
breadth first as ``ast.walk`` does.
"""

from __future__ import annotations

from collections import deque

import gast

_AST = gast.AST
# Node types without fields that stand for an operator or a context: about a third
# of a function's nodes (every name has its context).
LEAVES = frozenset(
    leaf for base in (gast.expr_context, gast.operator, gast.boolop, gast.unaryop, gast.cmpop)
    for leaf in base.__subclasses__())


def child_nodes(node) -> list:
    """The direct child nodes of ``node`` but leaves, in ``ast.iter_child_nodes`` order."""
    children = []
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            children += [item for item in value
                         if isinstance(item, _AST) and item.__class__ not in LEAVES]
        elif isinstance(value, _AST) and value.__class__ not in LEAVES:
            children.append(value)
    return children


def walk(node):
    """``node`` and every node under it but leaves, breadth first, as ``ast.walk``
    yields them."""
    todo = deque((node,))
    pop, append, extend = todo.popleft, todo.append, todo.extend
    while todo:
        current = pop()
        for field in current._fields:
            value = getattr(current, field, None)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, _AST) and item.__class__ not in LEAVES])
            elif isinstance(value, _AST) and value.__class__ not in LEAVES:
                append(value)
        yield current
