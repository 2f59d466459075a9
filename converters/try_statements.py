"""``try`` statements: ``except`` clauses that check what they caught, and jumps in
``finally`` that discard what was pending.

An ``except`` clause of a ``try`` whose body calls functions starts by checking the
exception it caught (``ag__.check_caught()``): an error raised while a staged
branch or loop was traced (which Python would raise only for some inputs) or a
``ConversionError`` of autograph is never handled as if the computation had raised
it. Before:

    try:
        y = helper(x)
    except ValueError:
        y = 0.0

After:

    try:
        y = helper(x)
    except ValueError:
        ag__.check_caught()
        y = 0.0

A ``break``, ``continue`` or ``return`` in a ``finally`` discards the exception in
flight (and overrides a pending jump). The jump converters that run next make
jumps flags, which discard nothing, so the exception is caught here and raised
again at the end of the ``finally``, where a jump in it skips that. Before:

    while c < 2:
        c += 1
        try:
            x = 1 / d
        finally:
            break

After:

    while c < 2:
        c += 1
        pending_error = None
        try:
            x = 1 / d
        except BaseException:
            pending_error = ag__.current_exception()
        finally:
            break
            if pending_error is not None:
                raise pending_error

(The jump converters then drop what follows the ``break``; a jump converted from a
``finally`` also clears the flags of the jumps it overrides, see
``break_statements``.)
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos, walk_same_scope
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Try,)

_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert the ``try`` statements of ``node`` and of the functions nested in it."""
    return _Tries(ctx).visit(node)


class _Tries(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Try(self, node):
        node = self.generic_visit(node)
        if node.handlers and any(isinstance(sub, gast.Call)
                                 for sub in walk_same_scope(node.body)):
            for handler in node.handlers:
                check = templates.replace("ag__.check_caught()", ag__=self.ctx.runtime_name)
                templates.set_location(check, handler)
                handler.body = check + handler.body
        jumps = _jumps_leaving(node.finalbody)
        if not jumps:
            return node
        for jump in jumps:
            annos.set(jump, annos.FINALLY_JUMP, True)
        return self._discard_on_jump(node)

    def _discard_on_jump(self, node):
        pending = self.ctx.fresh_name("pending_error")
        inner = [node] if node.handlers or node.orelse else node.body
        final, node.finalbody = node.finalbody, []
        new = templates.replace(
            """
            pending = None
            try:
                inner
            except BaseException:
                pending = ag__.current_exception()
            finally:
                final
                if pending is not None:
                    raise pending
            """, ag__=self.ctx.runtime_name, pending=pending, inner=inner, final=final)
        annos.set(new[1], annos.KEEPS_ERRORS, True)
        templates.set_location(new, node)
        return new


def _jumps_leaving(final):
    """The ``return`` statements of a ``finally`` block, and its ``break`` and
    ``continue`` statements that leave it (not those of a loop inside it)."""
    found = []
    stack = list(final)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (gast.Return, gast.Break, gast.Continue)):
            found.append(stmt)
        elif isinstance(stmt, _LOOPS):   # its `else` is outside the loop
            found.extend(s for s in walk_same_scope(stmt.body)
                         if isinstance(s, gast.Return))
            stack.extend(stmt.orelse)
        elif not isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list):
                    stack.extend(s for s in block if isinstance(s, gast.stmt))
            for handler in getattr(stmt, "handlers", []):
                stack.extend(handler.body)
            stack.extend(s for case in getattr(stmt, "cases", []) for s in case.body)
    return found
