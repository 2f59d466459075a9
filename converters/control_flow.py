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
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps))

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
call lists it as ``cells=lambda: (x,)`` (``runtime/cells.py``). Before:

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
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import (
    SCOPES,
    annos,
    annotate_definedness,
    annotate_liveness,
    bound_names,
    local_names,
    modified_names,
    mutated_objects,
    stays_python,
    walk_same_scope,
)
from autograph.walk import child_nodes, walk
from autograph.analysis.closures import closure_uses
from autograph.analysis.stageability import annotate_enclosing_try, deleted_name, outer_write
from autograph.converters.base import Transformer
from autograph.errors import ConversionError

NODE_TYPES = (gast.If, gast.While, gast.For)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``if``/``while``/``for`` in ``node`` (nested functions included)."""
    _reject_leftover_jumps(node, ctx)
    if any(isinstance(sub, gast.NamedExpr) for sub in walk(node)):
        _AssigningTests(ctx).visit(node)      # (a whole pass: only where it can act)
    annotate_liveness(node, ctx.runtime_name)
    annotate_definedness(node)
    annotate_enclosing_try(node)
    order, has_delete = _name_order(node)
    return _ControlFlow(ctx, order, has_delete).visit(node)


_CONSTRUCTS = {gast.If: "if", gast.While: "while", gast.For: "for"}
# What a range whose bound is derived may be made of (computing it has no effect).
_PURE_NODES = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute,
               gast.Subscript, gast.Tuple, gast.Load, gast.operator, gast.unaryop,
               gast.expr_context)


def _reject_leftover_jumps(fn, ctx):
    """The jump converters ran before: a ``return`` left inside a block, or a
    ``break``/``continue`` left inside a loop, is one they could not handle (a
    converted block runs to its end). Nested generators and coroutines stay Python."""
    stack = [(child, None, None) for child in child_nodes(fn)]
    while stack:
        node, block, loop = stack.pop()
        if stays_python(node):
            continue
        if isinstance(node, SCOPES):
            stack.extend((child, None, None) for child in child_nodes(node))
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
        stack.extend((child, block, loop) for child in child_nodes(node))


def _name_order(fn):
    """Each name's rank by first appearance (parameters first), so state tuples read
    in the order the user introduced the variables; and whether ``fn`` has a ``del``."""
    order = {}
    has_delete = False
    stack = list(reversed(fn.body)) + [fn.args]
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Name):
            if node.id not in order:
                order[node.id] = len(order)
        elif isinstance(node, gast.Delete) or (
                isinstance(node, gast.ExceptHandler) and node.name is not None):
            has_delete = True
        stack.extend(reversed(list(child_nodes(node))))
    return order, has_delete


# -- conditions that assign ----------------------------------------------------------


def _assigns(expr, deferred_only=False) -> bool:
    """Whether evaluating ``expr`` assigns a variable of the enclosing function (an
    assignment expression outside nested functions and lambdas, the operand
    lambdas of ``ag__.and_``/``or_`` included). With ``deferred_only``, only one in
    an operand that becomes a lambda: of ``and``/``or``, a conditional expression,
    or a chained comparison."""
    stack = [(expr, not deferred_only)]
    while stack:
        node, counts = stack.pop()
        if isinstance(node, gast.NamedExpr) and counts:
            return True
        if isinstance(node, gast.Lambda):
            if getattr(node, "_ag_operand", False):
                stack.append((node.body, True))
            continue
        if isinstance(node, SCOPES):
            continue
        if _runtime_operator(node) in ("and_", "or_"):
            for arg in node.args:
                if isinstance(arg, gast.Lambda):
                    arg._ag_operand = True
        inner = counts or isinstance(node, (gast.BoolOp, gast.IfExp)) or (
            isinstance(node, gast.Compare) and len(node.ops) > 1)
        stack.extend((child, inner) for child in child_nodes(node))
    return False


_RUNTIME = "ag__"


def _runtime_operator(node):
    """``'and_'`` for ``ag__.and_(...)`` (any runtime name), else None."""
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and isinstance(node.func.value, gast.Name)
            and node.func.value.id.startswith(_RUNTIME)):
        return node.func.attr
    return None


class _AssigningTests(Transformer):
    """An ``if`` or ``while`` whose condition assigns a variable (``while (n := n - 1)
    > 0``, ``if x and (y := f(x)):``) computes the condition as statements into a
    variable of its own first, so the assignment happens in the function, not in
    the helper that a condition becomes (``loop_test``) or in an operand's lambda.
    ``a and b`` becomes ``cond = a`` then ``if cond: cond = b``, keeping the order
    and the short circuit; a ``while`` computes it before the loop and again at
    the end of its body. Before:

        while (line := read()) != '':
            out.append(line)

    After:

        loop_cond = ag__.bool_((line := read()) != '')
        while loop_cond:
            out.append(line)
            loop_cond = ag__.bool_((line := read()) != '')
    """

    def __init__(self, ctx):
        self.ctx = ctx

    def visit_If(self, node):
        node = self.generic_visit(node)
        if not _assigns(node.test, deferred_only=True):
            return node
        name = self.ctx.fresh_name("cond")
        setup = self._lowered(node.test, name, node)
        node.test = templates.name(name)
        return setup + [node]

    def visit_While(self, node):
        node = self.generic_visit(node)
        if not _assigns(node.test):
            return node
        name = self.ctx.fresh_name("loop_cond")
        before = self._lowered(node.test, name, node)
        again = self._lowered(templates.copy_tree(node.test), name, node)
        node.test = templates.name(name)
        node.body = node.body + again
        return before + [node]

    def _lowered(self, expr, name, origin):
        """Statements leaving the value of ``expr`` in ``name``."""
        operands, is_and = _short_circuit(expr)
        if operands is None:
            # The truth of each operand is what the condition needs (one type for a
            # staged `if` to carry); `bool_` asks it once, as the condition would.
            value = templates.replace_expr("ag__.bool_(expr)", ag__=self.ctx.runtime_name,
                                           expr=expr)
            stmts = [gast.Assign(targets=[templates.name(name, gast.Store())], value=value,
                                 type_comment=None)]
        else:
            stmts = self._lowered(operands[0], name, origin)
            rest = operands[1:]
            test = (templates.name(name) if is_and else
                    gast.UnaryOp(op=gast.Not(), operand=templates.name(name)))
            inner = self._lowered(
                gast.BoolOp(op=gast.And() if is_and else gast.Or(), values=rest)
                if len(rest) > 1 else rest[0], name, origin)
            stmts.append(gast.If(test=test, body=inner, orelse=[]))
        templates.set_location(stmts, origin)
        return stmts


def _short_circuit(expr):
    """``(operands, is_and)`` of ``a and b``/``a or b`` (a ``BoolOp``, or the
    ``ag__.and_(lambda: a, lambda: b)`` a jump converter made), else ``(None, None)``."""
    if isinstance(expr, gast.BoolOp):
        return list(expr.values), isinstance(expr.op, gast.And)
    operator = _runtime_operator(expr)
    if operator in ("and_", "or_") and all(isinstance(a, gast.Lambda) for a in expr.args):
        return [a.body for a in expr.args], operator == "and_"
    return None, None


# -- the converter -------------------------------------------------------------------


class _Scope:
    """What the converter knows about one function of the user's: the names it
    declares ``global``/``nonlocal`` (name -> declaration), its local names, the
    names it keeps in cells (``cells``; ``owned``: those bound in a function being
    converted, which staging may carry), the names nested functions assign through
    ``nonlocal`` that its code can see (``written``), and its ``closures``."""

    def __init__(self, node, parent, runtime_name):
        globals_, nonlocals = {}, {}
        for sub in walk_same_scope(node.body):
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                target = nonlocals if isinstance(sub, gast.Nonlocal) else globals_
                target.update((n, sub) for n in sub.names)
        self.globals_, self.nonlocals = globals_, nonlocals
        self.locals = frozenset(local_names(node))
        args = node.args
        self.params = frozenset(a.id for a in [*args.posonlyargs, *args.args,
                                               *args.kwonlyargs, args.vararg, args.kwarg]
                                if a is not None)
        self.parent = parent
        self.closures = closure_uses(node, runtime_name)
        # Names a read may find unbound; locals() sees every name as it is.
        self.read_unbound = annos.get(node, annos.READ_UNBOUND, None)
        if any(isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute)
               and sub.func.attr in ("locals_", "dir_") for sub in walk_same_scope(node.body)):
            self.read_unbound = None
        shared = (self.closures.reads & self.locals) | self.closures.writes | set(nonlocals)
        self.cells = frozenset(shared - set(globals_))
        inherited = parent.written - self.locals if parent is not None else frozenset()
        self.written = frozenset((self.closures.writes | inherited) - set(globals_))

    def owns(self, name) -> bool:
        """Whether ``name`` here is bound in this function or one around it that is
        converted with it (so a staged block may write its cell)."""
        scope = self
        while scope is not None:
            if name in scope.locals:
                return True
            if name in scope.globals_:
                return False
            scope = scope.parent
        return False


class _ControlFlow(Transformer):
    def __init__(self, ctx, order, has_delete):
        self.ctx = ctx
        self.order = order
        self.has_delete = has_delete
        self.ag = ctx.runtime_name
        self.scopes = [None]          # per function: its _Scope
        self.range_indices = [[]]     # per function: targets of the enclosing range loops

    # -- helpers ---------------------------------------------------------------------

    def _sorted(self, names):
        return sorted(names, key=lambda n: (self.order.get(n, len(self.order)), n))

    def _state(self, names):
        """The names that travel as parameters: the function's own locals that are
        not kept in cells. (A ``global``/``nonlocal`` name is declared in the helpers
        instead, and a global or closure variable that is only mutated
        (``cache[k] = v``) stays the same object.)"""
        scope = self.scopes[-1]
        if scope is None:
            return self._sorted(names)
        return self._sorted(n for n in names if n in scope.locals and n not in scope.cells)

    def _cells(self, node, stmts, modified, live_after):
        """``(cells, scoped)``: the names kept in cells that the block ``stmts`` of
        ``node`` may assign (``modified``, or through a nested function it may call),
        and those of them nothing reads after the block (``live_after``: names live
        after it, or at the next iteration)."""
        scope = self.scopes[-1]
        if scope is None:
            return [], []
        names = modified & scope.cells
        if scope.written and _calls_user_code(stmts, self.ag):
            names |= scope.written
        names = {n for n in names if scope.owns(n)}
        if not names:
            return [], []
        inside = {id(sub) for sub in walk(node)}
        needed = live_after | scope.closures.reads_outside(inside) | (names - scope.locals)
        return self._sorted(names), self._sorted(names - needed)

    def _objects(self, stmts):
        """The local names whose objects ``stmts`` change in place and never rebind:
        bases of attribute and item assignments (``self.count[...] += 1``,
        ``obj.total = t``), and parameters assigned items (``stats[k] += v``, which
        the slices converter made ``stats = ag__.setitem(stats, k, v, op='+')``)."""
        scope = self.scopes[-1]
        if scope is None:
            return set()
        mutated, rebound = mutated_objects(stmts)
        setitems, _ = mutated_objects([s for s in walk_same_scope(stmts)
                                       if isinstance(s, gast.Assign) and _is_setitem(s)])
        others = mutated - setitems | {n for n in setitems & mutated if n in scope.params}
        return {n for n in others - rebound if n in scope.locals}

    @staticmethod
    def _cell_keywords(cells, scoped, mutated=()):
        keywords = []
        if cells:
            keywords.append(gast.keyword(arg="cells", value=templates.replace_expr(
                "lambda: (cells,)", cells=cells)))
        for key, names in (("scoped", scoped), ("mutated", mutated)):
            if names:
                keywords.append(gast.keyword(arg=key, value=gast.Tuple(
                    elts=[gast.Constant(value=n, kind=None) for n in names],
                    ctx=gast.Load())))
        return keywords

    def _declare(self, new):
        """Repeat the function's ``global``/``nonlocal`` declarations in the generated
        helpers in ``new`` that assign those names, and declare ``nonlocal`` the names
        kept in cells that they assign, so they keep their scope; a helper that
        ``del``s a state variable returns it as ``Undefined`` when it is unbound."""
        scope = self.scopes[-1]
        globals_ = scope.globals_ if scope is not None else {}
        nonlocals = scope.nonlocals if scope is not None else {}
        cells = scope.cells if scope is not None else frozenset()
        for helper in new:
            if not isinstance(helper, gast.FunctionDef):
                continue
            self._return_deleted(helper)
            modified = modified_names(helper.body)
            params = {a.id for a in helper.args.args}
            for kind, names in ((gast.Global, globals_), (gast.Nonlocal, nonlocals)):
                used = sorted(n for n in names if n in modified)
                if kind is gast.Nonlocal:
                    used = sorted(set(used) | {n for n in cells & modified
                                               if n not in params and n not in globals_})
                if used:
                    declaration = kind(names=used)
                    templates.set_location(declaration, names.get(used[0], helper))
                    helper.body.insert(0, declaration)

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
                template = ("ag__.Unset(var_name)" if self._never_read_unbound(node, name)
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

    def _never_read_unbound(self, node, name) -> bool:
        """Whether ``name``, unbound before ``node``, enters it as ``ag__.Unset``: no
        code reads it unbound, and the block may leave it so (a loop; an ``if`` not
        binding it on both branches), so a staged region may carry a placeholder."""
        scope = self.scopes[-1]
        return not (scope is None or scope.read_unbound is None
                    or name in scope.read_unbound or name in scope.cells
                    or name in annos.get(node, annos.DEFINED_OUT, frozenset()))

    def _return_deleted(self, helper):
        if not self.has_delete:
            return
        deleted = {target.id for sub in walk_same_scope(helper.body)
                   if isinstance(sub, gast.Delete)
                   for target in sub.targets if isinstance(target, gast.Name)}
        deleted |= {sub.name.id for sub in walk_same_scope(helper.body)   # `except E as e`
                    if isinstance(sub, gast.ExceptHandler) and isinstance(sub.name, gast.Name)}
        last = helper.body[-1] if helper.body else None
        if not deleted or not isinstance(last, gast.Return) or last.value is None:
            return
        elts = last.value.elts if isinstance(last.value, gast.Tuple) else [last.value]
        for i, elt in enumerate(elts):
            if isinstance(elt, gast.Name) and elt.id in deleted:
                elts[i] = templates.replace_expr(
                    "ag__.local_or_undefined(locals(), var_name)", ag__=self.ag,
                    var_name=gast.Constant(value=elt.id, kind=None))
                templates.set_location(elts[i], last)
        if not isinstance(last.value, gast.Tuple):
            last.value = elts[0]

    def _obstacles(self, node, stmts, state, cells, carried=None):
        """Keywords of the runtime call saying what its staging cannot honour
        (``analysis/stageability.py``), only those that hold: ``assigns_global`` or
        ``assigns_nonlocal`` (``stmts`` become a function taking ``state``; names
        kept in ``cells`` are carried), ``deletes`` (a loop body deleting one of the
        ``carried`` names), ``in_try``."""
        scope = self.scopes[-1]
        globals_ = scope.globals_ if scope is not None else {}
        nonlocals = {n: d for n, d in (scope.nonlocals if scope is not None else {}).items()
                     if not scope.owns(n)}
        shared = scope.cells if scope is not None else frozenset()
        facts = {}
        written = outer_write(stmts, set(state) | set(cells) | (shared - set(nonlocals)),
                              globals_, nonlocals)
        if written is not None:
            kind, name = written
            facts[f"assigns_{kind}"] = name
        if carried is not None:
            facts["deletes"] = deleted_name(node.body, carried)
        facts["in_try"] = annos.get(node, annos.IN_TRY)
        return [gast.keyword(arg=key, value=gast.Constant(value=value, kind=None))
                for key, value in facts.items() if value is not None]

    def _range_args(self, iterable):
        """The arguments of ``iterable`` if it is ``ag__.range_(...)`` (or that range
        reversed, ``ag__.reversed_(ag__.range_(...))``), else None."""
        for runtime_name in ("reversed_", "range_"):
            func = getattr(iterable, "func", None)
            if not (isinstance(iterable, gast.Call) and isinstance(func, gast.Attribute)
                    and func.attr == runtime_name and isinstance(func.value, gast.Name)
                    and func.value.id == self.ag and not iterable.keywords):
                continue
            if runtime_name == "range_":
                return iterable.args
            if len(iterable.args) == 1:
                return self._range_args(iterable.args[0])
        return None

    def _derived_bound(self, node):
        """``[bound=ag__.loop_bound(lambda i: <range>, i)]`` for a ``for`` over a range
        that depends on the indices ``i`` of enclosing ``for`` loops over ranges (a
        triangular loop): staged, the runtime derives its largest trip count from
        theirs, so the loop is bounded and reverse-differentiable. The range must be
        made of names, constants, arithmetic and ``len``/``min``/``max``/``int``, so
        computing it again has no effect."""
        args = self._range_args(node.iter)
        enclosing = self.range_indices[-1]
        if args is None or not enclosing:
            return []
        used = []
        for sub in walk(gast.Tuple(elts=list(args), ctx=gast.Load())):
            if not isinstance(sub, _PURE_NODES) and not self._pure_call(sub):
                return []
            if (isinstance(sub, gast.Name) and sub.id in enclosing and sub.id not in used
                    and sub.id != self.ag):
                used.append(sub.id)
        if not used:
            return []
        call = templates.replace_expr("ag__.loop_bound(lambda indices: rng, indices)",
                                      ag__=self.ag, indices=used,
                                      rng=templates.copy_tree(node.iter))
        return [gast.keyword(arg="bound", value=call)]

    def _pure_call(self, sub):
        func = getattr(sub, "func", None)
        return (isinstance(sub, gast.Call) and isinstance(func, gast.Attribute)
                and isinstance(func.value, gast.Name) and func.value.id == self.ag
                and func.attr in ("range_", "reversed_", "len_", "min_", "max_", "int_"))

    # -- statements --------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        scope = _Scope(node, self.scopes[-1], self.ag)
        self.scopes.append(scope)
        self.range_indices.append([])
        try:
            node = self.generic_visit(node)
        finally:
            self.scopes.pop()
            self.range_indices.pop()
        _keep_cells_local(node, scope.cells & scope.locals)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and annos.get(node, annos.MAYBE_UNDEFINED):
            call = templates.replace_expr("ag__.ld(var)", ag__=self.ag, var=node.id)
            templates.set_location(call, node)
            return call
        return node

    def visit_If(self, node):
        modified = modified_names(node.body) | modified_names(node.orelse)
        live_out = annos.get(node, annos.LIVE_OUT)
        live = (live_out | annos.get(node, annos.LIVE_IN_BODY)
                | annos.get(node, annos.LIVE_IN_ORELSE))
        objects = self._objects(node.body + node.orelse)
        state = self._state(modified & live | objects)
        cells, scoped = self._cells(node, node.body + node.orelse, modified, live_out)
        mutated = self._sorted(objects & (set(state) | set(cells)))
        state_in = self._state_inputs(node, state, needed=(
            annos.get(node, annos.LIVE_IN_BODY) | annos.get(node, annos.LIVE_IN_ORELSE)
            | objects))
        obstacles = self._obstacles(node, node.body + node.orelse, state, cells)
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
            if_false=self.ctx.fresh_name("if_false"), state=state, body=node.body,
            orelse=node.orelse, test=node.test, state_in=state_in)
        _add_keywords(new[-1], obstacles + self._cell_keywords(cells, scoped, mutated))
        templates.set_location(new, node)
        self._declare(new)
        return new

    def visit_While(self, node):
        options = list(annos.get(node, annos.LOOP_OPTIONS, ()))
        modified = modified_names(node.body)
        live = annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD)
        objects = self._objects(node.body)
        state = self._state(modified & live | objects)
        cells, scoped = self._cells(node, [node.test, *node.body], modified, live)
        mutated = self._sorted(objects & (set(state) | set(cells)))
        state_in = self._state_inputs(node, state)
        obstacles = self._obstacles(node, node.body, state, cells, carried=state)
        node = self.generic_visit(node)
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
            loop_body=self.ctx.fresh_name("loop_body"), state=state, test=node.test,
            body=node.body, state_in=state_in)
        _add_keywords(new[-1], options + obstacles
                      + self._cell_keywords(cells, scoped, mutated))
        templates.set_location(new, node)
        self._declare(new)
        return new + node.orelse

    def visit_For(self, node):
        options = list(annos.get(node, annos.LOOP_OPTIONS, ()))
        targets = bound_names(node.target)
        modified = modified_names(node.body) | targets
        live = annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD)
        extra_test = annos.get(node, annos.EXTRA_TEST)
        objects = self._objects([node.target, *node.body])
        state = self._state(modified & live | objects)
        cells, scoped = self._cells(node, [node.target, *node.body], modified, live)
        mutated = self._sorted(objects & (set(state) | set(cells)))
        state_in = self._state_inputs(node, state)
        obstacles = self._obstacles(node, [node.target, *node.body], state, cells,
                                    carried=state)
        options += self._derived_bound(node)
        indices = self.range_indices[-1]
        over_range = self._range_args(node.iter) is not None
        if over_range and isinstance(node.target, gast.Name):
            indices.append(node.target.id)
        node = self.generic_visit(node)
        if over_range and isinstance(node.target, gast.Name):
            indices.pop()
        if (isinstance(node.target, gast.Name) and node.target.id not in state
                and node.target.id not in cells):
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
            unpack=unpack, state=state, body=node.body,
            iterable=node.iter, state_in=state_in)
        if extra_test is not None:
            test = templates.replace(
                """
                def loop_test(state):
                    return extra_test
                """,
                loop_test=self.ctx.fresh_name("loop_test"), state=state,
                extra_test=extra_test)
            options = [*options, gast.keyword(arg="extra_test",
                                              value=templates.name(test[0].name))]
            new = test + new
        _add_keywords(new[-1], options + obstacles
                      + self._cell_keywords(cells, scoped, mutated))
        templates.set_location(new, node)
        self._declare(new)
        return new + node.orelse


def _keep_cells_local(fn, cells):
    """Declare ``x: 'cell'`` first in ``fn`` for each name of ``cells`` that ``fn``
    no longer assigns itself (all its assignments moved into helpers, which declare
    it ``nonlocal``): the annotation, never evaluated, keeps it a local of ``fn``."""
    missing = sorted(cells - local_names(fn))
    if not missing:
        return
    declarations = [gast.AnnAssign(target=templates.name(name, gast.Store()),
                                   annotation=gast.Constant(value="cell", kind=None),
                                   value=None, simple=1) for name in missing]
    templates.set_location(declarations, fn)
    docstring = fn.body[:1] if (fn.body and isinstance(fn.body[0], gast.Expr)
                                and isinstance(fn.body[0].value, gast.Constant)
                                and isinstance(fn.body[0].value.value, str)) else []
    fn.body = docstring + declarations + fn.body[len(docstring):]


def _is_setitem(node) -> bool:
    value = node.value
    return (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
            and _runtime_operator(value) == "setitem" and value.args
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == node.targets[0].id)


def _calls_user_code(stmts, runtime_name) -> bool:
    """Whether ``stmts`` may call a function of the user's (which may assign a
    variable through ``nonlocal``): a ``converted_call``, or a call of a lambda or
    function defined right there."""
    for sub in walk_same_scope(stmts):
        if isinstance(sub, gast.Call):
            func = sub.func
            if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                    and func.value.id == runtime_name and func.attr != "converted_call"):
                return True
    return False


def _add_keywords(stmt, keywords):
    call = stmt.value
    call.keywords.extend(keywords)
