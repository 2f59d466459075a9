"""Comprehension tests and f-string fields, checked for traced operands.

Both run as Python (a comprehension is not staged; an f-string outside ``print``
and check messages makes its text at once). Where the operand is traced, the
runtime refuses it at the user's line, saying what to write instead
(``runtime/unstaged.py``). Runs after ``print_function``: the f-strings that
``print``, ``assert`` and ``raise`` format at run time are calls by then. Before:

    kept = [v for v in xs if v > 0]
    label = f"{loss:.3f}"

After:

    kept = [v for v in xs if ag__.comprehension_test(v > 0)]
    label = f'{ag__.formattable(loss):.3f}'

Every field is checked, with a format spec or not: ``f"{s}"`` of a traced ``s`` would
be the tracer's text (``JitTracer(~float32[])``), not the value's.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer

NODE_TYPES = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.JoinedStr)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Check the comprehension tests and formatted f-string fields of ``node``."""
    return _Unstaged(ctx).visit(node)


class _Unstaged(Transformer):
    def __init__(self, ctx):
        self.ag = ctx.runtime_name

    def _wrap(self, template, expr):
        new = templates.replace_expr(template, ag__=self.ag, value=expr)
        templates.set_location(new, expr)
        return new

    def visit_comprehension(self, node):
        node = self.generic_visit(node)
        node.ifs = [self._wrap("ag__.comprehension_test(value)", test) for test in node.ifs]
        return node

    def visit_FormattedValue(self, node):
        node = self.generic_visit(node)
        node.value = self._wrap("ag__.formattable(value)", node.value)
        return node
