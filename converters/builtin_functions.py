"""Calls to Python builtins that need help with traced arguments, into runtime calls.

Before:

    m = max(a, b)
    n = int(x)
    for k, v in enumerate(xs):
        total = total + v

After:

    m = ag__.max_(a, b)
    n = ag__.int_(x)
    for k, v in ag__.enumerate_(xs):
        total = total + v

``enumerate`` and ``zip`` are rewritten as the iterable of a ``for`` only (where a
list grown in a staged loop is iterated). Only a name that really is Python's
builtin here is rewritten (not a local, parameter, closure variable or module
global of that name). Builtins that JAX's arrays already support (``abs``,
``isinstance``...) are left as they are. This is the one table of the builtins the
converters replace
(``print`` has a converter of its own, ``print_function``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.base import Transformer

# builtin name -> runtime function, wherever it is called
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
# builtin name -> runtime function, called as the iterable of a ``for``
REPLACED_AS_ITERABLE = {
    "enumerate": "enumerate_",
    "zip": "zip_",
}

NODE_TYPES = (gast.Call,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert calls to the builtins in ``REPLACED`` in ``node``, and to those in
    ``REPLACED_AS_ITERABLE`` that are the iterable of a ``for``."""
    return _BuiltinFunctions(ctx).visit(node)


class _BuiltinFunctions(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Call(self, node):
        node = self.generic_visit(node)
        self._replace(node, REPLACED)
        return node

    def visit_For(self, node):
        node = self.generic_visit(node)
        self._replace(node.iter, REPLACED_AS_ITERABLE)
        return node

    def _replace(self, call, table):
        func = getattr(call, "func", None)
        if (isinstance(call, gast.Call) and isinstance(func, gast.Name)
                and func.id in table and self.ctx.is_builtin(func.id)):
            new = templates.replace_expr(f"ag__.{table[func.id]}", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            call.func = new
