"""``break`` into a flag: the loop also stops when the flag is set.

Before:

    while i < n:
        if x[i] < 0:
            break
        total += x[i]
        i += 1
    else:
        total = -1

After:

    did_break = False
    while ag__.and_(lambda: ag__.not_(did_break), lambda: i < n):
        if x[i] < 0:
            did_break = True
        else:
            total += x[i]
            i += 1
    if ag__.not_(did_break):
        total = -1

The statements after an ``if`` whose body ends in ``break`` become its ``else``;
after any other statement that may break they are guarded by
``if ag__.not_(did_break):``.

A ``for`` loop keeps its header; the extra condition travels as an annotation
(``EXTRA_TEST``) that the control-flow converter turns into the ``extra_test=`` of
``ag__.for_stmt``, checked before each iteration. The ``else`` of a loop without
``break`` is moved after it (it always runs). Loops without ``break`` are left
as they are.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.jumps import (
    LoopJumps,
    add_loop_condition,
    cancel_pending,
    contains,
    flag_name,
    guard_after_jumps,
)

# Loops too: the `else` of a loop without `break` is moved after it.
NODE_TYPES = (gast.Break, gast.For, gast.While)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``break`` in ``node`` (nested functions included)."""
    return _Breaks(ctx).visit(node)


def needed(nodes, ctx=None) -> bool:
    """Whether ``nodes`` (a walk of the function) hold a ``break`` or a loop with an
    ``else``: elsewhere ``transform`` changes nothing."""
    return any(sub.__class__ is gast.Break
               or (sub.__class__ in _LOOPS_WITH_ELSE and sub.orelse) for sub in nodes)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return _Breaks(ctx).visit(node)


_LOOPS_WITH_ELSE = frozenset((gast.For, gast.While, gast.AsyncFor))


class _Breaks(LoopJumps):
    def rewrite_loop(self, node, level):
        if not contains(node.body, gast.Break, into_loops=False):
            orelse, node.orelse = node.orelse, []
            return [node] + orelse
        flag = self.ctx.fresh_name(flag_name("did_break", level))
        ag = self.ctx.runtime_name
        node.body = cancel_pending(
            guard_after_jumps(node.body, gast.Break, flag, ag, into_loops=False), flag,
            into_loops=False)
        add_loop_condition(node, flag, ag)
        new = templates.replace("flag = False", flag=flag)
        if node.orelse:
            new_else = templates.replace("if ag__.not_(flag):\n    orelse", ag__=ag,
                                         flag=flag, orelse=node.orelse)
            node.orelse = []
        else:
            new_else = []
        templates.set_location(new + new_else, node)
        return new + [node] + new_else
