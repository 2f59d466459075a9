"""``and``, ``or``, ``not`` and chained comparisons into runtime calls.

Before:

    ok = i < n and x[i] > 0
    flag = not done
    inside = lo <= x < hi
    ordered = f(a) < g(b) < h(c)

After:

    ok = ag__.and_(lambda: i < n, lambda: x[i] > 0)
    flag = ag__.not_(done)
    inside = ag__.and_(lambda: lo <= x, lambda: x < hi)
    ordered = ag__.compare_chain(f(a), '<', lambda: g(b), '<', lambda: h(c))

Each operand is behind a lambda, so it is evaluated only when Python would
evaluate it. An expression whose operands assign (``x and (y := f(x))``) stays
Python's own: in a lambda the assignment would bind the lambda's variable (the
control-flow converter has already turned such an ``if``/``while`` condition
into statements, which stage). A chain whose middle operands are plain names or constants reads as
the ``and`` it means; any other chain goes through ``compare_chain``, which
evaluates each middle operand once. Single comparisons (``x is None``,
``k in d``, ``a < b``) are left alone: JAX's operators already handle them, but
for ``x is True`` / ``x is not False``, which become ``ag__.is_(x, True)`` /
``ag__.is_not(x, False)``: a traced bool is the bool it stands for.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import assigns_in_scope
from autograph.converters.base import Transformer

_OPERATORS = {
    gast.Eq: "==", gast.NotEq: "!=", gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">",
    gast.GtE: ">=", gast.Is: "is", gast.IsNot: "is not", gast.In: "in",
    gast.NotIn: "not in",
}

NODE_TYPES = (gast.BoolOp, gast.UnaryOp, gast.Compare)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every boolean operator and chained comparison in ``node``."""
    return _LogicalExpressions(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx=None) -> bool:
    """Whether ``nodes`` (a walk of the function) hold something this converter may
    rewrite: a boolean operator, a ``not``, a chained comparison, or an ``is``/``is
    not`` with a bool constant. (One walk, cheaper than the transformer's visit of
    each node.)"""
    for sub in nodes:
        cls = sub.__class__
        if cls is gast.BoolOp or (cls is gast.UnaryOp and isinstance(sub.op, gast.Not)):
            return True
        if cls is gast.Compare and (len(sub.ops) != 1 or (
                isinstance(sub.ops[0], (gast.Is, gast.IsNot))
                and (_is_bool_constant(sub.left)
                     or _is_bool_constant(sub.comparators[0])))):
            return True
    return False


def _lambda(body):
    return templates.replace_expr("lambda: body", body=body)


class _LogicalExpressions(Transformer):
    def __init__(self, ctx):
        self.ag = ctx.runtime_name

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        if assigns_in_scope(node):
            return node
        template = ("ag__.and_(operands)" if isinstance(node.op, gast.And)
                    else "ag__.or_(operands)")
        new = templates.replace_expr(template, ag__=self.ag,
                                     operands=[_lambda(v) for v in node.values])
        templates.set_location(new, node)
        return new

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        new = templates.replace_expr("ag__.not_(operand)", ag__=self.ag,
                                     operand=node.operand)
        templates.set_location(new, node)
        return new

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            return self._bool_identity(node)
        if assigns_in_scope(node.comparators):
            return node
        middle = node.comparators[:-1]
        if all(isinstance(m, (gast.Name, gast.Constant)) for m in middle):
            operands = [node.left, *node.comparators]
            pairs = [gast.Compare(left=operands[k], ops=[op], comparators=[operands[k + 1]])
                     for k, op in enumerate(node.ops)]
            new = templates.replace_expr("ag__.and_(pairs)", ag__=self.ag,
                                         pairs=[_lambda(p) for p in pairs])
        else:
            args = [node.left]
            for op, right in zip(node.ops, node.comparators, strict=True):
                args += [gast.Constant(value=_OPERATORS[type(op)], kind=None),
                         _lambda(right)]
            new = templates.replace_expr("ag__.compare_chain(args)", ag__=self.ag,
                                         args=args)
        templates.set_location(new, node)
        return new

    def _bool_identity(self, node):
        """``x is True`` / ``x is not False``: ``ag__.is_(x, True)``, which reads a
        traced bool as the bool it stands for (an identity test of a tracer is
        always false)."""
        op, right, left = node.ops[0], node.comparators[0], node.left
        if not isinstance(op, (gast.Is, gast.IsNot)):
            return node
        if _is_bool_constant(left) and not _is_bool_constant(right):
            left, right = right, left
        if not _is_bool_constant(right):
            return node
        name = "ag__.is_(operands)" if isinstance(op, gast.Is) else "ag__.is_not(operands)"
        new = templates.replace_expr(name, ag__=self.ag, operands=[left, right])
        templates.set_location(new, node)
        return new


def _is_bool_constant(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is bool
