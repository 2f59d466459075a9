"""The base class of the converters' node transformers."""

from __future__ import annotations

import gast

from autograph.analysis import stays_python


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer`` that leaves constants alone at once, and leaves
    nested generators and coroutines (``analysis.stays_python``) as they are.

    The standard library's ``NodeVisitor.visit_Constant`` looks for the legacy
    ``visit_Num``/``visit_Str``... methods on every constant: a measurable part of
    conversion time. No converter rewrites a constant.

    A generator or ``async def`` defined inside converted code runs as Python, as a
    generator or coroutine callee does: no converter rewrites its body.
    """

    def visit_Constant(self, node):
        return node

    def visit(self, node):
        # NodeVisitor.visit, plus the check (a call to super() would cost more).
        cls = node.__class__
        if cls in _DEFINITIONS and stays_python(node):
            return node
        return getattr(self, "visit_" + cls.__name__, self.generic_visit)(node)


_DEFINITIONS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
