"""Calls to Python builtins that need help with traced arguments, into runtime calls.

Before:

    m = max(a, b)
    n = int(x)

After:

    m = ag__.max_(a, b)
    n = ag__.int_(x)

Only a name that really is Python's builtin here is rewritten (not a local,
parameter, closure variable or module global of that name). Builtins that JAX's
arrays already support (``abs``, ``isinstance``...) are left as they are.
``print`` has a converter of its own (``print_function``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer

# builtin name -> runtime function
REPLACED = {
    "len": "len_",
    "min": "min_",
    "max": "max_",
    "sum": "sum_",
    "int": "int_",
    "float": "float_",
    "bool": "bool_",
    "range": "range_",
    "reversed": "reversed_",
}

NODE_TYPES = (gast.Call,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert calls to the builtins in ``REPLACED`` in ``node``."""
    return _BuiltinFunctions(ctx).visit(node)


class _BuiltinFunctions(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if (isinstance(func, gast.Name) and func.id in REPLACED
                and self.ctx.is_builtin(func.id)):
            new = templates.replace_expr(f"ag__.{REPLACED[func.id]}", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            node.func = new
        return node
