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
    stays_python,
    walk_same_scope,
)
from autograph.analysis.stageability import annotate_enclosing_try, deleted_name, outer_write
from autograph.converters.base import Transformer
from autograph.errors import ConversionError

NODE_TYPES = (gast.If, gast.While, gast.For)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert every ``if``/``while``/``for`` in ``node`` (nested functions included)."""
    _reject_leftover_jumps(node, ctx)
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
    stack = [(child, None, None) for child in gast.iter_child_nodes(fn)]
    while stack:
        node, block, loop = stack.pop()
        if stays_python(node):
            continue
        if isinstance(node, SCOPES):
            stack.extend((child, None, None) for child in gast.iter_child_nodes(node))
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
        stack.extend((child, block, loop) for child in gast.iter_child_nodes(node))


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
        elif isinstance(node, gast.Delete):
            has_delete = True
        stack.extend(reversed(list(gast.iter_child_nodes(node))))
    return order, has_delete


class _ControlFlow(Transformer):
    def __init__(self, ctx, order, has_delete):
        self.ctx = ctx
        self.order = order
        self.has_delete = has_delete
        self.ag = ctx.runtime_name
        self.declared = [({}, {})]   # per function: global and nonlocal names
        self.locals = [None]          # per function: its local names
        self.range_indices = [[]]     # per function: targets of the enclosing range loops

    # -- helpers ---------------------------------------------------------------------

    def _sorted(self, names):
        # Only the function's own locals are state: a `global`/`nonlocal` name is
        # declared in the helpers instead, and a global or closure variable that is
        # only mutated (`cache[k] = v`) stays the same object.
        local = self.locals[-1]
        names = [n for n in names if local is None or n in local]
        return sorted(names, key=lambda n: (self.order.get(n, len(self.order)), n))

    def _declare(self, new):
        """Repeat the function's ``global``/``nonlocal`` declarations in the generated
        helpers in ``new`` that assign those names, so they keep their scope; a helper
        that ``del``s a state variable returns it as ``Undefined`` when it is unbound."""
        globals_, nonlocals = self.declared[-1]
        for helper in new:
            if not isinstance(helper, gast.FunctionDef):
                continue
            self._return_deleted(helper)
            modified = modified_names(helper.body)
            for kind, names in ((gast.Global, globals_), (gast.Nonlocal, nonlocals)):
                used = sorted(n for n in names if n in modified)
                if used:
                    declaration = kind(names=used)
                    templates.set_location(declaration, names[used[0]])
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
            if needed is not None and name not in needed:
                elts.append(templates.replace_expr(
                    "ag__.Undefined(var_name)", ag__=self.ag,
                    var_name=gast.Constant(value=name, kind=None)))
            elif name in defined:
                elts.append(templates.name(name))
            elif name not in maybe:
                elts.append(templates.replace_expr(
                    "ag__.Undefined(var_name)", ag__=self.ag,
                    var_name=gast.Constant(value=name, kind=None)))
            else:
                elts.append(templates.replace_expr(
                    "ag__.local_or_undefined(locals(), var_name)", ag__=self.ag,
                    var_name=gast.Constant(value=name, kind=None)))
        return gast.Tuple(elts=elts, ctx=gast.Load())

    def _return_deleted(self, helper):
        if not self.has_delete:
            return
        deleted = {target.id for sub in walk_same_scope(helper.body)
                   if isinstance(sub, gast.Delete)
                   for target in sub.targets if isinstance(target, gast.Name)}
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

    def _obstacles(self, node, stmts, state, carried=None):
        """Keywords of the runtime call saying what its staging cannot honour
        (``analysis/stageability.py``), only those that hold: ``assigns_global`` or
        ``assigns_nonlocal`` (``stmts`` become a function taking ``state``),
        ``deletes`` (a loop body deleting one of the ``carried`` names), ``in_try``."""
        globals_, nonlocals = self.declared[-1]
        facts = {}
        written = outer_write(stmts, state, globals_, nonlocals)
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
        for sub in gast.walk(gast.Tuple(elts=list(args), ctx=gast.Load())):
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

    def _reject_walrus_test(self, node):
        """``while (n := n - 1) > 0``: the test runs in its own function, where the
        assignment would be lost, so say so rather than loop forever."""
        for sub in walk_same_scope(node.test):
            if isinstance(sub, gast.NamedExpr):
                raise ConversionError(
                    "an assignment expression (`:=`) in a `while` condition is not "
                    "supported: assign the variable before the loop and at the end of its "
                    "body instead", self.ctx.filename, sub.lineno, sub.col_offset)

    # -- statements --------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        declared = ({}, {})
        for sub in walk_same_scope(node.body):
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                target = declared[isinstance(sub, gast.Nonlocal)]
                target.update((n, sub) for n in sub.names)
        self.declared.append(declared)
        self.locals.append(local_names(node))
        self.range_indices.append([])
        try:
            return self.generic_visit(node)
        finally:
            self.declared.pop()
            self.locals.pop()
            self.range_indices.pop()

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and annos.get(node, annos.MAYBE_UNDEFINED):
            call = templates.replace_expr("ag__.ld(var)", ag__=self.ag, var=node.id)
            templates.set_location(call, node)
            return call
        return node

    def visit_If(self, node):
        modified = modified_names(node.body) | modified_names(node.orelse)
        live = (annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_IN_BODY)
                | annos.get(node, annos.LIVE_IN_ORELSE))
        state = self._sorted(modified & live)
        state_in = self._state_inputs(node, state, needed=(
            annos.get(node, annos.LIVE_IN_BODY) | annos.get(node, annos.LIVE_IN_ORELSE)))
        obstacles = self._obstacles(node, node.body + node.orelse, state)
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
        _add_keywords(new[-1], obstacles)
        templates.set_location(new, node)
        self._declare(new)
        return new

    def visit_While(self, node):
        options = list(annos.get(node, annos.LOOP_OPTIONS, ()))
        modified = modified_names(node.body)
        live = annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD)
        state = self._sorted(modified & live)
        self._reject_walrus_test(node)
        state_in = self._state_inputs(node, state)
        obstacles = self._obstacles(node, node.body, state, carried=state)
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
        _add_keywords(new[-1], options)
        _add_keywords(new[-1], obstacles)
        templates.set_location(new, node)
        self._declare(new)
        return new + node.orelse

    def visit_For(self, node):
        options = list(annos.get(node, annos.LOOP_OPTIONS, ()))
        targets = bound_names(node.target)
        modified = modified_names(node.body) | targets
        live = annos.get(node, annos.LIVE_OUT) | annos.get(node, annos.LIVE_AT_HEAD)
        extra_test = annos.get(node, annos.EXTRA_TEST)
        state = self._sorted(modified & live)
        state_in = self._state_inputs(node, state)
        obstacles = self._obstacles(node, [node.target, *node.body], state, carried=state)
        options += self._derived_bound(node)
        indices = self.range_indices[-1]
        over_range = self._range_args(node.iter) is not None
        if over_range and isinstance(node.target, gast.Name):
            indices.append(node.target.id)
        node = self.generic_visit(node)
        if over_range and isinstance(node.target, gast.Name):
            indices.pop()
        if isinstance(node.target, gast.Name) and node.target.id not in state:
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
        _add_keywords(new[-1], options)
        _add_keywords(new[-1], obstacles)
        templates.set_location(new, node)
        self._declare(new)
        return new + node.orelse


def _add_keywords(stmt, keywords):
    call = stmt.value
    call.keywords.extend(keywords)

