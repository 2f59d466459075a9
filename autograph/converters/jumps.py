"""What ``break``, ``continue`` and ``return`` share: each becomes a flag.

The three jump converters (``break_statements``, ``continue_statements``,
``return_statements``, run in the order continue, break, return) replace a jump by
setting a flag and guard what would have been skipped with
``if ag__.not_(flag):``; a loop that a jump leaves also tests the flag
(``add_loop_condition``). Here are the pieces they share:

- ``guard_after_jumps``: the jump becomes ``flag = True``; the statements after
  it are dropped, moved into the other branch of an ``if`` that never completes,
  or guarded;
- ``cancel_pending``: a jump in a ``finally`` overrides the one pending from its
  ``try`` (``annos.FINALLY_JUMP``);
- ``drop_unread_flag``: a flag nothing reads is not set at all;
- ``LoopJumps``: visits loops inner first, knowing their nesting depth
  (``flag_name``: ``did_break``, ``did_break_2``...);
- ``reject_leftover_jumps``: for the control-flow converter, a jump that is
  still inside a block is one these converters could not handle.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import SCOPES, annos, read_names, stays_python
from autograph.converters.base import Transformer
from autograph.errors import ConversionError

_LOOPS = (gast.For, gast.While, gast.AsyncFor)


class LoopJumps(Transformer):
    """Visits loops inner first, knowing each loop's nesting depth in its function
    (nested loops need flags of their own); ``rewrite_loop(node, level)`` does the
    converter's own rewrite."""

    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx
        self.depth = 0

    def visit_FunctionDef(self, node):
        depth, self.depth = self.depth, 0
        node = self.generic_visit(node)
        self.depth = depth
        return node

    def _visit_loop(self, node):
        self.depth += 1
        level = self.depth
        node = self.generic_visit(node)
        self.depth -= 1
        return self.rewrite_loop(node, level)

    visit_While = _visit_loop
    visit_For = _visit_loop

    def rewrite_loop(self, node, level):
        raise NotImplementedError


def flag_name(base, depth):
    """``base`` for an outermost loop, ``base_2`` for a loop inside it, and so on:
    nested loops need flags of their own."""
    return base if depth <= 1 else f"{base}_{depth}"


def contains(stmts, kind, into_loops):
    """Whether ``stmts`` hold a ``kind`` statement (a jump) of this function (of this
    loop unless ``into_loops``). Only statements are walked: no expression holds
    one, and a nested definition's body is another function's."""
    skip = () if into_loops else _LOOPS
    stack = [stmt for stmt in stmts if not isinstance(stmt, skip)]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            return True
        if not isinstance(node, SCOPES):
            stack.extend(sub for sub in _statements_under(node) if not isinstance(sub, skip))
    return False


def guard_after_jumps(stmts, kind, flag, ag, into_loops, on_jump=None, on_loop=None):
    """``stmts`` with each ``kind`` statement replaced by ``flag = True`` (or by
    ``on_jump(stmt)``), and the statements after one that may jump wrapped in
    ``if ag__.not_(flag):``. ``on_loop(loop)`` is called for each loop entered.

    What Python decides statically stays static: the statements after an ``if``
    one of whose branches never completes (it jumps, returns or raises on every
    path) move into the other branch, and those after a statement that never
    completes are dropped (Python never runs them), so no flag decides them."""
    exits = _EXITS[kind]

    def rewrite(block):
        return guard_after_jumps(block, kind, flag, ag, into_loops, on_jump, on_loop)

    out = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, kind):
            jump = on_jump(stmt) if on_jump else templates.replace("flag = True", flag=flag)
            templates.set_location(jump, stmt)
            if annos.get(stmt, annos.FINALLY_JUMP, False):
                annos.set(jump[-1], annos.FINALLY_JUMP, True)
            out.extend(jump)
            return out  # what follows a jump never runs
        if not contains([stmt], kind, into_loops):
            out.append(stmt)
            continue
        rest = stmts[i + 1:]
        if isinstance(stmt, gast.If):
            body_exits = never_completes(stmt.body, exits)
            orelse_exits = never_completes(stmt.orelse, exits)
            if body_exits or orelse_exits:
                # The rest runs only after the branch that can complete: it goes there.
                stmt.body = rewrite(stmt.body if body_exits else stmt.body + rest)
                stmt.orelse = rewrite(stmt.orelse if orelse_exits else stmt.orelse + rest)
                out.append(stmt)
                return out
        guard_else = isinstance(stmt, _TRIES) and stmt.orelse and contains(
            stmt.body, kind, into_loops)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                setattr(stmt, field, rewrite(block))
        for handler in _handlers_and_cases(stmt):
            handler.body = rewrite(handler.body)
        if guard_else:
            # A `try`'s `else` runs only when its body completed: not after a jump.
            stmt.orelse = templates.replace("if ag__.not_(flag):\n    orelse", ag__=ag,
                                            flag=flag, orelse=stmt.orelse)
            templates.set_location(stmt.orelse, stmt.orelse[0].body[0])
        if isinstance(stmt, _LOOPS) and on_loop is not None:
            on_loop(stmt)
        out.append(stmt)
        if rest and not never_completes([stmt], exits):
            guard = templates.replace("if ag__.not_(flag):\n    rest", ag__=ag, flag=flag,
                                      rest=rewrite(rest))
            templates.set_location(guard, rest[0])
            out.extend(guard)
        return out
    return out


_TRIES = (gast.Try, gast.TryStar)
# The statements that never complete normally (besides `raise`), by the jump being
# converted: the converters run continue, break, return, so the kinds converted
# before are flags by then.
_EXITS = {gast.Continue: (gast.Continue, gast.Break, gast.Return),
          gast.Break: (gast.Break, gast.Return), gast.Return: (gast.Return,)}


def never_completes(stmts, exits=(gast.Return,), raises=True) -> bool:
    """Whether running ``stmts`` never reaches what follows them: every path ends in
    one of the ``exits`` statements or (``raises``) a ``raise``, or in a ``while
    True`` without ``break``. Blocks of loops are not entered (a ``break`` there
    leaves that loop only); a ``raise`` in a ``with`` may be suppressed by it."""
    for stmt in stmts:
        if isinstance(stmt, exits) or raises and isinstance(stmt, gast.Raise):
            return True
        if isinstance(stmt, gast.If) and never_completes(
                stmt.body, exits, raises) and never_completes(stmt.orelse, exits, raises):
            return True
        if isinstance(stmt, (gast.With, gast.AsyncWith)) and never_completes(
                stmt.body, exits, raises=False):
            return True
        if isinstance(stmt, _TRIES) and (never_completes(stmt.finalbody, exits, raises) or (
                never_completes(stmt.body + stmt.orelse, exits, raises) and all(
                    never_completes(h.body, exits, raises) for h in stmt.handlers))):
            return True
        if (isinstance(stmt, gast.While) and isinstance(stmt.test, gast.Constant)
                and stmt.test.value is True
                and not contains(stmt.body, gast.Break, into_loops=False)):
            return True
    return False


def cancel_pending(stmts, flag, into_loops):
    """``stmts`` with ``flag = False`` after each jump flag set in a ``finally``
    (``annos.FINALLY_JUMP``) other than ``flag``'s own: a jump in a
    ``finally`` overrides the jump pending from its ``try`` (``try: return 1
    finally: break`` leaves the loop and returns nothing). ``into_loops``: also in
    nested loops (for ``return``, whose flag is the function's)."""
    out = []
    for stmt in stmts:
        out.append(stmt)
        if annos.get(stmt, annos.FINALLY_JUMP, False) and not _assigns(stmt, flag):
            reset = templates.replace("flag = False", flag=flag)
            templates.set_location(reset, stmt)
            out.extend(reset)
            continue
        if isinstance(stmt, SCOPES) or (isinstance(stmt, _LOOPS) and not into_loops):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                setattr(stmt, field, cancel_pending(block, flag, into_loops))
        for handler in _handlers_and_cases(stmt):
            handler.body = cancel_pending(handler.body, flag, into_loops)
    return out


def _assigns(stmt, flag):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == flag)


def drop_unread_flag(stmts, flag):
    """``stmts`` without the assignments to ``flag`` if nothing reads it (a jump that
    was the last thing its loop or function did needs no flag)."""
    if flag in read_names(stmts):
        return stmts
    return _without_assignments(stmts, flag)


def _without_assignments(stmts, flag):
    out = []
    for stmt in stmts:
        if _assigns(stmt, flag):
            if annos.get(stmt, annos.FINALLY_JUMP, False):   # still overrides what was pending
                out.append(gast.Pass())
                templates.set_location(out[-1:], stmt)
                annos.set(out[-1], annos.FINALLY_JUMP, True)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if (not isinstance(stmt, SCOPES) and isinstance(block, list) and block
                    and isinstance(block[0], gast.stmt)):
                setattr(stmt, field, _without_assignments(block, flag) or [gast.Pass()])
        for handler in _handlers_and_cases(stmt):
            handler.body = _without_assignments(handler.body, flag) or [gast.Pass()]
        out.append(stmt)
    return out


def _handlers_and_cases(stmt):
    """The ``except`` handlers of a ``try``, the cases of a ``match``: blocks of the
    statement, each in a ``body``."""
    return getattr(stmt, "handlers", None) or getattr(stmt, "cases", None) or []


def add_loop_condition(loop, flag, ag):
    """Make ``loop`` also stop once ``flag`` is set."""
    keep_going = templates.replace_expr("ag__.not_(flag)", ag__=ag, flag=flag)
    if isinstance(loop, gast.While):
        loop.test = _and(keep_going, loop.test, ag)
        templates.set_location(loop.test, loop)
    else:
        existing = annos.get(loop, annos.EXTRA_TEST)
        annos.set(loop, annos.EXTRA_TEST, keep_going if existing is None
                  else _and(keep_going, existing, ag))


def _and(first, second, ag):
    """``ag__.and_(lambda: first, lambda: second)``, flattened; ``True`` dropped."""
    if isinstance(second, gast.Constant) and second.value is True:
        return first
    new = templates.replace_expr("ag__.and_(lambda: first)", ag__=ag, first=first)
    if annos.runtime_operator(second) == "and_":
        new.args.extend(second.args)
    else:
        new.args.append(gast.Lambda(
            args=gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                                kw_defaults=[], kwarg=None, defaults=[]), body=second))
    return new


_CONSTRUCTS = {gast.If: "if", gast.While: "while", gast.For: "for"}


def reject_leftover_jumps(fn, ctx):
    """The jump converters ran before: a ``return`` left inside a block, or a
    ``break``/``continue`` left inside a loop, is one they could not handle (a
    converted block runs to its end). Nested generators and coroutines stay Python.
    (A jump is a statement: the walk goes through statements only, in the order a
    walk of every node would meet them.)"""
    stack = [(child, None, None) for child in _statements_under(fn)]
    while stack:
        node, block, loop = stack.pop()
        if stays_python(node):
            continue
        if isinstance(node, SCOPES):
            stack.extend((child, None, None) for child in _statements_under(node))
            continue
        jump = (isinstance(node, gast.Return) and block is not None) or (
            isinstance(node, (gast.Break, gast.Continue)) and loop is not None)
        if jump:
            kind = type(node).__name__.lower()
            raise ConversionError(
                f"`{kind}` inside this `{block}` could not be converted; restructure the "
                "code so the block runs to its end", ctx.filename, node.lineno,
                node.col_offset)
        construct = _CONSTRUCTS.get(type(node))
        if construct is not None:
            block = construct
            if construct != "if":
                loop = construct
        stack.extend((child, block, loop) for child in _statements_under(node))


# The fields holding statements, or the handlers and cases that hold them, in the
# order every node type having them has them.
_STATEMENT_HOLDERS = ("body", "handlers", "orelse", "finalbody", "cases")


def _statements_under(node) -> list:
    """The children of ``node`` that are or hold statements, in ``child_nodes`` order
    (a lambda's body is an expression, not a list: none)."""
    children = []
    for field in _STATEMENT_HOLDERS:
        value = getattr(node, field, None)
        if value.__class__ is list:
            children += value
    return children
