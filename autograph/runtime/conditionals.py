"""``if`` statements and conditional expressions: Python ``if``, or ``lax.cond``.

The generated code for

    if x > 0:
        y = x
    else:
        y = -x

is

    def if_true(y):
        y = x
        return y

    def if_false(y):
        y = -x
        return y
    y = ag__.if_stmt(x > 0, if_true, if_false, (ag__.Undefined('y'),))

and ``if_stmt`` runs one branch in Python when the condition is a Python value,
or stages both with ``lax.cond`` when it is traced.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import tree_util
from jax.extend.core import ClosedJaxpr, jaxpr_as_fun

from autograph.errors import ConversionError
from autograph.runtime import (
    batched_select,
    joined_numbers,
    lists,
    paths,
    python_ints,
    regions,
    returns,
    side_effects,
    unrolling,
)
from autograph.runtime import carried_state as carried
from autograph.runtime.abstract import (
    cast_to,
    check_python_scalars_fit,
    joined_dtypes,
    mismatch_error,
    mismatches,
    placeholder,
    structure_hint,
)
from autograph.runtime.objects import stateful_cells
from autograph.runtime.stageable import StagingObstacles, check_carriable
from autograph.runtime.staged_region import StagedRegion
from autograph.runtime.state import Holes, as_tuple, from_tuple
from autograph.runtime.trace_context import trace_flat
from autograph.runtime.tracing import caller_location, is_tracer, param_names
from autograph.runtime.undefined import is_undefined, is_undefined_return


def if_stmt(cond, if_true, if_false, state, *, in_try=None, assigns_global=None,
            assigns_nonlocal=None, cells=None, scoped=(), mutated=(), shared=(),
            item_writes=()):
    """``if cond: <if_true> else: <if_false>`` over the variables in ``state``.

    Equivalent to ``if_true(*state) if cond else if_false(*state)``; a traced
    ``cond`` stages both branches with ``lax.cond``. Each branch function takes the
    state variables as parameters and returns their new values. The keywords, given
    where they hold, say what staging cannot honour (``StagingObstacles``): a
    staged ``if`` then raises at the user's line. ``cells``/``scoped``: variables
    the branches keep in closure cells; ``mutated``: state variables whose objects
    the branches change in place; ``shared``: state variables whose object something
    else may hold too (``carried_state.py``), and ``item_writes`` those of them whose
    items a branch assigns (``stageable.check_item_writes``).
    """
    if not is_tracer(cond):
        branch = if_true if cond else if_false
        try:
            # Arguments spelled out: a call with `*state` would recurse in C, and
            # recursion through branches must cost no C stack (see recursion.py).
            count = len(state)
            if count == 1:
                return branch(state[0])
            if count == 2:
                return branch(state[0], state[1])
            if count == 3:
                return branch(state[0], state[1], state[2])
            return branch(*state)
        except Exception as error:
            regions.record(error, regions.PYTHON_BRANCH)
            raise
    # What the branches reach through their closures and a call may change in place.
    obstacles = StagingObstacles(in_try, assigns_global, assigns_nonlocal,
                                 item_writes=item_writes)
    hidden = stateful_cells(if_true, if_false, mutable=True)
    if cells is None and not mutated and not hidden and not carried.holds_containers(state):
        return _staged_if(cond, if_true, if_false, tuple(state), obstacles)
    return carried.carry(lambda plan, state: _staged_if(
        cond, plan.body(if_true), plan.body(if_false), state, obstacles),
        if_true, state, construct="if", cells=cells, scoped=scoped, mutated=mutated,
        hidden=hidden, shared=shared)


def _staged_if(cond, if_true, if_false, state, obstacles):
    """The staged ``if`` statement over ``state`` (its cells and objects carried)."""
    out = _staged_cond(cond, if_true, if_false, state, param_names(if_true),
                       caller_location(), "if", obstacles)
    python_ints.note(state, out)   # (a Python int either branch steps: now traced)
    return from_tuple(out)


def if_exp(cond, if_true, if_false, *, in_try=None):
    """``<if_true()> if cond else <if_false()>``; a traced ``cond`` uses ``lax.cond``
    (``in_try``: the line of a ``try`` around it, which a staged one refuses)."""
    if not is_tracer(cond):
        try:
            return if_true() if cond else if_false()
        except Exception as error:
            regions.record(error, regions.PYTHON_BRANCH)
            raise
    where = caller_location()
    out = _staged_cond(cond, if_true, if_false, (), ("the value",), where,
                       "conditional expression", StagingObstacles(in_try))
    return out[0]


def predicate(cond, where, construct: str):
    """A traced condition as the scalar boolean that ``lax`` control flow takes."""
    shape = getattr(cond, "shape", ())
    if shape != ():
        raise ConversionError(
            f"the condition of this {construct} is a traced array of shape {tuple(shape)}, "
            "and its truth value is ambiguous. Reduce it to one value, e.g. "
            "`jnp.all(c)` or `jnp.any(c)`.", where.filename, where.lineno)
    if cond.dtype != bool:
        cond = cond != 0
    return cond


def _staged_cond(cond, if_true, if_false, state, names, where, construct, obstacles):
    """The ``if`` as one ``lax.cond``, in JAX's own order: each branch traced once
    to a jaxpr (``_Branch``), the two checked and reconciled in one place (one-sided
    returns filled, lists grown in a branch's loop made buffers in both, Python
    scalars that meet arrays promoted, any other difference an error naming the
    variable), then bound once (``_reconciled_cond``). Each branch runs once."""
    # The order every staged region follows (staged_region.py): watch, open,
    # lift, check, trace/reconcile/bind, settle, write back.
    region = StagedRegion(construct, where, names, obstacles, (if_true, if_false), state)
    with region.opened():
        pred = predicate(cond, where, construct)
        holes = Holes(state)   # unbound before the if: left out of the operands
        operands = holes.operands
        region.check(operands, holes.bound_names(names))
        # Existing lists and dicts the branches give (a staged conditional gives copies).
        existing, picked = side_effects.closure_containers((if_true, if_false)), {}
        branches = object()   # this if, for paths.BranchTaken
        true, false = (_Branch(fn, taken, state, holes.rebuild, names, where, construct,
                               existing, picked)
                       for fn, taken in (
                           (if_true, paths.BranchTaken(lambda: pred, branches, True)),
                           (if_false, paths.BranchTaken(lambda: jnp.logical_not(pred),
                                                        branches, False))))
        with unrolling.held() as decisions:  # the loops in the branches
            # Settled between the branches too: the false branch reads the state as
            # it was, and a change the false branch undoes (`M.n = M.n + 1` in one
            # branch, `M.n = M.n - 1` in the other) is still seen.
            out = _reconciled_cond(pred, true, false, operands, state, (if_true, if_false),
                                   lambda: region.settle(False, lambda: jax.eval_shape(
                                       true.run, operands)))
        unrolling.release(decisions)
        # Traces the branches again only to name the line of a change it refuses.
        region.settle(False, lambda: jax.eval_shape(
            lambda ops: (true.run(ops), false.run(ops)), operands))
        python_ints.note_join(out, true.kinds, false.kinds, pred)
        joined_numbers.check_exact(out, true.python_leaves, false.python_leaves, where)
        out = _keep_python_constants(out, true.python_leaves, false.python_leaves)
        out = side_effects.as_copies(out, picked, where)   # the objects the user gets
        return holes.unbound_again(out, true.unbound, names)


def _reconciled_cond(pred, true, false, operands, state, functions, between):
    """``lax.cond`` of the two branches (or a select under a ``vmap`` that batches
    ``pred``), each traced once to a jaxpr first (``between()`` called between the
    two traces) and the two reconciled before binding (``_staged_cond``). A branch
    that reconciling left as it was is bound as traced; one it changed (a return
    filled, lists made buffers, dtypes promoted) is replayed from its jaxpr with the
    change, never traced again."""
    true.trace(operands)
    between()
    false.trace(operands)
    _fill_one_sided_returns(true, false, state)
    _raise_for_one_sided(true.unbound, false.unbound, true.names, true.where,
                         true.construct)
    buffers = None
    if _holds_staged_list(true.shapes) or _holds_staged_list(false.shapes):
        # A list one branch grows in a staged loop is a buffer there: make it one
        # in both (runtime/lists.py).
        buffers = lists.branch_buffers(true.shapes, false.shapes)
    if buffers:
        true.buffers = false.buffers = buffers
        true.shapes = lists.buffer_shapes(true.shapes, buffers)
        false.shapes = lists.buffer_shapes(false.shapes, buffers)
    dtypes = _joined_output_dtypes(true.shapes, false.shapes, true.names, true.where,
                                   true.construct, functions)
    for branch in (true, false):
        check_python_scalars_fit(branch.python_leaves, dtypes, true.names, true.where,
                                 true.construct)
    true.dtypes = false.dtypes = dtypes
    if true.as_traced() and false.as_traced():
        return batched_select.cond_traced(pred, true.traced(), false.traced(), operands)
    return batched_select.cond(pred, true.emit, false.emit, operands)


class _Branch:
    """One branch of a staged ``if``: ``run(operands)`` runs it on traced operands,
    recording the positions it leaves unbound and its Python scalar outputs;
    ``trace(operands)`` traces it once to a jaxpr and the abstract values it gives
    (``shapes``); ``emit(operands)`` replays that inside ``lax.cond``, with what
    reconciling the two branches decided (``fill``, ``buffers``, ``dtypes``)."""

    def __init__(self, fn, taken, state, rebuild, names, where, construct, existing,
                 picked):
        self.fn, self.taken, self.state, self.rebuild = fn, taken, state, rebuild
        self.names, self.where, self.construct = names, where, construct
        # ids of the lists and dicts the branches reach before the if; where a
        # branch gives one of them (side_effects.as_copies), shared by both branches
        self.existing, self.picked = existing, picked
        self.unbound = set()
        self.python_leaves = []
        self.kinds = []   # the Python type it gives at each position (python_ints)
        self.jaxpr = self.shapes = self.shapes_traced = None
        self.fill = {}        # position -> placeholder for a return the other branch sets
        self.buffers = None   # lists.as_buffers of the outputs
        self.dtypes = None    # the joined dtypes of the outputs

    def run(self, ops):
        inputs = self.rebuild(ops)
        python_ints.note_inner(self.state, inputs)
        # Taken before the branch runs: it may replace the leaves of its inputs
        # in place (objects it carries, carried_state.py).
        python_inputs = _python_inputs(self.state, inputs)
        inputs = _as_python_values(inputs, python_inputs)
        with paths.on_path(self.taken):
            out = list(as_tuple(self.fn(*inputs), len(self.names)))
        for i, value in enumerate(out):
            if is_undefined(value):
                self.unbound.add(i)
                out[i] = None
        for i, value in enumerate(out):
            if id(value) in self.existing:
                self.picked.setdefault(i, []).append(value)
        check_carriable(out, self.names, self.where, self.construct)
        self.python_leaves[:] = _python_scalars(out, python_inputs)
        self.kinds[:] = [python_ints.branch_kind(
            value, python_inputs[id(value)][1] if id(value) in python_inputs
            and python_inputs[id(value)][0] is value else None) for value in out]
        return tuple(out)

    def trace(self, operands):
        leaves, in_tree = tree_util.tree_flatten(operands)
        out_tree = []

        def flat(*leaves):
            out, tree = tree_util.tree_flatten(self.run(tree_util.tree_unflatten(in_tree,
                                                                                 leaves)))
            out_tree.append(tree)
            return out

        jaxpr, consts, avals = trace_flat(flat, [jax.typeof(leaf) for leaf in leaves])
        self.jaxpr = ClosedJaxpr(jaxpr, consts)
        self.shapes = self.shapes_traced = tree_util.tree_unflatten(out_tree[0], [
            jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals])

    def as_traced(self) -> bool:
        """Whether reconciling left the branch as it was traced."""
        return not self.fill and self.buffers is None and self.dtypes is None

    def traced(self):
        """``(closed jaxpr, output tree)``, what ``batched_select.cond_traced`` binds."""
        return self.jaxpr, tree_util.tree_structure(self.shapes_traced)

    def emit(self, operands):
        out = jaxpr_as_fun(self.jaxpr)(*tree_util.tree_leaves(operands))
        out = list(tree_util.tree_unflatten(tree_util.tree_structure(self.shapes_traced),
                                            out))
        for i, value in self.fill.items():
            out[i] = value()
        out = tuple(out) if self.buffers is None else lists.as_buffers(out, self.buffers)
        return out if self.dtypes is None else cast_to(out, self.dtypes)


def _holds_staged_list(tree) -> bool:
    return any(isinstance(leaf, lists.TensorList) for leaf in tree_util.tree_leaves(
        tree, is_leaf=lambda v: isinstance(v, lists.TensorList)))


def _fill_one_sided_returns(true, false, state):
    """A return value one branch sets and the other leaves unset (``UndefinedReturn``
    before the ``if``): the unset side gives zeros of the set side's type, which
    nothing reads (``did_return`` says which)."""
    for first, second in ((true, false), (false, true)):
        for i in first.unbound - second.unbound:
            if is_undefined_return(state[i]):
                first.fill[i] = functools.partial(placeholder, second.shapes[i])
    for branch in (true, false):
        if branch.fill:
            branch.unbound -= set(branch.fill)
            branch.shapes = tuple(
                second_shape if i in branch.fill else shape
                for i, (shape, second_shape) in enumerate(zip(
                    branch.shapes, (false if branch is true else true).shapes, strict=True)))


_PYTHON_SCALARS = (bool, int, float, complex)


def _python_inputs(state, inputs):
    """``{id(tracer): (tracer, value)}``: the branch's input leaves that stand for a
    Python scalar of the state (``lax.cond`` hands a branch its operands traced).
    Each tracer is held, so its id stays its own while the map is in use."""
    found = {}
    for before, traced in zip(state, inputs, strict=True):
        leaves, treedef = tree_util.tree_flatten(before)
        traced_leaves, traced_def = tree_util.tree_flatten(traced)
        if treedef == traced_def:
            found.update((id(t), (t, leaf))
                         for leaf, t in zip(leaves, traced_leaves, strict=True)
                         if type(leaf) in _PYTHON_SCALARS)
    return found


def _as_python_values(inputs, python_inputs):
    """The branch's inputs with each leaf that stands for a Python scalar of the state
    given as that Python value: the branch computes with it as Python does (``k // 0``
    raises, ``10 ** 12`` stays exact), not with JAX's 32-bit arithmetic."""
    if not python_inputs:
        return inputs
    return [tree_util.tree_map(
        lambda leaf: python_inputs[id(leaf)][1]
        if id(leaf) in python_inputs and python_inputs[id(leaf)][0] is leaf else leaf,
        value) for value in inputs]


def _python_scalars(out, python_inputs):
    """``(treedef, {leaf position: value})`` of each output: its Python scalar leaves,
    and those it passes through unchanged from a Python scalar input (a branch that
    leaves ``did_return = True`` as it was)."""
    found = []
    for value in out:
        leaves, treedef = tree_util.tree_flatten(value)
        scalars = {}
        for k, leaf in enumerate(leaves):
            if type(leaf) in _PYTHON_SCALARS:
                scalars[k] = leaf
            elif id(leaf) in python_inputs and python_inputs[id(leaf)][0] is leaf:
                scalars[k] = python_inputs[id(leaf)][1]
        found.append((treedef, scalars))
    return found


def _keep_python_constants(out, true_leaves, false_leaves):
    """The staged ``if``'s outputs, with each leaf that both branches give as the same
    Python scalar (``did_return = True`` in both) kept as that Python value: which
    branch runs cannot change it, so what follows stays decided in Python."""
    new = list(out)
    for i, ((tree_a, a), (tree_b, b)) in enumerate(zip(true_leaves, false_leaves,
                                                        strict=True)):
        same = [k for k in a.keys() & b.keys()
                if type(a[k]) is type(b[k]) and repr(a[k]) == repr(b[k])]
        if not same or tree_a != tree_b:
            continue
        leaves, treedef = tree_util.tree_flatten(out[i])
        if treedef != tree_a:
            continue
        for k in same:
            leaves[k] = a[k]
        new[i] = tree_util.tree_unflatten(treedef, leaves)
    return tuple(new)


def _raise_for_one_sided(true_unbound, false_unbound, names, where, construct):
    for i in sorted(true_unbound ^ false_unbound):
        missing = "else" if i in false_unbound else "if"
        raise ConversionError(
            f"'{names[i]}' has a value after only one branch of this {construct}, and the "
            f"{construct} is staged with lax.cond because its condition is traced: the "
            f"'{missing}' branch leaves it without a value (it is not assigned there, or "
            f"is deleted with `del`). Assign '{names[i]}' before the {construct}, or in "
            "both branches.", where.filename, where.lineno)


def _joined_output_dtypes(true_out, false_out, names, where, construct, branch_functions):
    """Promoted dtypes when the branches' abstract outputs differ only where Python
    scalars meet arrays (``1`` vs ``2.5``), None when they agree; otherwise raise
    naming the variable and both types."""
    found = mismatches(names, true_out, false_out)
    if not found:
        return None
    for name, first, second, joinable in found:
        if not joinable and returns.is_return_value(name, where):
            raise returns.mismatch_error(name, first, second, *branch_functions, where)
        if not joinable:
            i = names.index(name)
            raise mismatch_error(
                f"has a different type in the two branches of this staged {construct}",
                name, first, second, where,
                structure_hint(true_out[i], false_out[i])
                or "Both branches of an `if` on a traced condition must give each variable "
                "the same shape, dtype and pytree structure; convert one side (e.g. with "
                ".astype) or compute it outside the `if`.",
                ("when the condition is true", "when it is false"))
    return joined_dtypes(true_out, false_out)
