"""Derived trip bounds of triangular loops, for the control-flow converter.

A ``for`` over a range that depends on the indices of enclosing ``for`` loops over
ranges (``for j in range(i + 1, n)`` inside ``for i in range(n)``) gets
``bound=ag__.loop_bound(lambda i: ag__.range_(i + 1, n), i)``: staged, the runtime
derives its largest trip count from the enclosing loops' ranges, so the loop is
bounded and reverse-differentiable.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos
from autograph.walk import walk

# What a range whose bound is derived may be made of (computing it has no effect).
_PURE_NODES = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute,
               gast.Subscript, gast.Tuple, gast.Load, gast.operator, gast.unaryop,
               gast.expr_context)
_PURE_CALLS = ("range_", "reversed_", "len_", "min_", "max_", "int_")


def range_args(iterable):
    """The arguments of ``iterable`` if it is ``ag__.range_(...)`` (or that range
    reversed, ``ag__.reversed_(ag__.range_(...))``), else None."""
    operator = annos.runtime_operator(iterable)
    if operator is None or iterable.keywords:
        return None
    if operator == "range_":
        return iterable.args
    if operator == "reversed_" and len(iterable.args) == 1:
        return range_args(iterable.args[0])
    return None


def derived_bound(node, enclosing, runtime_name):
    """``[bound=ag__.loop_bound(lambda i: <range>, i)]`` for the ``for`` ``node`` over
    a range that depends on ``enclosing`` (the indices of the ``for`` loops over
    ranges around it), else ``[]``. The range must be made of names, constants,
    arithmetic and ``len``/``min``/``max``/``int``, so computing it again has no
    effect."""
    args = range_args(node.iter)
    if args is None or not enclosing:
        return []
    used = []
    for sub in walk(gast.Tuple(elts=list(args), ctx=gast.Load())):
        if not isinstance(sub, _PURE_NODES) and annos.runtime_operator(sub) not in _PURE_CALLS:
            return []
        if isinstance(sub, gast.Name) and sub.id in enclosing and sub.id not in used:
            used.append(sub.id)
    if not used:
        return []
    call = templates.replace_expr("ag__.loop_bound(lambda indices: rng, indices)",
                                  ag__=runtime_name, indices=used,
                                  rng=templates.copy_tree(node.iter))
    return [gast.keyword(arg="bound", value=call)]
