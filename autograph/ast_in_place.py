"""``ast`` <-> ``gast`` by changing each node's class in place, for trees used once.

``ast_bridge.to_gast``/``to_ast`` build a second tree, node by node. Where the tree
given is used no more (the parse of a function, taken apart into its gast form; a
converted tree compiled and dropped), the same tree can serve: on the Pythons whose
node types this is written for (``AVAILABLE``) an ``ast`` node and its gast twin
differ only in their class and in a few fields, so each node's class is changed and
those fields are set, and no node is made but the leaves (``Load``, ``Add``...),
which the parser shares between trees and gast does not.

    nodes = walk_as_gast(definition)       # ast nodes, in walk_list order of their twins
    ...                                    # (``definition`` is still an ast tree here)
    tree, nodes = to_gast(definition, nodes)

    tree, missing = to_ast(gast_tree)      # as ast_bridge.to_ast_noting_locations

The results are the trees ``ast_bridge`` makes (``tests/autograph/test_ast_in_place.py``
compares them over the standard library), but for attributes the target class does
not have (a gast ``Name``'s ``annotation`` left on the ``ast.Name``, annotations of
the converters), which ``compile`` does not read.
"""

from __future__ import annotations

import ast
import sys

import gast

from autograph.walk import LEAVES, NODE_FIELDS, walk_list

# The Pythons where every node type converts as written here (``ast_bridge``'s own
# special cases, and fields equal in both but for those).
AVAILABLE = sys.version_info[:2] == (3, 11)

_LEAF_FIELDS = ("ctx", "op")       # the fields holding one leaf (Compare's ``ops``: a list)
_AST_LEAF_CLASSES = frozenset(
    leaf for base in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    for leaf in base.__subclasses__())
_DEFINITIONS = frozenset(("FunctionDef", "AsyncFunctionDef", "ClassDef"))


# -- ast -> gast ----------------------------------------------------------------------

# What a node's class needs besides its new class and its leaves (a plan's kind).
_GENERIC, _NAME, _ARG, _COMPARE, _DEFINITION, _EXCEPT, _ASSIGN, _ARGUMENTS = range(8)


class _ToGastPlans(dict):
    """``ast class -> (gast twin, the twin's fields that may hold nodes, kind, its
    fields holding one leaf)``."""

    def __missing__(self, cls):
        twin = gast.Name if cls is ast.arg else getattr(gast, cls.__name__, None)
        if twin is None:
            raise NotImplementedError(f"no gast node type for ast.{cls.__name__}")
        kind = {ast.Name: _NAME, ast.arg: _ARG, ast.Compare: _COMPARE,
                ast.ExceptHandler: _EXCEPT}.get(cls, _GENERIC)
        if cls.__name__ in _DEFINITIONS:
            kind = _DEFINITION
        leaf_fields = tuple(f for f in _LEAF_FIELDS if f in cls._fields)
        plan = self[cls] = (twin, NODE_FIELDS[twin], kind, leaf_fields)
        return plan


_TO_GAST = _ToGastPlans()


def walk_as_gast(tree) -> list:
    """The nodes of the ``ast`` tree ``tree`` in the order ``walk_list`` gives their
    twins in the gast tree (leaves left out), but the name of an ``except ... as
    e``, which the ast tree holds as a string (``to_gast`` walks again there)."""
    found = [tree]
    extend, append = found.extend, found.append
    plans, leaves, node_type = _TO_GAST, _AST_LEAF_CLASSES, ast.AST
    for current in found:     # (the list grows as the loop goes: breadth first)
        values = current.__dict__
        for field in plans[current.__class__][1]:
            value = values.get(field)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, node_type) and item.__class__ not in leaves])
            elif isinstance(value, node_type) and value.__class__ not in leaves:
                append(value)
    return found


def to_gast(tree, nodes):
    """``(ast_bridge.to_gast(tree), walk_list of it)`` made of ``tree``'s own nodes,
    ``nodes`` being ``walk_as_gast(tree)``. ``tree`` is a tree as ``ast.parse`` makes
    it (each located node has its whole location); it is the gast tree after."""
    plans, gast_leaf = _TO_GAST, _GAST_LEAF
    rewalk = False
    for node in nodes:
        twin, _, kind, leaf_fields = plans[node.__class__]
        node.__class__ = twin
        values = node.__dict__
        for field in leaf_fields:
            leaf = gast_leaf[values[field].__class__]
            values[field] = leaf.__new__(leaf)    # (a leaf has no fields)
        if kind:
            if kind == _NAME:
                values["annotation"] = values["type_comment"] = None
            elif kind == _ARG:
                values["id"] = values.pop("arg")
                values["ctx"] = gast.Param()
            elif kind == _COMPARE:
                values["ops"] = [gast_leaf[op.__class__]() for op in values["ops"]]
            elif kind == _DEFINITION:
                values["type_params"] = []
            elif values["name"] is not None:       # (_EXCEPT)
                values["name"] = gast.Name(values["name"], gast.Store(), None, None)
                rewalk = True
    return tree, (walk_list(tree) if rewalk else nodes)


_GAST_LEAF = {cls: getattr(gast, cls.__name__) for cls in _AST_LEAF_CLASSES
              if hasattr(gast, cls.__name__)}


# -- gast -> ast ----------------------------------------------------------------------

def to_ast(tree):
    """``ast_bridge.to_ast_noting_locations(tree)`` made of the gast tree ``tree``'s own
    nodes: ``(the ast tree, whether a node of it lacks part of its location)``.
    ``tree`` is used no more: it is the ast tree after (a node it holds twice is
    converted once)."""
    missing = False
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    plans, node_type, leaves, ast_leaf = _TO_AST, gast.AST, LEAVES, _AST_LEAF
    while stack:
        node = pop()
        cls = node.__class__
        plan = plans.get(cls)
        if plan is None:
            if cls in _AST_CLASSES:
                continue          # (converted where the tree holds it too)
            plan = plans[cls] = _to_ast_plan(cls)
        target, children, located, kind, leaf_fields = plan
        values = node.__dict__
        if kind == _ARGUMENTS:
            for arg in [*values["posonlyargs"], *values["args"], *values["kwonlyargs"],
                        values["vararg"], values["kwarg"]]:
                if arg is None:
                    continue
                if arg.__class__ is gast.Name:
                    missing |= _arg_to_ast(arg)
                if arg.annotation is not None:
                    push(arg.annotation)
            extend([d for d in values["kw_defaults"] if d is not None])
            extend(values["defaults"])
            node.__class__ = target
            continue
        for field in leaf_fields:
            leaf = values.get(field)
            if leaf is not None and leaf.__class__ in leaves:
                values[field] = ast_leaf[leaf.__class__]
        if kind:
            if kind == _NAME or kind == _ASSIGN:
                if kind == _ASSIGN:
                    values.pop("type_comment", None)
                _name_location(values)
            elif kind == _COMPARE:
                values["ops"] = [ast_leaf[op.__class__] for op in values["ops"]]
            elif kind == _DEFINITION:
                _start_location(values)
            else:                                     # (_EXCEPT)
                name = values.get("name")
                if name is not None:
                    values["name"] = name.id
                    _start_location(values)
        node.__class__ = target
        if located and (values.get("end_col_offset") is None
                        or values.get("end_lineno") is None
                        or "lineno" not in values or "col_offset" not in values):
            missing = True
        for field in children:
            value = values.get(field)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, node_type) and item.__class__ not in leaves])
            elif isinstance(value, node_type) and value.__class__ not in leaves:
                push(value)
    return tree, missing


def _to_ast_plan(cls):
    """``(ast twin, fields that may hold nodes, whether located, kind, fields holding
    one leaf)`` of the gast class ``cls``."""
    target = getattr(ast, cls.__name__, None)
    if target is None or not issubclass(cls, gast.AST):
        raise NotImplementedError(f"no ast node type for {cls.__name__}")
    kind = {gast.Name: _NAME, gast.Assign: _ASSIGN, gast.Compare: _COMPARE,
            gast.ExceptHandler: _EXCEPT, gast.arguments: _ARGUMENTS}.get(cls, _GENERIC)
    if cls.__name__ in _DEFINITIONS:
        kind = _DEFINITION
    return (target, NODE_FIELDS[cls], "lineno" in target._attributes, kind,
            tuple(f for f in _LEAF_FIELDS if f in cls._fields))


def _start_location(values) -> None:
    """A start left ``None`` is no start (``ast_bridge._copy_location``)."""
    if values.get("lineno", 0) is None:
        del values["lineno"]
    if values.get("col_offset", 0) is None:
        del values["col_offset"]


def _name_location(values) -> None:
    """``ast_bridge._copy_name_location`` of a node onto itself."""
    _start_location(values)
    if "end_lineno" not in values:
        values["end_lineno"] = None
    if "end_col_offset" not in values:
        values["end_col_offset"] = None


def _arg_to_ast(arg) -> bool:
    """Make the parameter ``arg`` (a gast ``Name``) an ``ast.arg``; whether it lacks
    part of its location."""
    values = arg.__dict__
    values["arg"] = values["id"]
    _name_location(values)
    arg.__class__ = ast.arg
    return (values["end_col_offset"] is None or values["end_lineno"] is None
            or "lineno" not in values or "col_offset" not in values)


_TO_AST: dict = {}
_AST_CLASSES = frozenset(cls for cls in vars(ast).values()
                         if isinstance(cls, type) and issubclass(cls, ast.AST))
_AST_LEAF = {cls: getattr(ast, cls.__name__)() for cls in LEAVES if hasattr(ast, cls.__name__)}
