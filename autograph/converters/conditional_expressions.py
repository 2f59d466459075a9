"""Conditional expressions into ``ag__.if_exp`` with each value behind a lambda.

Before:

    y = x if x > 0 else -x

After:

    y = ag__.if_exp(x > 0, lambda: x, lambda: -x)

Only the chosen value is computed when the condition is a Python value; a traced
condition stages both with ``lax.cond``. A value that assigns (``a if c else
(y := b)``) keeps Python's expression: in a lambda it would bind the lambda's ``y``.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos, assigns_in_scope
from autograph.analysis.stageability import annotate_enclosing_try
from autograph.converters.base import Transformer

NODE_TYPES = (gast.IfExp,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``a if c else b`` in ``node``."""
    annotate_enclosing_try(node)
    return _ConditionalExpressions(ctx).visit(node)


class _ConditionalExpressions(Transformer):
    def __init__(self, ctx):
        self.ag = ctx.runtime_name

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        if assigns_in_scope([node.body, node.orelse]):
            return node
        new = templates.replace_expr(
            "ag__.if_exp(test, lambda: body, lambda: orelse)",
            ag__=self.ag, test=node.test, body=node.body, orelse=node.orelse)
        try_line = annos.get(node, annos.IN_TRY)
        if try_line is not None:  # a staged one would refuse: see if_exp
            new.keywords.append(gast.keyword(
                arg="in_try", value=gast.Constant(value=try_line, kind=None)))
        templates.set_location(new, node)
        return new
