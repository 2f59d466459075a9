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

    _visitors: dict = {}
    _visits_leaves = False
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
        for field in fields:
            try:
                old = getattr(node, field)
            except AttributeError:
                continue
            if old.__class__ is list:
                new_values = []
                changed = False
                for value in old:
                    if value.__class__ not in leaves and isinstance(value, _AST):
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
