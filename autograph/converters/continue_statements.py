"""``continue`` into a flag reset at the top of each iteration.

Before:

    for x in xs:
        if x < 0:
            continue
        total += x

After:

    for x in xs:
        if x < 0:
            pass
        else:
            total += x

(here nothing reads the flag after the ``if``, so it is dropped: a ``continue``
that is the last thing an iteration does needs no flag).

Loops without ``continue`` are left as they are.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.jumps import (
    LoopJumps,
    contains,
    drop_unread_flag,
    flag_name,
    guard_after_jumps,
)

NODE_TYPES = (gast.Continue,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``continue`` in ``node`` (nested functions included)."""
    return _Continues(ctx).visit(node)


class _Continues(LoopJumps):
    def rewrite_loop(self, node, level):
        if not contains(node.body, gast.Continue, into_loops=False):
            return node
        flag = self.ctx.fresh_name(flag_name("did_continue", level))
        reset = templates.replace("flag = False", flag=flag)
        templates.set_location(reset, node.body[0])
        node.body = drop_unread_flag(
            reset + guard_after_jumps(node.body, gast.Continue, flag, self.ctx.runtime_name,
                                      into_loops=False), flag)
        return node
