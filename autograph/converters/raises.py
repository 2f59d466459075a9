"""Input checks (``if bad: raise E(msg)``) into checks a traced condition can stage.

An ``if`` one of whose branches ends in a ``raise`` (and the other does not) keeps
its Python form; its condition goes through ``ag__.raise_if`` (the ``if`` branch
raises) or ``ag__.raise_unless`` (the ``else`` branch raises), which also gets the
raising branch as a function of the local values it reads. Before:

    if x < 0:
        raise ValueError(f"x must be non-negative, got {x}")
    y = math.sqrt(x)

After:

    def raise_error(x):
        raise ValueError(ag__.format_('x must be non-negative, got {}', x))
    if ag__.raise_if(x < 0, raise_error, lambda: (x,)):
        raise ValueError(f'x must be non-negative, got {x}')
    y = math.sqrt(x)

An ``elif`` chain is a nest of ``if``s: each link is looked at alone (``if a:
raise A`` / ``elif b: raise B`` / ``else: ...`` checks ``a``, then ``b``).
With a Python condition ``raise_if`` returns it and the ``if`` runs as written.
With a traced one it stages a run-time check (as a traced ``assert`` is, under the
same switches: ``asserts=``, ``staged_effects``) whose failure calls
``raise_error`` with the values the program holds then, so the user's own
exception, with Python's message, is what ``to_graph`` raises; and it returns the
Python value that sends the ``if`` down the branch that does not raise, so the
rest of the function is staged as if the check passed.

Statements before the ``raise`` in its branch move into ``raise_error`` (they run
only when the check fails, as in Python); a branch that returns, breaks,
continues, yields or declares ``global``/``nonlocal`` is left as it is, and so is
one whose two branches both raise. ``raise`` alone (re-raising) is left as well.
Inside a ``try`` with ``except`` clauses the check asks, while tracing, whether a
handler around it may catch the error (``runtime/try_lines.py``, from the
handlers' names): then it raises while tracing, and the ``except`` refuses it at
its line (a run-time check would raise from the compiled call, past the
``except``); else it is a run-time check as anywhere else.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import local_names, modified_names, read_names, walk_same_scope
from autograph.converters import formatting
from autograph.converters.base import Transformer
from autograph.walk import child_nodes, walk

NODE_TYPES = (gast.Raise,)

_JUMPS = (gast.Return, gast.Break, gast.Continue, gast.Yield, gast.YieldFrom, gast.Await,
          gast.Global, gast.Nonlocal)
_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Route the condition of every ``if`` with one raising branch in ``node`` (nested
    functions included) through ``ag__.raise_if``/``ag__.raise_unless``."""
    return _Raises(ctx).visit(node)


class _Raises(Transformer):
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx
        self.scopes: list[frozenset | None] = []   # locals per enclosing function

    def _visit_function(self, node):
        self.scopes.append(frozenset(local_names(node)))
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    def visit_ClassDef(self, node):
        self.scopes.append(None)    # a class body: its names are not locals
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    def visit_If(self, node):
        node = self.generic_visit(node)
        if not self.scopes or self.scopes[-1] is None:
            return node
        body_raises, orelse_raises = _raises(node.body), _raises(node.orelse)
        if body_raises == orelse_raises:
            return node
        branch = node.body if body_raises else node.orelse
        if not _movable(branch[:-1]):
            return node
        params = self._params(branch)
        raiser = self.ctx.fresh_name("raise_error")
        body = templates.copy_tree(branch)
        _defer_message(body[-1], self.ctx)
        definition = templates.replace("def raiser(params):\n    body", raiser=raiser,
                                       params=params, body=body)
        call = "ag__.raise_if" if body_raises else "ag__.raise_unless"
        if params:
            test = templates.replace_expr(f"{call}(test, raiser, lambda: (params,))",
                                          ag__=self.ctx.runtime_name, test=node.test,
                                          raiser=raiser, params=params)
        else:
            test = templates.replace_expr(f"{call}(test, raiser)", ag__=self.ctx.runtime_name,
                                          test=node.test, raiser=raiser)
        if len(branch) > 1:   # statements before the raise: run only when it fails
            test.keywords.append(gast.keyword(arg="effects",
                                              value=gast.Constant(value=True, kind=None)))
        templates.set_location(definition, branch[-1])
        templates.set_location(test, node.test)
        node.test = test
        return definition + [node]

    def _params(self, stmts):
        """The names of the enclosing functions' locals that ``stmts`` read before
        binding them, in the order they first appear."""
        visible = frozenset().union(*(s for s in self.scopes if s is not None))
        bound, wanted = set(), set()
        for stmt in stmts:
            wanted |= ((read_names(stmt) | _augmented(stmt)) - bound) & visible
            bound |= modified_names(stmt)
        order = [n.id for stmt in stmts for n in walk(stmt) if isinstance(n, gast.Name)]
        return sorted(wanted, key=order.index)


def _augmented(stmt) -> set[str]:
    """The names ``x += ...`` in ``stmt`` reads (its target: ``read_names`` counts a
    target as a store), which the raising function must be given."""
    return {n.target.id for n in walk_same_scope(stmt)
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def _raises(stmts) -> bool:
    """Whether ``stmts`` end in ``raise <exception>`` (not a bare re-raise)."""
    return bool(stmts) and isinstance(stmts[-1], gast.Raise) and stmts[-1].exc is not None


def _movable(stmts) -> bool:
    """Whether ``stmts`` may run in a function of their own: nothing in them jumps
    out of the branch, suspends, or declares a scope (nested definitions aside)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, _JUMPS):
            return False
        if isinstance(node, _NESTED):
            continue
        if isinstance(node, (gast.For, gast.While, gast.AsyncFor)):
            # A break or continue of a loop of the branch's own stays inside.
            stack.extend(n for n in walk(node)
                         if isinstance(n, (gast.Return, gast.Yield, gast.YieldFrom,
                                           gast.Await, gast.Global, gast.Nonlocal)))
            continue
        stack.extend(child_nodes(node))
    return True


def _defer_message(raise_node, ctx):
    """Defer the formatting of the raised exception's arguments (an f-string,
    ``.format`` or ``%``), so a check made under ``checkify`` can carry the message."""
    exc = raise_node.exc
    if isinstance(exc, gast.Call):
        exc.args = [formatting.deferred(arg, ctx) for arg in exc.args]
