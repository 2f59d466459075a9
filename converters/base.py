"""The base class of the converters' node transformers."""

from __future__ import annotations

import gast


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer`` that leaves constants alone at once.

    The standard library's ``NodeVisitor.visit_Constant`` looks for the legacy
    ``visit_Num``/``visit_Str``... methods on every constant: a measurable part of
    conversion time. No converter rewrites a constant.
    """

    def visit_Constant(self, node):
        return node
