"""Calls to Python builtins that need help with traced arguments, into runtime calls.

Before:

    m = max(a, b)
    n = int(math.sqrt(x))
    for k, v in enumerate(xs):
        total = total + v

After:

    m = ag__.max_(a, b)
    n = ag__.int_(ag__.math_sqrt(x))
    for k, v in ag__.enumerate_(xs):
        total = total + v

``enumerate`` and ``zip`` are rewritten as the iterable of a ``for`` only (where a
list grown in a staged loop is iterated). Only a name that really is Python's
builtin here is rewritten (not a local, parameter, closure variable or module
global of that name). Builtins that JAX's arrays already support (``abs``,
``isinstance``...) are left as they are. This is the one table of the builtins the
converters replace
(``print`` has a converter of its own, ``print_function``).

A call of a function of Python's ``math`` module in ``MATH`` (however it is
reached: ``math.sqrt``, ``m.sqrt`` after ``import math as m``, ``sqrt`` after
``from math import sqrt``) becomes ``ag__.math_<name>(...)``
(``runtime/math_functions.py``: ``math`` itself for Python values).
"""

from __future__ import annotations

import math

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

# functions of Python's math module -> ``ag__.math_<name>``
MATH = ("sqrt", "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "sin", "cos",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "erf", "erfc", "lgamma", "gamma", "degrees", "radians", "fabs", "floor", "ceil",
        "trunc", "isnan", "isinf", "isfinite", "isqrt", "pow", "hypot", "dist", "prod",
        "fsum", "isclose", "gcd", "lcm", "copysign", "fmod", "atan2", "ldexp", "factorial",
        "comb", "perm")
_MATH_FUNCTIONS = {id(getattr(math, name)): name for name in MATH if hasattr(math, name)}

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
        self._replace_math(node)
        return node

    def _replace_math(self, call):
        func = call.func
        if not isinstance(func, (gast.Name, gast.Attribute)):
            return
        name = _MATH_FUNCTIONS.get(id(self.ctx.value_of(func)))
        if name is not None:
            new = templates.replace_expr(f"ag__.math_{name}", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            call.func = new

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
