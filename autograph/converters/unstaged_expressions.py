"""Comprehension tests, f-string fields and the operands of ``"...".format(...)`` and
``"..." % ...``, checked for traced operands.

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
be the tracer's text (``JitTracer(~float32[])``), not the value's; so is each operand
of ``"{}".format(s)`` and ``"%s" % (s,)`` (``ag__.formattable``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer

_CHECKED = (gast.comprehension, gast.JoinedStr)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Check the comprehension tests, formatted f-string fields and the operands of
    ``"...".format(...)`` and ``"..." % ...`` in ``node``."""
    return _Unstaged(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx) -> bool:
    """Whether ``nodes`` (a walk of the function) hold a comprehension, an f-string,
    or a ``.format``/``%`` of a string literal."""
    return any(isinstance(sub, _CHECKED) or _formats_a_literal(sub) for sub in nodes)


def _formats_a_literal(node) -> bool:
    cls = node.__class__
    if cls is gast.Call:
        func = node.func
        if (func.__class__ is gast.Call and func.func.__class__ is gast.Attribute
                and func.func.attr == "converted_call" and func.args):
            func = func.args[0]     # ag__.converted_call('...'.format)(...)
        return (func.__class__ is gast.Attribute and func.attr == "format"
                and _is_text(func.value))
    return cls is gast.BinOp and node.op.__class__ is gast.Mod and _is_text(node.left)


def _is_text(node) -> bool:
    return node.__class__ is gast.Constant and isinstance(node.value, str)


class _Unstaged(Transformer):
    def __init__(self, ctx):
        self.ag = ctx.runtime_name

    def _wrap(self, template, expr):
        if isinstance(expr, gast.Constant):
            return expr
        new = templates.replace_expr(template, ag__=self.ag, value=expr)
        templates.set_location(new, expr)
        return new

    def visit_comprehension(self, node):
        node = self.generic_visit(node)
        node.ifs = [self._wrap("ag__.comprehension_test(value)", test) for test in node.ifs]
        return node

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if _formats_a_literal(node):
            node.args = [self._operand(arg) for arg in node.args]
            for keyword in node.keywords:
                keyword.value = self._wrap("ag__.formattable(value)", keyword.value)
        return node

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if _formats_a_literal(node):
            node.right = self._wrap("ag__.formattable(value)", node.right)
        return node

    def _operand(self, arg):
        if isinstance(arg, gast.Starred):
            arg.value = self._wrap("ag__.formattable(value)", arg.value)
            return arg
        return self._wrap("ag__.formattable(value)", arg)

    def visit_FormattedValue(self, node):
        node = self.generic_visit(node)
        node.value = self._wrap("ag__.formattable(value)", node.value)
        return node
