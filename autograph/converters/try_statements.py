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

A ``try`` whose ``except`` could catch an error Python raises on values
(``ZeroDivisionError``, ``OverflowError``, ``FloatingPointError``,
``IndexError``, or a base of one: ``ArithmeticError``, ``LookupError``,
``Exception``, ``BaseException``, a bare ``except``) and that does not just raise
again cannot be honoured around traced operations, which never raise them
(``x / 0`` is ``inf``, an index out of range is clamped). Such a ``try`` is marked
(``annos.CATCHES_VALUE_ERRORS``: a staged branch or loop inside its body is refused,
``analysis/stageability.py``) and first checks the variables its body reads:
one that holds a traced value is a ``ConversionError`` at the ``try``. Before:

    try:
        b = 1.0 / a
    except ZeroDivisionError:
        b = 10.0

After:

    ag__.check_try_inputs('a')
    try:
        b = 1.0 / a
    except ZeroDivisionError:
        b = 10.0

A ``try`` whose handlers catch only other errors (``ValueError``, ``TypeError``,
``KeyError``, the user's own) runs as Python runs it, around and inside staged
regions alike: those are raised while tracing, as in Python (``check_caught``
refuses one raised by a branch Python would not have taken).
"""

from __future__ import annotations

import builtins

import gast

from autograph import templates
from autograph.analysis import annos, walk_same_scope
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Try,)

_LOOPS = (gast.For, gast.While, gast.AsyncFor)
# What Python raises on values where traced operations raise nothing.
VALUE_ERRORS = (ZeroDivisionError, OverflowError, FloatingPointError, IndexError)
# A body holding one of these may raise while a staged region is traced.
_MAY_RAISE = (gast.Call, gast.Raise)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert the ``try`` statements of ``node`` and of the functions nested in it."""
    return _Tries(ctx).visit(node)


class _Tries(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_Try(self, node):
        node = self.generic_visit(node)
        if node.handlers and any(isinstance(sub, _MAY_RAISE)
                                 for sub in walk_same_scope(node.body)):
            for handler in node.handlers:
                check = templates.replace("ag__.check_caught()", ag__=self.ctx.runtime_name)
                templates.set_location(check, handler)
                handler.body = check + handler.body
        before = []
        if catches_value_errors(node):
            annos.set(node, annos.CATCHES_VALUE_ERRORS, True)
            before = self._check_inputs(node)
        jumps = _jumps_leaving(node.finalbody)
        if not jumps:
            return before + [node] if before else node
        for jump in jumps:
            annos.set(jump, annos.FINALLY_JUMP, True)
        return before + self._discard_on_jump(node)

    def _check_inputs(self, node):
        names = _names_read(node.body)
        if not names:
            return []
        call = gast.Call(
            func=gast.Attribute(value=gast.Name(id=self.ctx.runtime_name, ctx=gast.Load(),
                                                annotation=None, type_comment=None),
                                attr="check_try_inputs", ctx=gast.Load()),
            args=[gast.Constant(value=name, kind=None) for name in names], keywords=[])
        check = gast.Expr(value=call)
        templates.set_location([check], node)
        return [check]

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


def catches_value_errors(node) -> bool:
    """Whether an ``except`` of the ``try`` ``node`` could catch an error Python
    raises on values (``VALUE_ERRORS`` or a base of one, a bare ``except``) and
    handles it, not only raising again. Only built-in names are known: an
    ``except`` naming another class catches none of them."""
    for handler in node.handlers:
        if handler.body and isinstance(handler.body[-1], gast.Raise):
            continue
        types = handler.type
        kinds = types.elts if isinstance(types, gast.Tuple) else [types]
        for kind in kinds:
            if kind is None:
                return True
            name = kind.id if isinstance(kind, gast.Name) else (
                kind.attr if isinstance(kind, gast.Attribute) else None)
            cls = getattr(builtins, name, None) if name else None
            if isinstance(cls, type) and any(issubclass(error, cls)
                                             for error in VALUE_ERRORS):
                return True
    return False


def _names_read(body) -> list:
    """The variables ``body`` reads (augmented targets too), in order, once each."""
    names = {}
    for stmt in body:
        for sub in gast.walk(stmt):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                names.setdefault(sub.id, None)
            elif isinstance(sub, gast.AugAssign) and isinstance(sub.target, gast.Name):
                names.setdefault(sub.target.id, None)
    return list(names)


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
