"""``return`` inside branches and loops into a flag and a value, returned at the end.

Before:

    def first_negative(x):
        for i in range(10):
            if x[i] < 0:
                return i
        return -1

After:

    def first_negative(x):
        did_return = False
        retval = ag__.UndefinedReturn('retval')
        for i in range(10):          # extra test: ag__.not_(did_return)
            if x[i] < 0:
                retval = i
                did_return = True
        if ag__.not_(did_return):
            retval = -1
        return retval

The value is computed before the flag is set (an exception raised computing it,
caught by an ``except``, means no ``return`` happened). Statements after one that
may return are guarded by ``if ag__.not_(did_return):`` (or, after an ``if`` one of
whose branches always returns, moved into the other branch),
and loops holding a ``return`` also stop once it is set. A function that may fall
off its end gets the implicit ``return None`` written out. ``UndefinedReturn`` lets
a staged loop or ``if`` give ``retval`` a placeholder of the type the returns give
(it is only read after a return ran). A function whose only ``return`` statements
are at the top level of its body is left as it is.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer
from autograph.converters.jumps import (
    add_loop_condition,
    cancel_pending,
    contains,
    drop_unread_flag,
    guard_after_jumps,
    never_completes,
)

NODE_TYPES = (gast.Return,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert early returns in ``node`` and in the functions nested in it."""
    return _Returns(ctx).visit(node)


def needed(nodes, ctx=None) -> bool:
    """Whether ``nodes`` (a walk of the function) hold a ``return`` that is not a
    statement of its function's body itself: elsewhere ``transform`` changes nothing."""
    top = set()
    for sub in nodes:
        if sub.__class__ in _DEFINITIONS:
            top.update(id(stmt) for stmt in sub.body if stmt.__class__ is gast.Return)
    return any(sub.__class__ is gast.Return and id(sub) not in top for sub in nodes)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return _Returns(ctx).visit(node)


_DEFINITIONS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef))


class _Returns(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_FunctionDef(self, node):
        node = self.generic_visit(node)
        nested = [s for s in node.body if not isinstance(s, gast.Return)]
        if not contains(nested, gast.Return, into_loops=True):
            return node
        ag = self.ctx.runtime_name
        flag = self.ctx.fresh_name("did_return")
        value = self.ctx.fresh_name("retval")
        docstring, body = _split_docstring(node.body)
        if not never_completes(body):
            body.append(_implicit_return(node))

        final = body[-1] if isinstance(body[-1], gast.Return) else None

        def on_jump(ret):
            result = ret.value if ret.value is not None else gast.Constant(value=None,
                                                                           kind=None)
            if ret is final:  # nothing runs after the last return: no flag to set
                return templates.replace("value = result", value=value, result=result)
            # The value first: if computing it raises, no return happened.
            return templates.replace("value = result\nflag = True", flag=flag, value=value,
                                     result=result)

        def on_loop(loop):
            add_loop_condition(loop, flag, ag)

        body = cancel_pending(guard_after_jumps(body, gast.Return, flag, ag, into_loops=True,
                                                on_jump=on_jump, on_loop=on_loop),
                              flag, into_loops=True)
        head = templates.replace(
            "flag = False\nvalue = ag__.UndefinedReturn(value_name)", ag__=ag, flag=flag,
            value=value, value_name=gast.Constant(value=value, kind=None))
        tail = templates.replace("return value", value=value)
        templates.set_location(head, node.body[0])
        templates.set_location(tail, body[-1])
        node.body = docstring + drop_unread_flag(head + body, flag) + tail
        return node


def _split_docstring(body):
    """``([docstring statement] or [], the other statements)`` of a function body."""
    if (body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant)
            and isinstance(body[0].value.value, str)):
        return [body[0]], list(body[1:])
    return [], list(body)


def _implicit_return(fn):
    """The ``return None`` of falling off the end of ``fn``, on its ``def`` line."""
    implicit = gast.Return(value=None)
    implicit.lineno, implicit.col_offset = fn.lineno, fn.col_offset
    implicit.end_lineno, implicit.end_col_offset = fn.lineno, fn.col_offset
    return implicit
