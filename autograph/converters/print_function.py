"""``print`` calls into ``ag__.print_``, their formatted arguments deferred.

Before:

    print(f"step {step}: loss {loss:.3f}", "lr", lr, sep=" | ")

After:

    ag__.print_(ag__.format_('step {}: loss {:.3f}', step, loss), 'lr', lr, sep=' | ')

Only a name that really is Python's builtin ``print`` here is rewritten (not a
local, parameter, closure variable or module global of that name). Each argument
that is an f-string, a ``.format`` call or ``'...' % ...`` is deferred (see
``formatting``): with traced values it is formatted when the program runs, so the
printed line is what Python prints for the concrete values.
"""

from __future__ import annotations

import builtins

import gast

from autograph import templates
from autograph.converters import formatting
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Call,)
NAMES = ("print", "builtins")   # builtins.print(...) too


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert the calls to the builtin ``print`` in ``node``."""
    return _Print(ctx).visit(node)


class _Print(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if (isinstance(func, gast.Name) and func.id == "print" and self.ctx.is_builtin("print")
                or isinstance(func, gast.Attribute) and func.attr == "print"
                and self.ctx.value_of(func) is builtins.print):   # builtins.print(...)
            new = templates.replace_expr("ag__.print_", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            node.func = new
            node.args = [formatting.deferred(arg, self.ctx) for arg in node.args]
        return node
