"""Faster equivalents of ``ast.iter_child_nodes`` and ``ast.walk`` for gast trees.

The analyses and converters walk each function's tree many times per conversion;
the standard library's walkers go through two nested generators per node
(``iter_child_nodes`` over ``iter_fields``). These give the same nodes in the same
order, less the leaves that stand for an operator or a context (``Load``, ``Add``,
``Eq``...: nothing under them, and no analysis asks for them; they are read through
their parent, ``node.ctx``, ``node.op``): ``child_nodes`` as a list, ``walk``
breadth first as ``ast.walk`` does (``walk_list``: the same, as a list).
"""

from __future__ import annotations

import typing
from collections import deque

import gast

_AST = gast.AST
_LEAF_BASES = (gast.expr_context, gast.operator, gast.boolop, gast.unaryop, gast.cmpop)
# Node types without fields that stand for an operator or a context: about a third
# of a function's nodes (every name has its context).
LEAVES = frozenset(leaf for base in _LEAF_BASES for leaf in base.__subclasses__())


class _NodeFields(dict):
    """``node class -> its fields that can hold nodes other than leaves``, in order,
    from the field types gast declares: ``Name`` has ``annotation`` of its four, a
    ``Constant`` none (``id``, ``ctx``, ``value``, ``kind`` never hold such a node).
    A class whose field types are not all declared keeps all its fields."""

    def __missing__(self, cls):
        types = getattr(cls, "_field_types", None) or {}
        if set(cls._fields) - set(types):
            fields = tuple(cls._fields)
        else:
            fields = tuple(f for f in cls._fields if f not in _IDENTIFIERS
                           and _may_hold_node(types[f]))
        self[cls] = fields
        return fields


# Fields that hold a string in every gast node that has them. (Not ``name``: gast
# makes the name of an ``except ... as e`` a ``Name`` node, though it declares a str.)
_IDENTIFIERS = frozenset({"id", "attr", "arg", "asname", "module", "kind", "type_comment",
                          "kwd_attrs", "tag"})


def _may_hold_node(annotation) -> bool:
    """Whether a field of this declared type can hold a node that is not a leaf."""
    if annotation in (int, object, type(None)):
        return False
    if isinstance(annotation, type) and issubclass(annotation, _AST):
        return not issubclass(annotation, _LEAF_BASES)
    parts = typing.get_args(annotation)       # list[ast.expr], ast.expr | None
    return not parts or any(_may_hold_node(part) for part in parts)


NODE_FIELDS = _NodeFields()


def child_nodes(node) -> list:
    """The direct child nodes of ``node`` but leaves, in ``ast.iter_child_nodes`` order."""
    children = []
    values = node.__dict__      # (a gast node's fields are all in it: no class defaults)
    for field in NODE_FIELDS[node.__class__]:
        value = values.get(field)
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
    fields = NODE_FIELDS
    while todo:
        current = pop()
        values = current.__dict__
        for field in fields[current.__class__]:
            value = values.get(field)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, _AST) and item.__class__ not in LEAVES])
            elif isinstance(value, _AST) and value.__class__ not in LEAVES:
                append(value)
        yield current


def walk_list(node) -> list:
    """``list(walk(node))``, built without a generator: the list is its own queue
    (each node's children are appended as the loop reaches it)."""
    found = [node]
    append, extend = found.append, found.extend
    fields = NODE_FIELDS
    for current in found:     # (the list grows as the loop goes: breadth first)
        values = current.__dict__
        for field in fields[current.__class__]:
            value = values.get(field)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, _AST) and item.__class__ not in LEAVES])
            elif isinstance(value, _AST) and value.__class__ not in LEAVES:
                append(value)
    return found
