"""``if``, ``while`` and ``for`` statements into runtime calls over functions.

Each block becomes a function that takes the variables the statement carries (its
*state*: the names it modifies that are read later or in the next iteration) and
returns their new values. Before:

    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1

After:

    def loop_test(n, steps):
        return n != 1

    def loop_body(n, steps):
        def if_true(n):
            n = n // 2
            return n

        def if_false(n):
            n = 3 * n + 1
            return n
        n = ag__.if_stmt(n % 2 == 0, if_true, if_false, (n,))
        steps += 1
        return (n, steps)
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps),
                               literal_steps={'steps': (1, 0)}, compares=('n', 1))

``for x in xs`` becomes ``ag__.for_stmt(xs, loop_body, state)`` with the item as
the body's first parameter (the builtins converter has made ``range(...)`` there
``ag__.range_(...)``, which accepts traced bounds). A variable that may be unbound
before the statement enters it as ``ag__.Undefined('name')``, and reads that may
see it unbound are guarded with ``ag__.ld(name)``. The options of a loop's
``set_loop_options`` directive (taken onto the loop by the directives converter)
become keywords of its call. Where the block is inside a ``try`` with ``except``
clauses, assigns a ``global``/``nonlocal`` variable, or (a loop) deletes a variable
it carries, the call says so (``in_try=3``, ``assigns_global='counter'``,
``deletes='y'``): a staged one refuses, at the user's line
(``analysis/stageability.py``). A ``for`` over a range that depends on the index of
an enclosing ``for`` over a range (``for j in range(i + 1, n)`` inside ``for i in
range(n)``) also passes ``bound=ag__.loop_bound(lambda i: ag__.range_(i + 1, n), i)``:
staged, its largest trip count is derived from the enclosing loop's range.

A name that closures share with the function (a lambda or nested ``def`` reads
it, or assigns it through ``nonlocal``: ``analysis/closures.py``) is not a
parameter: the helpers declare it ``nonlocal`` and assign the one cell, and the
call lists it as ``cells=lambda: (x,)`` (``runtime/carried_state.py``). Before:

    read = lambda: x
    for i in range(n):
        x = i * 10
        total += read()

After:

    read = lambda: x

    def loop_body(i, total):
        nonlocal x
        x = i * 10
        total += read()
        return total
    total = ag__.for_stmt(range(n), loop_body, (total,), cells=lambda: (x,))

A cell the block assigns that nothing reads after it is also listed as
``scoped=('i',)``: it need not have a value before a staged loop. A ``while``
whose condition assigns (``while (n := n - 1) > 0``) computes the condition
before the loop and at the end of the body, as statements.

An ``if`` does not carry a name its branches assign and read that nothing reads
after it (their types may differ): a branch that assigns it takes its value from
before the ``if`` as a keyword-only default, ``def if_false(retval, *, t=t)``.

Here are the templates and the glue. What a block carries is decided in
``analysis/function_scope.py``, once per block (``_Block``); the declarations
its helpers need are made by ``helper_scopes.py``; conditions that assign are
lowered first by ``assigning_tests.py``; derived bounds come from
``loop_bounds.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from autograph import templates
from autograph.analysis import (
    annos,
    annotate_definedness,
    annotate_liveness,
    bound_names,
    items_assigned,
    modified_names,
)
from autograph.analysis.compared_test import compared_operands
from autograph.analysis.function_scope import FunctionScope, name_order
from autograph.analysis.literal_steps import for_steps, while_steps
from autograph.analysis.sharing import Sharing, end_position, may_change
from autograph.analysis.stageability import annotate_enclosing_try
from autograph.converters.assigning_tests import lower_assigning_tests
from autograph.converters.base import Transformer
from autograph.converters.helper_scopes import (
    declare_in_helpers,
    keep_cells_local,
    take_as_defaults,
)
from autograph.converters.jumps import reject_leftover_jumps
from autograph.converters.loop_bounds import counter_bound, derived_bound, range_args
from autograph.walk import walk_list

NODE_TYPES = (gast.If, gast.While, gast.For)
_TRIES = (gast.Try, gast.TryStar)
_SHOWING_LOCALS = frozenset(("locals", "vars", "dir"))
_DECLARING = frozenset((gast.Global, gast.Nonlocal, gast.FunctionDef, gast.AsyncFunctionDef,
                        gast.Lambda, gast.GeneratorExp, gast.ClassDef))


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``if``/``while``/``for`` in ``node`` (nested functions included)."""
    return rewrite(node, ctx, walk_list(node))


def needed(nodes, ctx=None) -> bool:
    """Always (``NODE_TYPES`` decides): ``rewrite`` takes the transpiler's walk."""
    return True


def rewrite(node: gast.FunctionDef, ctx, nodes) -> gast.FunctionDef:
    """``transform``, given ``nodes``: ``list(walk(node))``."""
    reject_leftover_jumps(node, ctx)
    if any(sub.__class__ is gast.NamedExpr for sub in nodes):
        lower_assigning_tests(node, ctx)   # (a whole pass: only where it can act)
        nodes = walk_list(node)
    annotate_liveness(node, nodes)
    locals_of = {}     # FunctionDef id -> its local names (the tree is not changed yet)
    # (where no converter has changed the tree since it was parsed, the transpiler's
    # walk is the very list ``_context`` took, and its local names still hold)
    parsed_nodes, parsed_locals = ctx.parsed_locals
    annotate_definedness(node, nodes, locals_of,
                         parsed_locals if nodes is parsed_nodes else None)
    if any(sub.__class__ in _TRIES and annos.get(sub, annos.CATCHES_VALUE_ERRORS, False)
           for sub in nodes):
        annotate_enclosing_try(node)   # (else every block's IN_TRY is None, the default)
    order, has_delete = name_order(node)
    converter = _ControlFlow(ctx, order, has_delete, locals_of)
    # No declaration, and no nested scope that could share a cell (whose helpers
    # would declare it nonlocal): no block writes a name outside its function.
    converter.declarations = any(sub.__class__ in _DECLARING for sub in nodes
                                 if sub is not node)
    # (only locals_calls makes the runtime's locals_ and dir_, of these builtins)
    converter.may_show_locals = not ctx.user_names.isdisjoint(_SHOWING_LOCALS)
    # Where nothing changes an object in place, no block has a shared name to find.
    converter.may_change = may_change(nodes, ctx.runtime_name)
    # Only a read that may find its name unbound (``visit_Name``) is rewritten
    # inside an expression: where definedness found none, the statements suffice.
    converter.statements_only = not any(
        annos.get(sub, annos.READ_UNBOUND, None) for sub in nodes
        if sub.__class__ is gast.FunctionDef)
    return converter.visit(node)


@dataclass
class _Block:
    """What one ``if``/``while``/``for`` carries, computed once before its helpers
    are made: the ``state`` names (parameters and results of the helpers), the
    tuple of their values before it (``state_in``), the ``keywords`` of the
    runtime call (obstacles, cells, mutated objects), and, of an ``if``, the
    names passed into its branches only (``dead``: nothing reads them after it)."""

    state: list
    state_in: gast.Tuple
    keywords: list
    cells: list
    dead: frozenset = frozenset()


class _ControlFlow(Transformer):
    def __init__(self, ctx, order, has_delete, locals_of=None):
        self.ctx = ctx
        # FunctionDef id -> its local names, found before the conversion: a
        # function's body is not yet converted when visit_FunctionDef reaches it.
        self.locals_of = locals_of or {}
        self.order = order
        self.has_delete = has_delete
        self.ag = ctx.runtime_name
        self.scopes = []              # per function: its FunctionScope
        self.range_indices = [[]]     # per function: targets of the enclosing range loops
        self.loops = [[]]             # per function: the enclosing loops
        self.declarations = True      # see rewrite
        self.may_show_locals = True   # see rewrite
        self.may_change = True        # see rewrite

    # -- statements --------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        scope = FunctionScope(node, self.scopes[-1] if self.scopes else None,
                              nested_scopes=self.declarations,
                              locals_=self.locals_of.get(id(node)),
                              may_show_locals=self.may_show_locals)
        scope.sharing = Sharing(node, self.ag) if self.may_change else None
        self.scopes.append(scope)
        self.range_indices.append([])
        self.loops.append([])
        try:
            node = self.generic_visit(node)
        finally:
            self.scopes.pop()
            self.range_indices.pop()
            self.loops.pop()
        keep_cells_local(node, scope.cells & scope.locals)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and annos.get(node, annos.MAYBE_UNDEFINED):
            call = templates.replace_expr("ag__.ld(var)", ag__=self.ag, var=node.id)
            templates.set_location(call, node)
            return call
        return node

    def visit_If(self, node):
        if annos.runtime_operator(node.test) in ("raise_if", "raise_unless"):
            return self.generic_visit(node)   # Python decides it (converters/raises.py)
        stmts = node.body + node.orelse
        block = self._block(node, stmts, modified_names(node.body) | modified_names(node.orelse),
                            annos.get(node, annos.LIVE_OUT))
        node = self.generic_visit(node)
        new = templates.replace(
            """
            def if_true(state):
                body
                return state
            def if_false(state):
                orelse
                return state
            state = ag__.if_stmt(test, if_true, if_false, state_in)
            """,
            ag__=self.ag, if_true=self.ctx.fresh_name("if_true"),
            if_false=self.ctx.fresh_name("if_false"), state=block.state, body=node.body,
            orelse=node.orelse, test=node.test, state_in=block.state_in,
            moved=("test", "state_in"))
        defined = block.dead & annos.get(node, annos.DEFINED_IN, frozenset())
        for helper in new[:2] if defined else ():
            take_as_defaults(helper, self._sorted(defined & modified_names(helper.body)))
        return self._finish(new, node, block.keywords)

    def visit_While(self, node):
        block = self._block(node, node.body, modified_names(node.body),
                            annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD),
                            scanned=[node.test, *node.body])
        steps = _steps_keyword(while_steps(node, block.state))
        compares = _compares_keyword(compared_operands(node.test))
        self.loops[-1].append(node)
        node = self.generic_visit(node)
        self.loops[-1].pop()
        new = templates.replace(
            """
            def loop_test(state):
                return test
            def loop_body(state):
                body
                return state
            state = ag__.while_stmt(loop_test, loop_body, state_in)
            """,
            ag__=self.ag, loop_test=self.ctx.fresh_name("loop_test"),
            loop_body=self.ctx.fresh_name("loop_body"), state=block.state, test=node.test,
            body=node.body, state_in=block.state_in, moved=("test", "state_in"))
        options = list(annos.get(node, annos.LOOP_OPTIONS, ()))
        if isinstance(node.test, gast.BoolOp) and not any(
                k.arg == "maximum_iterations" for k in options):
            scope = self.scopes[-1]
            options += counter_bound(
                node, lambda name: name in scope.locals and name not in scope.cells,
                modified_names(node.body), self.ag)
        return (self._finish(new, node, options + steps + compares + block.keywords)
                + node.orelse)

    def visit_For(self, node):
        block = self._block(node, [node.target, *node.body],
                            modified_names(node.body) | bound_names(node.target),
                            annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD))
        options = [*annos.get(node, annos.LOOP_OPTIONS, ()),
                   *derived_bound(node, self.range_indices[-1], self.ag),
                   *_steps_keyword(for_steps(node, block.state))]
        index = node.target.id if (isinstance(node.target, gast.Name)
                                   and range_args(node.iter) is not None) else None
        self.range_indices[-1].append(index)
        self.loops[-1].append(node)
        node = self.generic_visit(node)
        self.loops[-1].pop()
        self.range_indices[-1].pop()
        if (isinstance(node.target, gast.Name) and node.target.id not in block.state
                and node.target.id not in block.cells):
            item, unpack = node.target.id, []
        else:
            item = self.ctx.fresh_name("itr")
            unpack = [gast.Assign(targets=[node.target], value=templates.name(item),
                                  type_comment=None)]
        new = templates.replace(
            """
            def loop_body(item, state):
                unpack
                body
                return state
            state = ag__.for_stmt(iterable, loop_body, state_in)
            """,
            ag__=self.ag, loop_body=self.ctx.fresh_name("loop_body"), item=item,
            unpack=unpack, state=block.state, body=node.body,
            iterable=node.iter, state_in=block.state_in, moved=("iterable", "state_in"))
        extra_test = annos.get(node, annos.EXTRA_TEST)
        if extra_test is not None:
            test = templates.replace(
                """
                def loop_test(state):
                    return extra_test
                """,
                loop_test=self.ctx.fresh_name("loop_test"), state=block.state,
                extra_test=extra_test)
            options.append(gast.keyword(arg="extra_test", value=templates.name(test[0].name)))
            new = test + new
        return self._finish(new, node, options + block.keywords) + node.orelse

    def _finish(self, new, node, keywords):
        """``new`` (helpers, then the runtime call) with ``keywords`` added to the
        call, located at ``node``, its helpers declaring what they must."""
        new[-1].value.keywords.extend(keywords)
        templates.set_location(new, node)
        declare_in_helpers(new, self.scopes[-1], self.ag, self.has_delete)
        return new

    # -- what a block carries ----------------------------------------------------------

    def _block(self, node, stmts, modified, live_after, scanned=None):
        """The ``_Block`` of ``node`` whose statements ``stmts`` (for a ``for``, its
        target first) assign ``modified``; ``live_after``: the names read after it
        (or, for a loop, at the next iteration); ``scanned``: where a nested
        function the block calls may be (default ``stmts``)."""
        scope = self.scopes[-1]
        objects = scope.objects_changed(stmts)
        if isinstance(node, gast.If):
            needed = annos.get(node, annos.LIVE_IN_BODY) | annos.get(node, annos.LIVE_IN_ORELSE)
            live = live_after | needed
            needed = needed | objects
            dead = frozenset(scope.passed_in_only(node, modified - objects, live_after))
        else:
            live, needed, dead = live_after, None, frozenset()
        state = self._sorted(scope.carried((modified & live | objects) - dead))
        cells, scoped = scope.cells_assigned(node, scanned or stmts, modified, live_after)
        cells, scoped = self._sorted(cells), self._sorted(scoped)
        mutated = self._sorted(objects & (set(state) | set(cells)))
        # A variable that, after the block, holds the old object or a new one
        # depending on a traced condition (runtime/trackers.py ContainerParameter).
        outer = self.loops[-1][0] if self.loops[-1] else node
        shared = [] if scope.sharing is None else scope.sharing.shared(
            state, (outer.lineno, outer.col_offset), end_position(outer))
        # Of those, the ones whose items the block assigns: a NumPy array among them
        # cannot take traced values in place (runtime/stageable.py).
        item_writes = self._sorted(set(shared) & items_assigned(stmts)) if shared else ()
        # (a loop body may delete what it carries; without a ``del``, none to find)
        carried = state if self.has_delete and not isinstance(node, gast.If) else None
        facts = scope.obstacles(node, node.body if isinstance(node, gast.While) else stmts,
                                state, cells, carried, self.declarations)
        obstacles = [gast.keyword(arg=key, value=gast.Constant(value=value, kind=None))
                     for key, value in facts.items()]
        return _Block(state, self._state_inputs(node, state, needed),
                      obstacles + self._cell_keywords(cells, scoped, mutated, shared,
                                                      item_writes),
                      cells, dead)

    def _sorted(self, names):
        return sorted(names, key=lambda n: (self.order.get(n, len(self.order)), n))


    @staticmethod
    def _cell_keywords(cells, scoped, mutated=(), shared=(), item_writes=()):
        keywords = []
        if cells:
            keywords.append(gast.keyword(arg="cells", value=templates.replace_expr(
                "lambda: (cells,)", cells=cells)))
        for key, names in (("scoped", scoped), ("mutated", mutated), ("shared", shared),
                           ("item_writes", item_writes)):
            if names:
                keywords.append(gast.keyword(arg=key, value=gast.Tuple(
                    elts=[gast.Constant(value=n, kind=None) for n in names],
                    ctx=gast.Load())))
        return keywords

    def _state_inputs(self, node, state, needed=None):
        """The tuple of the state variables' current values, as an expression.

        A variable outside ``needed`` (the names whose incoming value the block may
        read) enters as ``Undefined``: the enclosing generated function may not hold
        it, since Python would never read it there."""
        defined = annos.get(node, annos.DEFINED_IN, frozenset())
        maybe = annos.get(node, annos.MAYBE_DEFINED_IN, frozenset())
        elts = []
        for name in state:
            if (needed is not None and name not in needed) or (
                    name not in defined and name not in maybe):
                template = ("ag__.Unset(var_name)" if self.scopes[-1].may_stand_in(node, name)
                            else "ag__.Undefined(var_name)")
                elts.append(templates.replace_expr(
                    template, ag__=self.ag, var_name=gast.Constant(value=name, kind=None)))
            elif name in defined:
                elts.append(templates.name(name))
            else:
                elts.append(templates.replace_expr(
                    "ag__.local_or_undefined(locals(), var_name)", ag__=self.ag,
                    var_name=gast.Constant(value=name, kind=None)))
        return gast.Tuple(elts=elts, ctx=gast.Load())


def _compares_keyword(operands) -> list:
    """``compares=('n', 1)``: the operands of a ``while`` test that is one comparison
    of names and number literals (``analysis/compared_test.py``)."""
    if operands is None:
        return []
    return [gast.keyword(arg="compares", value=gast.Tuple(
        elts=[gast.Constant(value=v, kind=None) for v in operands], ctx=gast.Load()))]


def _steps_keyword(steps) -> list:
    """``literal_steps={"count": 1}``: the loop variables only stepped by literals
    (``analysis/literal_steps.py``), for ``runtime/int_overflow.py``."""
    if not steps:
        return []
    def constant(value):
        if isinstance(value, tuple):
            return gast.Tuple(elts=[constant(v) for v in value], ctx=gast.Load())
        return gast.Constant(value=value, kind=None)
    return [gast.keyword(arg="literal_steps", value=gast.Dict(
        keys=[constant(name) for name in steps], values=[constant(v) for v in steps.values()]))]
