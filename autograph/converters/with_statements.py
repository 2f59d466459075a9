"""``with`` statements: a context manager that suppresses an exception is checked
for what it suppressed.

A ``with`` whose ``__exit__`` returns true discards the exception in flight, as a
jump in a ``finally`` does (``try_statements``). An exception raised while a staged
branch or loop was traced (Python raises it for some inputs only), JAX's errors
about traced values, and autograph's refusals must not be discarded that way: the
result would be that of the inputs that raise, for every input. Each context
manager goes through ``ag__.managed``, which calls its ``__enter__`` and
``__exit__`` as Python does and refuses such a suppression at the ``with``
(``runtime/handlers.py``). Before:

    with contextlib.suppress(ValueError):
        y = checked(x)

After:

    with ag__.managed(contextlib.suppress(ValueError), ag__.converted_call):
        y = checked(x)
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer

NODE_TYPES = (gast.With,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Route the context managers of the ``with`` statements of ``node`` through
    ``ag__.managed``."""
    return _Withs(ctx).visit(node)


class _Withs(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ag = ctx.runtime_name

    def visit_With(self, node):
        node = self.generic_visit(node)
        for item in node.items:
            new = templates.replace_expr("ag__.managed(manager, ag__.converted_call)",
                                         ag__=self.ag,
                                         manager=item.context_expr)
            templates.set_location(new, item.context_expr)
            item.context_expr = new
        return node
