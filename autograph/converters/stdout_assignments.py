"""``sys.stdout = stream`` by hand, followed as ``contextlib.redirect_stdout`` is.

A staged ``print`` without ``file=`` writes to ``sys.stdout`` when the program
runs, after the function has put the old stream back: its text went to the
stdout of the caller, where Python's went to ``stream``. The assignment becomes
``ag__.set_stdout``, which makes it and, under ``jit``, notes the swap, so that
such a ``print`` goes to the stream the function set (``runtime/handlers.py``).
(``print`` becomes ``ag__.print_`` in ``print_function``.) Before:

    sys.stdout = buf
    print("x", x)
    sys.stdout = old

After:

    ag__.set_stdout(sys, buf)
    print("x", x)
    ag__.set_stdout(sys, old)
"""

from __future__ import annotations

import sys

import gast

from autograph import templates
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Assign,)
NEEDED_ON_SOURCE = True   # (no converter before this one makes such an assignment)


def needed(nodes, ctx) -> bool:
    """Whether one of ``nodes`` assigns ``sys.stdout``."""
    return any(node.__class__ is gast.Assign and _swapped(node, ctx) is not None
               for node in nodes)


def rewrite(node: gast.FunctionDef, ctx, nodes=None) -> gast.FunctionDef:
    """Route the assignments of ``sys.stdout`` in ``node`` through ``ag__.set_stdout``."""
    return _Swaps(ctx).visit(node)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    return rewrite(node, ctx)


def _swapped(node, ctx):
    """The ``sys`` expression of ``node``'s one target ``sys.stdout``, or None (a
    tuple target is left as it is)."""
    if len(node.targets) != 1:
        return None
    target = node.targets[0]
    if not (isinstance(target, gast.Attribute) and target.attr == "stdout"):
        return None
    owner = target.value
    if ctx.value_of(owner) is sys or isinstance(owner, gast.Name) and owner.id == "sys":
        return owner
    return None


class _Swaps(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Assign(self, node):
        owner = _swapped(node, self.ctx)
        if owner is None:
            return node
        new = templates.replace("ag__.set_stdout(owner, value)", ag__=self.ctx.runtime_name,
                                owner=owner, value=node.value)
        for statement in new:
            templates.set_location(statement, node)
        return new
