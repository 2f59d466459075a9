"""The base class of the converters' node transformers."""

from __future__ import annotations

import gast

from autograph.analysis import stays_python
from autograph.walk import LEAVES, NODE_FIELDS

_AST = gast.AST
# Node types without fields that stand for an operator or a context (``Load``,
# ``Add``, ``Eq``...): nothing under them to rewrite.
_LEAVES = LEAVES


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer`` that leaves constants alone at once, and leaves
    nested generators and coroutines (``analysis.stays_python``) as they are.

    The standard library's ``NodeVisitor.visit_Constant`` looks for the legacy
    ``visit_Num``/``visit_Str``... methods on every constant: a measurable part of
    conversion time. No converter rewrites a constant.

    A generator or ``async def`` defined inside converted code runs as Python, as a
    generator or coroutine callee does: no converter rewrites its body.

    ``visit`` finds each node type's method once per class, and ``generic_visit``
    (the standard library's, made cheaper) does not descend into operator and
    context nodes unless the class has a method for them: each tree is walked
    once per converter, so this is a good part of conversion time.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visitors = {}
        cls._visits_leaves = any(hasattr(cls, "visit_" + leaf.__name__) for leaf in _LEAVES)
        # Names and constants (about half of a tree's nodes) that a visit would give
        # back unchanged are not visited: a constant where the class keeps
        # ``visit_Constant`` as it is here, a name without an annotation where it has
        # no ``visit_Name``.
        cls._passes_constants = cls.visit_Constant is Transformer.visit_Constant
        cls._passes_names = not hasattr(cls, "visit_Name")

    _visitors: dict = {}
    _visits_leaves = False
    _passes_constants = _passes_names = False
    # A converter that rewrites statements only, and none inside a lambda: its
    # generic visit goes through the fields holding statements (and the except
    # handlers and match cases holding them), not into expressions.
    statements_only = False

    def visit_Constant(self, node):
        return node

    def visit(self, node):
        # NodeVisitor.visit, plus the check (a call to super() would cost more).
        cls = node.__class__
        if cls in _DEFINITIONS and stays_python(node):
            return node
        method = self._visitors.get(cls)
        if method is None:
            method = getattr(type(self), "visit_" + cls.__name__, None)
            if method is None:
                method = type(self).generic_visit
            self._visitors[cls] = method
        return method(self, node)

    def generic_visit(self, node):
        # ast.NodeTransformer.generic_visit, without its generators.
        visit = self.visit
        if self.statements_only:
            leaves, fields = _LEAVES, STATEMENT_FIELDS[node.__class__]
        elif self._visits_leaves:
            leaves, fields = _NO_LEAVES, node._fields
        else:
            leaves, fields = _LEAVES, NODE_FIELDS[node.__class__]
        constant = _CONSTANT if self._passes_constants else None
        name = _NAME if self._passes_names else None
        values = node.__dict__     # (a gast node's fields are all in it: no class defaults)
        for field in fields:
            old = values.get(field, _ABSENT)
            if old.__class__ is list:
                new_values = []
                changed = False
                for value in old:
                    cls = value.__class__
                    if cls is constant or (
                            cls is name and value.__dict__.get("annotation") is None):
                        new_values.append(value)
                        continue
                    if cls not in leaves and isinstance(value, _AST):
                        new = visit(value)
                        if new is not value:
                            changed = True
                            if new is None:
                                continue
                            if not isinstance(new, _AST):
                                new_values.extend(new)
                                continue
                            value = new
                    new_values.append(value)
                if changed:
                    old[:] = new_values
            elif old.__class__ not in leaves and isinstance(old, _AST):
                cls = old.__class__
                if cls is constant or (cls is name and old.__dict__.get("annotation") is None):
                    continue
                new = visit(old)
                if new is None:
                    delattr(node, field)
                elif new is not old:
                    setattr(node, field, new)
        return node


class _StatementFields(dict):
    """``node class -> its fields that hold statements, handlers or cases``."""

    def __missing__(self, cls):
        fields = self[cls] = tuple(f for f in cls._fields if f in _STATEMENT_HOLDERS)
        return fields


_STATEMENT_HOLDERS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
STATEMENT_FIELDS = _StatementFields()
_NO_LEAVES = frozenset()
_DEFINITIONS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
_CONSTANT, _NAME = gast.Constant, gast.Name
_ABSENT = object()
