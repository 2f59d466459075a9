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

Boolean *flags*, variables only ever assigned ``True`` or ``False`` (the
``did_break``/``did_return`` of the jump converters, or the user's own
``found = True``), are followed too: at ``flag = True`` the analysis remembers
what is bound, and a block run under ``if flag:`` (or after ``if not flag:``
falls through) knows it. So ``for ...: if c: r = 1; break / else: r = 2`` leaves
``r`` bound after the loop, as Python has it. Each ``if`` also gets
``DEFINED_OUT`` (bound on every path after it), and the function ``READ_UNBOUND``:
the names some read (or ``del``) of which may find them unbound. A name outside
it is assigned before every read, so a staged region may carry a placeholder of
its type where Python has it unbound (``ag__.Unset``).
"""

from __future__ import annotations

from collections import Counter

import gast

from autograph.analysis import annos
from autograph.analysis.activity import bound_names, local_names, pattern_captures
from autograph.analysis.closures import IMMEDIATE_OPERATORS
from autograph.analysis.scopes import walk_same_scope
from autograph.walk import walk

_FUNCTIONS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef))
_DECLARATIONS = frozenset((gast.Global, gast.Nonlocal))

# After `return`, `raise`, `break` or `continue` nothing is reachable: every name
# counts as bound there (the identity of the intersection at a join).
_UNREACHABLE = None
# The side of a flag that no path reaching here has (the flag is known to have the
# other value): whatever holds on that side holds vacuously.
_NEVER = "never"


def annotate_definedness(fn: gast.FunctionDef, nodes=None, locals_of=None,
                         known=None) -> None:
    """Annotate ``fn`` and every function nested in it (``nodes``: ``list(walk(fn))``
    if the caller has it; ``locals_of``: a dict this fills with each function's
    ``local_names``, by ``id``; ``known``: those names, by ``id``, where the caller
    found them in this same tree)."""
    if nodes is None:
        nodes = list(walk(fn))
    for node in nodes:
        if node.__class__ in _FUNCTIONS:
            names = known[id(node)] if known is not None else local_names(node)
            if locals_of is not None:
                locals_of[id(node)] = names
            _Definedness(names).function(node, nodes if node is fn else None)


def _meet(a, b):
    if a is _UNREACHABLE:
        return b
    if b is _UNREACHABLE:
        return a
    return a & b


def _meet_flags(a, defined_a, b, defined_b):
    """Flags at a join of two paths (each with what it binds, ``defined_a`` and
    ``defined_b``): a flag both paths know, with what is bound whenever it is True
    and whenever it is False. A side one path never has is the other path's: all
    that path binds holds there."""
    if a is None or defined_a is _UNREACHABLE:
        return b
    if b is None or defined_b is _UNREACHABLE:
        return a
    out = {}
    for flag in a.keys() & b.keys():
        out[flag] = tuple(_meet_side(x, defined_a, y, defined_b)
                          for x, y in zip(a[flag], b[flag], strict=True))
    return out


def _meet_side(x, defined_x, y, defined_y):
    if x is _NEVER:
        return y if y is _NEVER else y | defined_y
    if y is _NEVER:
        return x | defined_x
    return (x | defined_x) & (y | defined_y)


def _static_trip_count(iterable):
    """How many items ``ag__.range_(...)`` of int constants gives, else None."""
    if annos.runtime_operator(iterable) != "range_" or iterable.keywords:
        return None
    bounds = []
    for arg in iterable.args:
        if isinstance(arg, gast.UnaryOp) and isinstance(arg.op, gast.USub):
            sign, arg = -1, arg.operand
        else:
            sign = 1
        if not (isinstance(arg, gast.Constant) and type(arg.value) is int):
            return None
        bounds.append(sign * arg.value)
    try:
        return len(range(*bounds))
    except (TypeError, ValueError):
        return None


# Statement class -> its method of _Definedness (None: the generic one), found once.
_STATEMENT_METHODS: dict = {}
_UNKNOWN = object()


class _Definedness:
    """The pass over one function. ``self.flags`` is the flag state of the path being
    analysed: ``{flag: (names bound whenever it is True, names bound whenever it is
    False)}``, a side ``_NEVER`` where the flag cannot have that value; None where
    nothing is reachable."""

    def __init__(self, locals_):
        self.locals = frozenset(locals_)
        self.flags = {}
        self.candidates = frozenset()
        self.read_unbound = set()
        # Per node (by id; the tree does not change during the pass): its reads of
        # locals (``_reads``: an expression's), and what it binds (``_simple``: a
        # simple statement's reads and binds). A loop body is analysed up to three
        # times, and each time again inside an enclosing loop's rounds.
        self._reads = {}
        self._simple = {}

    def function(self, fn, nodes=None):
        """Annotate ``fn``; ``nodes``: ``list(walk(fn))`` if the caller has it."""
        if nodes is None:
            nodes = list(walk(fn))
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        names = {p.id for p in params}
        for sub in nodes:   # global/nonlocal names are bound outside
            if sub.__class__ in _DECLARATIONS:
                names.update(sub.names)
        names = frozenset(names)
        self.candidates = _flag_names(fn, nodes) - names
        self.block(fn.body, names, names)
        annos.set(fn, annos.READ_UNBOUND, frozenset(self.read_unbound))

    def block(self, stmts, defined, maybe):
        for stmt in stmts:
            defined, maybe = self.stmt(stmt, defined, maybe)
        return defined, maybe

    def stmt(self, node, defined, maybe):
        method = _STATEMENT_METHODS.get(node.__class__, _UNKNOWN)
        if method is _UNKNOWN:
            method = _STATEMENT_METHODS[node.__class__] = getattr(
                _Definedness, "stmt_" + node.__class__.__name__, None)
        if method is not None:
            return method(self, node, defined, maybe)
        if defined is _UNREACHABLE:
            return defined, maybe     # (nothing read here is marked either)
        facts = self._simple.get(id(node))
        if facts is None:
            facts = self._simple[id(node)] = _statement_facts(node, self.locals)
        reads, bound = facts
        self._mark(reads, defined)
        if isinstance(node, gast.Delete):
            self.read_unbound |= bound - defined
            self._forget(bound)
            return defined - bound, maybe
        defined = defined | bound
        if self.flags is not None and bound & self.candidates:
            for flag in bound & self.candidates:
                is_true = isinstance(node, gast.Assign) and node.value.value is True
                self.flags[flag] = (defined, _NEVER) if is_true else (_NEVER, defined)
        return defined, maybe | bound

    def _forget(self, names):
        """Names unbound on this path are not bound when a flag says so either."""
        if self.flags:
            self.flags = {f: tuple(d if d is _NEVER else d - names for d in sides)
                          for f, sides in self.flags.items()}

    def mark_reads(self, node, defined):
        if defined is _UNREACHABLE:
            return
        reads = self._reads.get(id(node))
        if reads is None:
            locals_ = self.locals
            reads = self._reads[id(node)] = [
                name for name in _reads_here(node) if name.id in locals_]
        self._mark(reads, defined)

    def _mark(self, reads, defined):
        """Mark the reads (Name nodes) of names not in ``defined`` maybe undefined."""
        for name in reads:
            if name.id not in defined:
                annos.set(name, annos.MAYBE_UNDEFINED, True)
                self.read_unbound.add(name.id)

    def _annotate(self, node, defined, maybe):
        annos.set(node, annos.DEFINED_IN, defined if defined is not _UNREACHABLE else maybe)
        annos.set(node, annos.MAYBE_DEFINED_IN, maybe)

    def _branch(self, test, truth, defined, flags):
        """``(defined, flags)`` where ``test`` is known to be ``truth``."""
        flags = dict(flags) if flags is not None else None
        if defined is _UNREACHABLE or flags is None:
            return defined, flags
        stack = [(test, truth)]
        while stack:
            expr, value = stack.pop()
            if isinstance(expr, gast.Name) and expr.id in self.candidates:
                sides = flags.get(expr.id)
                side = None if sides is None else sides[0 if value else 1]
                if side is _NEVER and value:
                    return _UNREACHABLE, None
                if side is _NEVER:
                    # Code run only when a flag known True is False (the rest of a
                    # function after a loop that always returns) is not taken for
                    # unreachable: it stays in the converted code, and staged, it is
                    # traced.
                    side = None
                if side is not None:
                    defined = defined | side
                flags[expr.id] = (defined, _NEVER) if value else (_NEVER, defined)
                continue
            negated = _negation(expr)
            if negated is not None:
                stack.append((negated, not value))
                continue
            operands, is_and = _operands(expr)
            if operands is not None and value == is_and:
                stack.extend((operand, value) for operand in operands)
        return defined, flags

    def stmt_If(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.test, defined)
        flags = self.flags
        start, self.flags = self._branch(node.test, True, defined, flags)
        d1, m1 = self.block(node.body, start, maybe)
        after_body = self.flags
        start, self.flags = self._branch(node.test, False, defined, flags)
        d2, m2 = self.block(node.orelse, start, maybe)
        self.flags = _meet_flags(after_body, d1, self.flags, d2)
        out = _meet(d1, d2)
        annos.set(node, annos.DEFINED_OUT, out if out is not _UNREACHABLE else frozenset())
        return out, m1 | m2

    def _loop(self, node, body_start, defined, head, test=None):
        """The body from the loop head to its fixed point: ``(defined, maybe,
        flags)`` at its end; ``self.flags`` as at the head (where the loop is
        left)."""
        flags = self.flags
        for _ in range(3):
            start, self.flags = (self._branch(test, True, body_start, flags)
                                 if test is not None else (body_start, dict(flags or {})))
            d1, m1 = self.block(node.body, start, head)
            merged = _meet_flags(flags, defined, self.flags, d1)
            next_start = body_start
            if _lost(defined, d1):   # a later iteration starts without what it deleted
                next_start = _meet(body_start, d1 | (body_start - defined))
            if merged == flags and next_start == body_start:
                break
            flags, body_start = merged, next_start
        else:
            # No fixed point in three rounds: trust no flag at the head.
            flags = {}
            self.flags = {}
            d1, m1 = self.block(node.body, body_start, head)
        end, self.flags = self.flags, flags
        return d1, m1, end

    def stmt_While(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.test, defined)
        head = maybe | _bound_in(node.body)
        d1, m1, _ = self._loop(node, defined, defined, head, node.test)
        return self.block(node.orelse, _meet(defined, d1), head | m1)

    def stmt_For(self, node, defined, maybe):
        self._annotate(node, defined, maybe)
        self.mark_reads(node.iter, defined)
        target = frozenset(bound_names(node.target))
        body_defined = defined | target if defined is not _UNREACHABLE else defined
        head = maybe | target | _bound_in(node.body)
        runs = self._runs_at_least_once(node, defined)
        d1, m1, end = self._loop(node, body_defined, defined, head)
        # Left after an iteration, never before the first. (If no iteration
        # completes, the code after it still stands in the converted function: the
        # loop's own jumps are flags by now.)
        if runs and d1 is not _UNREACHABLE:
            self.flags = end
            return self.block(node.orelse, d1, head | m1)
        return self.block(node.orelse, _meet(defined, d1), head | m1)

    def _runs_at_least_once(self, node, defined) -> bool:
        """Whether the ``for`` ``node`` runs its body at least once: a range of int
        constants that is not empty, and its extra test (a jump's flag,
        ``annos.EXTRA_TEST``) true on entry."""
        if defined is _UNREACHABLE or not _static_trip_count(node.iter):
            return False
        extra = annos.get(node, annos.EXTRA_TEST)
        return extra is None or self._branch(extra, False, defined, self.flags)[0] is _UNREACHABLE

    stmt_AsyncFor = stmt_For

    def _exit(self, node, defined, maybe):
        self.mark_reads(node, defined)
        self.flags = None
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
        # was bound before the `try`, and the flags the body does not assign.
        entry = self.flags
        assigned = {n.id for n in walk_same_scope(node.body) if isinstance(n, gast.Name)
                    and not isinstance(n.ctx, gast.Load)}
        flags = None if entry is None else {f: v for f, v in entry.items()
                                            if f not in assigned}
        d_body, m_body = self.block(node.body, defined, maybe)
        d_out, m_out = self.block(node.orelse, d_body, m_body)
        after = self.flags
        for handler in node.handlers:
            self.flags = dict(flags) if flags is not None else None
            start, unbound = defined, frozenset()
            if handler.name is not None:
                unbound = frozenset(bound_names(handler.name))
                if defined is not _UNREACHABLE:
                    start = defined | unbound
            d_h, m_h = self.block(handler.body, start, m_body | unbound)
            if d_h is not _UNREACHABLE:   # `except E as e` unbinds `e` at its end
                d_h = d_h - unbound
            after = _meet_flags(after, d_out, self.flags, d_h)
            d_out, m_out = _meet(d_out, d_h), m_out | m_h
        self.flags = after
        if node.finalbody:
            after = self.flags
            self.flags = dict(flags) if flags is not None else None
            _, m_final = self.block(node.finalbody, defined, m_out)
            self.flags = after
            d_final, _ = self.block(node.finalbody, d_out, m_out)
            return d_final, m_out | m_final
        return d_out, m_out

    stmt_TryStar = stmt_Try

    def stmt_Match(self, node, defined, maybe):
        self.mark_reads(node.subject, defined)
        d_out, m_out = defined, maybe  # no case may match
        flags = after = self.flags
        for case in node.cases:
            self.flags = dict(flags) if flags is not None else None
            bound = pattern_captures(case.pattern)
            start = defined | bound if defined is not _UNREACHABLE else defined
            if case.guard is not None:
                self.mark_reads(case.guard, start)
            d_c, m_c = self.block(case.body, start, maybe | bound)
            after = _meet_flags(after, d_out, self.flags, d_c)
            d_out, m_out = _meet(d_out, d_c), m_out | m_c
        self.flags = after
        return d_out, m_out


def _flag_names(fn, nodes) -> frozenset:
    """Names ``fn`` only ever assigns ``True`` or ``False`` (single assignments in its
    own scope), that it does not declare ``global``/``nonlocal`` and that no nested
    function or lambda mentions. ``nodes``: ``list(walk(fn))``."""
    if not any(sub.__class__ is gast.Constant and sub.value.__class__ is bool
               for sub in nodes):
        return frozenset()    # no `flag = True` or `flag = False` anywhere
    stores, constants, others = Counter(), Counter(), set()
    for sub in walk_same_scope(fn.body):
        if isinstance(sub, (gast.Global, gast.Nonlocal)):
            others.update(sub.names)
        elif isinstance(sub, gast.Name) and not isinstance(sub.ctx, gast.Load):
            stores[sub.id] += 1
        elif isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            others.add(sub.name)
        elif isinstance(sub, (gast.Import, gast.ImportFrom)):
            others.update((a.asname or a.name).split(".")[0] for a in sub.names)
        if (isinstance(sub, gast.Assign) and len(sub.targets) == 1
                and isinstance(sub.targets[0], gast.Name)
                and isinstance(sub.value, gast.Constant) and isinstance(sub.value.value, bool)):
            constants[sub.targets[0].id] += 1
    if not constants:
        return frozenset()
    operands = set()   # `ag__.and_(lambda: ag__.not_(did_break), ...)` runs on the spot
    for sub in nodes:
        if annos.runtime_operator(sub) in IMMEDIATE_OPERATORS:
            operands |= {id(a) for a in sub.args if isinstance(a, gast.Lambda)}
    for sub in nodes:
        if sub is not fn and id(sub) not in operands and isinstance(
                sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            others |= {n.id for n in walk(sub) if isinstance(n, gast.Name)}
    return frozenset(n for n, k in constants.items() if stores[n] == k) - others


def _negation(expr):
    """``x`` of ``not x`` or ``ag__.not_(x)``, else None."""
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.Not):
        return expr.operand
    if (annos.runtime_operator(expr) == "not_" and len(expr.args) == 1
            and not expr.keywords):
        return expr.args[0]
    return None


def _operands(expr):
    """``(operands, is_and)`` of ``a and b`` or ``ag__.and_(lambda: a, lambda: b)``."""
    if isinstance(expr, gast.BoolOp):
        return expr.values, isinstance(expr.op, gast.And)
    operator = annos.runtime_operator(expr)
    if operator in ("and_", "or_") and all(isinstance(a, gast.Lambda) for a in expr.args):
        return [a.body for a in expr.args], operator == "and_"
    return None, None


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


def _statement_facts(node, locals_):
    """Of a simple statement, from one walk of it: its reads of ``locals_`` (as
    ``_reads_here`` finds them), and the names it binds (its targets', its ``:=``s')."""
    loads, named = _scope_loads(node)
    return [sub for sub in loads if sub.id in locals_], frozenset(_target_names(node) | named)


def _scope_loads(node):
    """The name loads evaluated in this scope (comprehension variables excluded), and
    the names its ``:=``s bind."""
    comprehension_vars, loads, named = set(), [], set()
    for sub in walk_same_scope(node):
        if isinstance(sub, gast.Name):
            if isinstance(sub.ctx, gast.Load):
                loads.append(sub)
        elif isinstance(sub, gast.comprehension):
            comprehension_vars |= bound_names(sub.target)
        elif isinstance(sub, gast.NamedExpr):
            named |= bound_names(sub.target)
    return [sub for sub in loads if sub.id not in comprehension_vars], named


def _target_names(node) -> set:
    """The names the simple statement ``node`` binds but through ``:=``."""
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
    return names


def _reads_here(node):
    """Name loads evaluated in this scope (comprehension variables excluded)."""
    return _scope_loads(node)[0]
