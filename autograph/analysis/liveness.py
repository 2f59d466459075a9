"""Liveness: which names may still be read after each point of a function.

A backward pass over the structured statement lists. Loops iterate to a fixed
point. The result is attached to every ``if``, ``while`` and ``for``:
``LIVE_OUT`` (after the statement), ``LIVE_IN_BODY`` / ``LIVE_IN_ORELSE`` (on
entry to a block) and ``LIVE_AT_HEAD`` (at the top of each loop iteration).

The answer errs on the side of "live": a name that may be read is live. What a
nested function or lambda reads counts where it is defined; a name that one
which may run later shares with the function is kept in its cell rather than
carried as a value (``analysis/closures.py``, ``converters/control_flow.py``), so
whether it is live elsewhere does not decide what a block carries. The name an
``except ... as e`` clause binds is unbound at the clause's end: it is dead there.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from autograph.analysis import annos
from autograph.analysis.activity import bound_names, pattern_captures, read_names
from autograph.walk import walk


@dataclass(frozen=True)
class _JumpTargets:
    """What is live where the jumps out of the enclosing loop's body land."""

    after: frozenset   # live where `break` jumps
    head: frozenset    # live where `continue` jumps


def annotate_liveness(fn: gast.FunctionDef, nodes=None) -> None:
    """Annotate every control-flow statement of ``fn`` (nested functions included);
    lambdas are expressions read where they stand. ``nodes``: ``list(walk(fn))`` if
    the caller has it."""
    functions = _FUNCTIONS
    for node in walk(fn) if nodes is None else nodes:
        if node.__class__ in functions:
            _Liveness().block(node.body, frozenset(), None)


_FUNCTIONS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef))


# Statement class -> its method of _Liveness (None: the generic one), found once.
_STATEMENT_METHODS: dict = {}
_UNKNOWN = object()


class _Liveness:
    def __init__(self):
        # Per simple statement (by id; the tree does not change during the pass):
        # what it kills and reads. A loop body is analysed until its head settles,
        # twice at least, and again for each round of an enclosing loop.
        self._simple = {}

    def block(self, stmts, live_out, loop):
        live = frozenset(live_out)
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live, loop)
        return live

    def stmt(self, node, live_out, loop):
        method = _STATEMENT_METHODS.get(node.__class__, _UNKNOWN)
        if method is _UNKNOWN:
            method = _STATEMENT_METHODS[node.__class__] = getattr(
                _Liveness, "stmt_" + node.__class__.__name__, None)
        if method is not None:
            return method(self, node, live_out, loop)
        return self.simple(node, live_out)

    def simple(self, node, live_out):
        facts = self._simple.get(id(node))
        if facts is None:
            facts = self._simple[id(node)] = (_kills(node), _uses(node))
        return (live_out - facts[0]) | facts[1]

    def stmt_If(self, node, live_out, loop):
        body_in = self.block(node.body, live_out, loop)
        orelse_in = self.block(node.orelse, live_out, loop)
        annos.set(node, annos.LIVE_OUT, live_out)
        annos.set(node, annos.LIVE_IN_BODY, body_in)
        annos.set(node, annos.LIVE_IN_ORELSE, orelse_in)
        return frozenset(read_names(node.test)) | body_in | orelse_in

    def stmt_While(self, node, live_out, loop):
        orelse_in = self.block(node.orelse, live_out, loop)
        test_reads = frozenset(read_names(node.test))
        head = test_reads | orelse_in
        while True:
            body_in = self.block(node.body, head, _JumpTargets(live_out, head))
            new_head = test_reads | body_in | orelse_in
            if new_head == head:
                break
            head = new_head
        annos.set(node, annos.LIVE_OUT, live_out)
        annos.set(node, annos.LIVE_IN_BODY, body_in)
        annos.set(node, annos.LIVE_AT_HEAD, head)
        return head

    def stmt_For(self, node, live_out, loop):
        orelse_in = self.block(node.orelse, live_out, loop)
        target_kills = frozenset(bound_names(node.target))
        target_reads = frozenset(read_names(node.target))
        extra_test = annos.get(node, annos.EXTRA_TEST)  # checked before each iteration
        test_reads = frozenset(read_names(extra_test)) if extra_test is not None else frozenset()
        head = orelse_in | test_reads
        while True:
            body_in = self.block(node.body, head, _JumpTargets(live_out, head))
            new_head = orelse_in | (body_in - target_kills) | target_reads | test_reads
            if new_head == head:
                break
            head = new_head
        annos.set(node, annos.LIVE_OUT, live_out)
        annos.set(node, annos.LIVE_IN_BODY, body_in)
        annos.set(node, annos.LIVE_AT_HEAD, head)
        return frozenset(read_names(node.iter)) | head

    stmt_AsyncFor = stmt_For

    def stmt_Break(self, node, live_out, loop):
        return loop.after if loop is not None else live_out

    def stmt_Continue(self, node, live_out, loop):
        return loop.head if loop is not None else live_out

    def stmt_Return(self, node, live_out, loop):
        return frozenset(read_names(node.value)) if node.value is not None else frozenset()

    def stmt_Raise(self, node, live_out, loop):
        return frozenset(read_names(node))

    def stmt_With(self, node, live_out, loop):
        body_in = self.block(node.body, live_out, loop)
        kills = set()
        for item in node.items:
            if item.optional_vars is not None:
                kills |= bound_names(item.optional_vars)
        return (body_in - kills) | frozenset(read_names(node.items))

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node, live_out, loop):
        # An exception no handler catches runs the `finally` and leaves: what follows
        # the `try` is not read on that path. (Computed first: the normal path's
        # pass, which annotates the statements of the `finally`, must come last.)
        final_raising = self.block(node.finalbody, frozenset(), loop)
        # Any statement of the body may raise into a handler: be generous.
        final_in = self.block(node.finalbody, live_out, loop)
        orelse_in = self.block(node.orelse, final_in, loop)
        handlers_in = frozenset()
        for handler in node.handlers:
            # `except E as e`: `e` is bound on entry and unbound at the end.
            unbound = frozenset(bound_names(handler.name)) if handler.name else frozenset()
            handlers_in |= self.block(handler.body, final_in - unbound, loop) - unbound
            if handler.type is not None:
                handlers_in |= read_names(handler.type)
        body_in = self.block(node.body, orelse_in | handlers_in | final_in, loop)
        return body_in | handlers_in | final_raising

    stmt_TryStar = stmt_Try

    def stmt_Match(self, node, live_out, loop):
        live = frozenset(live_out)   # no case may match
        for case in node.cases:
            # The guard and the body run after the pattern bound its captures.
            after_pattern = self.block(case.body, live_out, loop)
            if case.guard is not None:
                after_pattern |= read_names(case.guard)
            live |= (after_pattern - pattern_captures(case.pattern)) | read_names(case.pattern)
        return live | read_names(node.subject)


def _kills(node) -> frozenset:
    """Names a simple statement certainly rebinds (``x = ...``, ``del x``, ``def x``)."""
    if isinstance(node, gast.Assign):
        names = set()
        for target in node.targets:
            names |= bound_names(target)
        return frozenset(names)
    if isinstance(node, gast.AnnAssign) and node.value is not None:
        return frozenset(bound_names(node.target))
    if isinstance(node, gast.Delete):
        names = set()
        for target in node.targets:
            names |= bound_names(target)
        return frozenset(names)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return frozenset([node.name])
    if isinstance(node, (gast.Import, gast.ImportFrom)):
        return frozenset((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset()


def _uses(node) -> frozenset:
    """Names a simple statement reads (``x += 1`` reads ``x``; ``x[i] = v`` reads ``x``)."""
    if isinstance(node, gast.AugAssign):
        return frozenset(read_names(node.value) | read_names(node.target)
                         | bound_names(node.target))
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return frozenset(read_names(node))
    if isinstance(node, (gast.Global, gast.Nonlocal, gast.Import, gast.ImportFrom, gast.Pass)):
        return frozenset()
    return frozenset(read_names(node))
