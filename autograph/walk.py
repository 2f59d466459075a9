"""Faster equivalents of ``ast.iter_child_nodes`` and ``ast.walk`` for gast trees.

The analyses and converters walk each function's tree many times per conversion;
the standard library's walkers go through two nested generators per node
(``iter_child_nodes`` over ``iter_fields``). These give the same nodes in the same
order: ``child_nodes`` as a list, ``walk`` breadth first as ``ast.walk`` does.
"""

from __future__ import annotations

from collections import deque

import gast

_AST = gast.AST


def child_nodes(node) -> list:
    """The direct child nodes of ``node``, in ``ast.iter_child_nodes`` order."""
    children = []
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            children += [item for item in value if isinstance(item, _AST)]
        elif isinstance(value, _AST):
            children.append(value)
    return children


def walk(node):
    """``node`` and every node under it, breadth first, as ``ast.walk`` yields them."""
    todo = deque((node,))
    pop, extend = todo.popleft, todo.extend
    while todo:
        current = pop()
        extend(child_nodes(current))
        yield current
