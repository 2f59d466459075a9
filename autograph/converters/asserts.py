"""``assert`` statements into ``ag__.assert_stmt`` with the message behind a lambda.

Before:

    assert x != 0, 'Do not pass zero!'
    assert ok
    assert n > 0, f"n is {n:>4}"

After:

    ag__.assert_stmt(x != 0, lambda: 'Do not pass zero!')
    ag__.assert_stmt(ok)
    ag__.assert_stmt(n > 0, lambda: ag__.format_('n is {:>4}', n))

The message is evaluated only if the assertion fails, as in Python; a message
that is an f-string, ``.format`` call or ``'...' % ...`` is deferred (see
``formatting``), so a staged check shows it formatted from the concrete values.
Under ``python -O`` (``__debug__`` false) asserts are removed, as Python's
compiler removes them (and none is staged).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters import formatting
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Assert,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``assert`` in ``node`` (remove them under ``python -O``)."""
    return _Asserts(ctx).visit(node)


class _Asserts(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx
        self.ag = ctx.runtime_name

    def visit_Assert(self, node):
        node = self.generic_visit(node)
        if not __debug__:
            return None
        if node.msg is None:
            new = templates.replace("ag__.assert_stmt(test)", ag__=self.ag, test=node.test)
        else:
            new = templates.replace("ag__.assert_stmt(test, lambda: msg)", ag__=self.ag,
                                    test=node.test, msg=formatting.deferred(node.msg, self.ctx))
        templates.set_location(new, node)
        return new
