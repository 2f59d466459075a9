"""Directives out of the code: loop options onto their loop, calls marked.

A call is a directive when the called name is bound to one when the function is
converted (``set_loop_options``, ``autograph.set_loop_options``, an alias of it),
never by its name alone. Before:

    while x < 10.0:
        autograph.set_loop_options(maximum_iterations=30)
        x = x * 2.0

After:

    while x < 10.0:   # loop options: maximum_iterations=30
        x = x * 2.0

The options are checked here (known names, keywords only, literals of the right
type) and annotated on the loop (``LOOP_OPTIONS``); the control-flow converter
passes them to ``ag__.while_stmt`` / ``ag__.for_stmt``. A ``set_loop_options`` that
is not the first statement of a loop body is refused. A call of
``set_element_type`` stays as it is, annotated (``DIRECTIVE``) for the lists
converter.
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.converters.base import Transformer
from autograph.directives import LOOP_OPTIONS, directive_name, loop_option_error
from autograph.errors import ConversionError
from autograph.walk import walk

NODE_TYPES = (gast.Call,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Take the loop options of the loops in ``node`` (nested functions included)
    onto their loops, and mark the other directive calls."""
    nodes = list(walk(node))
    return rewrite(node, ctx, nodes) if needed(nodes, ctx) else node


def needed(nodes, ctx) -> bool:
    """Whether ``nodes`` (a walk of the function) hold a call of a directive (one
    walk, cheaper than the transformer's visit of each node)."""
    directive = _Directives(ctx)._directive
    return any(directive(sub) for sub in nodes if sub.__class__ is gast.Call)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return _Directives(ctx).visit(node)


class _Directives(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx
        self.in_loop = [False]      # per scope: whether the node visited is in a loop

    def _directive(self, node) -> str | None:
        if not isinstance(node, gast.Call):
            return None
        return directive_name(self.ctx.value_of(node.func))

    def _visit_scope(self, node):
        self.in_loop.append(False)
        try:
            return self.generic_visit(node)
        finally:
            self.in_loop.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _visit_scope

    def _visit_loop(self, node):
        first = node.body[0]
        if isinstance(first, gast.Expr) and self._directive(first.value) == "set_loop_options":
            annos.set(node, annos.LOOP_OPTIONS, self._loop_options(first.value))
            rest = node.body[1:]
            if not rest:
                rest = [gast.Pass()]
                gast.copy_location(rest[0], first)
            node.body = rest
        outer, self.in_loop[-1] = self.in_loop[-1], True
        try:
            return self.generic_visit(node)
        finally:
            self.in_loop[-1] = outer

    visit_While = visit_For = _visit_loop

    def visit_Call(self, node):
        node = self.generic_visit(node)
        name = self._directive(node)
        if name == "set_loop_options":      # not taken onto a loop: misplaced
            where = ("elsewhere in a loop" if self.in_loop[-1] else "outside any loop")
            self._error(node, f"set_loop_options() must be the first statement of a loop "
                              f"body (it sets that loop's options); here it is {where}")
        if name is not None:
            annos.set(node, annos.DIRECTIVE, name)
        return node

    def _loop_options(self, call):
        if call.args:
            self._error(call, "set_loop_options() takes keyword arguments only")
        for keyword in call.keywords:
            if keyword.arg is None:
                self._error(call, "set_loop_options() takes its options written out as "
                                  "keywords (not `**options`), so they can be checked here")
            if keyword.arg not in LOOP_OPTIONS:
                self._error(call, f"set_loop_options() got an unknown option "
                                  f"{keyword.arg!r}; it takes {', '.join(LOOP_OPTIONS)}")
            found, value = _literal(keyword.value)
            message = loop_option_error(keyword.arg, value) if found else None
            if message is not None:
                self._error(keyword.value, message)
        return list(call.keywords)

    def _error(self, node, message):
        raise ConversionError(message, self.ctx.filename, node.lineno, node.col_offset)


def _literal(node):
    """``(True, value)`` for a constant (``30``, ``-1``, ``None``), else ``(False, None)``."""
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float, complex))):
        value = node.operand.value
        return True, -value if isinstance(node.op, gast.USub) else +value
    if isinstance(node, gast.Constant):
        return True, node.value
    return False, None
