"""Conditions that assign (``while (n := n - 1) > 0``) computed as statements.

Run by the control-flow converter before it makes helpers of blocks: an ``if`` or
``while`` whose condition assigns a variable of the function computes the
condition into a variable of its own first, so the assignment stays in the
function, not in the helper the condition becomes (``loop_test``) or in an
operand's lambda (``ag__.and_(lambda: ..., ...)``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import SCOPES, annos
from autograph.converters.base import Transformer
from autograph.walk import child_nodes


def lower_assigning_tests(fn, ctx):
    """Rewrite every ``if``/``while`` of ``fn`` whose condition assigns."""
    return AssigningTests(ctx).visit(fn)


def _assigns(expr, deferred_only=False) -> bool:
    """Whether evaluating ``expr`` assigns a variable of the enclosing function (an
    assignment expression outside nested functions and lambdas, the operand
    lambdas of ``ag__.and_``/``or_`` included). With ``deferred_only``, only one in
    an operand that becomes a lambda: of ``and``/``or``, a conditional expression,
    or a chained comparison."""
    stack = [(expr, not deferred_only)]
    while stack:
        node, counts = stack.pop()
        if isinstance(node, gast.NamedExpr) and counts:
            return True
        if isinstance(node, gast.Lambda):
            if annos.get(node, annos.OPERAND, False):
                stack.append((node.body, True))
            continue
        if isinstance(node, SCOPES):
            continue
        if annos.runtime_operator(node) in ("and_", "or_"):
            for arg in node.args:
                if isinstance(arg, gast.Lambda):
                    annos.set(arg, annos.OPERAND, True)
        inner = counts or isinstance(node, (gast.BoolOp, gast.IfExp)) or (
            isinstance(node, gast.Compare) and len(node.ops) > 1)
        stack.extend((child, inner) for child in child_nodes(node))
    return False


class AssigningTests(Transformer):
    """An ``if`` or ``while`` whose condition assigns a variable (``while (n := n - 1)
    > 0``, ``if x and (y := f(x)):``) computes the condition as statements into a
    variable of its own first, so the assignment happens in the function, not in
    the helper that a condition becomes (``loop_test``) or in an operand's lambda.
    ``a and b`` becomes ``cond = a`` then ``if cond: cond = b``, keeping the order
    and the short circuit; a ``while`` computes it before the loop and again at
    the end of its body. Before:

        while (line := read()) != '':
            out.append(line)

    After:

        loop_cond = ag__.bool_((line := read()) != '')
        while loop_cond:
            out.append(line)
            loop_cond = ag__.bool_((line := read()) != '')
    """

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_If(self, node):
        node = self.generic_visit(node)
        if not _assigns(node.test, deferred_only=True):
            return node
        name = self.ctx.fresh_name("cond")
        setup = self._lowered(node.test, name, node)
        node.test = templates.name(name)
        return setup + [node]

    def visit_While(self, node):
        node = self.generic_visit(node)
        if not _assigns(node.test):
            return node
        name = self.ctx.fresh_name("loop_cond")
        before = self._lowered(node.test, name, node)
        again = self._lowered(templates.copy_tree(node.test), name, node)
        node.test = templates.name(name)
        node.body = node.body + again
        return before + [node]

    def _lowered(self, expr, name, origin):
        """Statements leaving the value of ``expr`` in ``name``."""
        operands, is_and = _short_circuit(expr)
        if operands is None:
            # The truth of each operand is what the condition needs (one type for a
            # staged `if` to carry); `bool_` asks it once, as the condition would.
            value = templates.replace_expr("ag__.bool_(expr)", ag__=self.ctx.runtime_name,
                                           expr=expr)
            stmts = [gast.Assign(targets=[templates.name(name, gast.Store())], value=value,
                                 type_comment=None)]
        else:
            stmts = self._lowered(operands[0], name, origin)
            rest = operands[1:]
            test = (templates.name(name) if is_and else
                    gast.UnaryOp(op=gast.Not(), operand=templates.name(name)))
            inner = self._lowered(
                gast.BoolOp(op=gast.And() if is_and else gast.Or(), values=rest)
                if len(rest) > 1 else rest[0], name, origin)
            stmts.append(gast.If(test=test, body=inner, orelse=[]))
        templates.set_location(stmts, origin)
        return stmts


def _short_circuit(expr):
    """``(operands, is_and)`` of ``a and b``/``a or b`` (a ``BoolOp``, or the
    ``ag__.and_(lambda: a, lambda: b)`` a jump converter made), else ``(None, None)``."""
    if isinstance(expr, gast.BoolOp):
        return list(expr.values), isinstance(expr.op, gast.And)
    operator = annos.runtime_operator(expr)
    if operator in ("and_", "or_") and all(isinstance(a, gast.Lambda) for a in expr.args):
        return [a.body for a in expr.args], operator == "and_"
    return None, None
