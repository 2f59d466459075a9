"""Definedness: which local names are bound at each point of a function.

A forward pass over the structured statement lists. Every ``if``, ``while`` and
``for`` gets ``DEFINED_IN`` (bound on every path reaching it) and
``MAYBE_DEFINED_IN`` (bound on some path). Every read of a local name that may be
unbound there gets ``MAYBE_UNDEFINED``: the converters guard exactly those reads,
so an unbound name still raises ``UnboundLocalError`` after conversion.

A loop body starts each iteration with what earlier iterations may have bound
(``t`` bound in the first iteration and read in later ones is maybe bound at the
top of the body); the name of an ``except ... as e`` clause is unbound again at
the clause's end.
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.analysis.activity import bound_names, local_names
from autograph.analysis.scopes import walk_same_scope

# After `return`, `raise`, `break` or `continue` nothing is reachable: every name
# counts as bound there (the identity of the intersection at a join).
_UNREACHABLE = None


def annotate_definedness(fn: gast.FunctionDef) -> None:
    """Annotate ``fn`` and every function nested in it."""
    for node in gast.walk(fn):
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            _Definedness(local_names(node)).function(node)


def _meet(a, b):
    if a is _UNREACHABLE:
        return b
    if b is _UNREACHABLE:
        return a
    return a & b


class _Definedness:
    def __init__(self, locals_):
        self.locals = frozenset(locals_)

    def function(self, fn):
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        names = {p.id for p in params}
        for sub in gast.walk(fn):   # global/nonlocal names are bound outside
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                names.update(sub.names)
        names = frozenset(names)
        self.block(fn.body, names, names)

    def block(self, stmts, defined, maybe):
        for stmt in stmts:
            defined, maybe = self.stmt(stmt, defined, maybe)
        return defined, maybe

    def stmt(self, node, defined, maybe):
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is not None:
            return method(node, defined, maybe)
        self.mark_reads(node, defined)
        if defined is _UNREACHABLE:
            return defined, maybe
        bound = _binds(node)
        if isinstance(node, gast.Delete):
            return defined - bound, maybe
        return defined | bound, maybe | bound

    def mark_reads(self, node, defined):
        if defined is _UNREACHABLE:
            return
        for name in _reads_here(node):
            if name.id in self.locals and name.id not in defined:
                annos.set(name, annos.MAYBE_UNDEFINED, True)

    def _annotate(self, node, defined, maybe):
        annos.set(node, annos.DEFINED_IN, defined if defined is not _UNREACHABLE else maybe)
        annos.set(node, annos.MAYBE_DEFINED_IN, maybe)

    def stmt_If(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.test, defined)
        d1, m1 = self.block(node.body, defined, maybe)
        d2, m2 = self.block(node.orelse, defined, maybe)
        return _meet(d1, d2), m1 | m2

    def stmt_While(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.test, defined)
        head = maybe | _bound_in(node.body)
        d1, m1 = self.block(node.body, defined, head)
        if _lost(defined, d1):   # a later iteration starts without what the body deleted
            d1, m1 = self.block(node.body, _meet(defined, d1), head)
        return self.block(node.orelse, _meet(defined, d1), head | m1)

    def stmt_For(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.iter, defined)
        target = frozenset(bound_names(node.target))
        body_defined = defined | target if defined is not _UNREACHABLE else defined
        head = maybe | target | _bound_in(node.body)
        d1, m1 = self.block(node.body, body_defined, head)
        if _lost(defined, d1):
            d1, m1 = self.block(node.body, _meet(body_defined, d1 | target), head)
        return self.block(node.orelse, _meet(defined, d1), head | m1)

    stmt_AsyncFor = stmt_For

    def _exit(self, node, defined, maybe):
        self.mark_reads(node, defined)
        return _UNREACHABLE, maybe

    stmt_Return = stmt_Raise = stmt_Break = stmt_Continue = _exit

    def stmt_With(self, node, defined, maybe):
        for item in node.items:
            self.mark_reads(item.context_expr, defined)
            if item.optional_vars is not None and defined is not _UNREACHABLE:
                bound = frozenset(bound_names(item.optional_vars))
                defined, maybe = defined | bound, maybe | bound
        return self.block(node.body, defined, maybe)

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node, defined, maybe):
        # A handler may start after any statement of the body: it sees only what
        # was bound before the `try`.
        d_body, m_body = self.block(node.body, defined, maybe)
        d_out, m_out = self.block(node.orelse, d_body, m_body)
        for handler in node.handlers:
            start, unbound = defined, frozenset()
            if handler.name is not None:
                unbound = frozenset(bound_names(handler.name))
                if defined is not _UNREACHABLE:
                    start = defined | unbound
            d_h, m_h = self.block(handler.body, start, m_body | unbound)
            if d_h is not _UNREACHABLE:   # `except E as e` unbinds `e` at its end
                d_h = d_h - unbound
            d_out, m_out = _meet(d_out, d_h), m_out | m_h
        if node.finalbody:
            _, m_final = self.block(node.finalbody, defined, m_out)
            d_final, _ = self.block(node.finalbody, d_out, m_out)
            return d_final, m_out | m_final
        return d_out, m_out

    stmt_TryStar = stmt_Try

    def stmt_Match(self, node, defined, maybe):
        self.mark_reads(node.subject, defined)
        d_out, m_out = defined, maybe  # no case may match
        for case in node.cases:
            bound = frozenset(n for n in _pattern_names(case.pattern))
            start = defined | bound if defined is not _UNREACHABLE else defined
            if case.guard is not None:
                self.mark_reads(case.guard, start)
            d_c, m_c = self.block(case.body, start, maybe | bound)
            d_out, m_out = _meet(d_out, d_c), m_out | m_c
        return d_out, m_out


def _pattern_names(pattern):
    for node in gast.walk(pattern):
        for field in ("name", "rest"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                yield value


def _lost(before, after) -> bool:
    """Whether a name bound ``before`` a loop body may be unbound at its end."""
    return (before is not _UNREACHABLE and after is not _UNREACHABLE
            and not before <= after)


def _bound_in(stmts) -> frozenset:
    """Every name ``stmts`` may bind in their scope, on any path."""
    names = set()
    for sub in walk_same_scope(stmts):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
            names.add(sub.id)
        elif isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, (gast.Import, gast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
    return frozenset(names)


def _binds(node) -> frozenset:
    names = set()
    if isinstance(node, gast.Assign):
        for target in node.targets:
            names |= bound_names(target)
    elif isinstance(node, (gast.AugAssign, gast.AnnAssign)):
        if not isinstance(node, gast.AnnAssign) or node.value is not None:
            names |= bound_names(node.target)
    elif isinstance(node, gast.Delete):
        for target in node.targets:
            names |= bound_names(target)
    elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        names.add(node.name)
    elif isinstance(node, (gast.Import, gast.ImportFrom)):
        names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    for sub in walk_same_scope(node):
        if isinstance(sub, gast.NamedExpr):
            names |= bound_names(sub.target)
    return frozenset(names)


def _reads_here(node):
    """Name loads evaluated in this scope (comprehension variables excluded)."""
    comprehension_vars = set()
    for sub in walk_same_scope(node):
        if isinstance(sub, gast.comprehension):
            comprehension_vars |= bound_names(sub.target)
    for sub in walk_same_scope(node):
        if (isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load)
                and sub.id not in comprehension_vars):
            yield sub
