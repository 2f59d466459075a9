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

import jax
import jax.numpy as jnp
from jax import lax, tree_util

from autograph.errors import ConversionError
from autograph.runtime import cells as carried
from autograph.runtime import lists, paths, regions, returns, side_effects, unrolling
from autograph.runtime.abstract import cast_to, joined_dtypes, mismatch_error, mismatches
from autograph.runtime.objects import stateful_cells
from autograph.runtime.stageable import StagingObstacles, check_carriable, check_stageable
from autograph.runtime.state import as_tuple, from_tuple, split_unbound
from autograph.runtime.tracing import caller_location, is_tracer, param_names
from autograph.runtime.undefined import Undefined, is_undefined, is_undefined_return


def if_stmt(cond, if_true, if_false, state, *, in_try=None, assigns_global=None,
            assigns_nonlocal=None, cells=None, scoped=(), mutated=()):
    """``if cond: <if_true> else: <if_false>`` over the variables in ``state``.

    Equivalent to ``if_true(*state) if cond else if_false(*state)``; a traced
    ``cond`` stages both branches with ``lax.cond``. Each branch function takes the
    state variables as parameters and returns their new values. The keywords, given
    where they hold, say what staging cannot honour (``StagingObstacles``): a
    staged ``if`` then raises at the user's line. ``cells``/``scoped``: variables
    the branches keep in closure cells; ``mutated``: state variables whose objects
    the branches change in place (``cells.py``).
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
    hidden = stateful_cells(if_true, if_false, mutable=True)
    if cells is not None or mutated or hidden:
        return carried.carry(lambda plan, state: if_stmt(
            cond, plan.body(if_true), plan.body(if_false), state, in_try=in_try,
            assigns_global=assigns_global, assigns_nonlocal=assigns_nonlocal),
            if_true, state, construct="if", cells=cells, scoped=scoped, mutated=mutated,
            hidden=hidden)
    where = caller_location()
    names = param_names(if_true)
    obstacles = StagingObstacles(in_try, assigns_global, assigns_nonlocal)
    out = _staged_cond(cond, if_true, if_false, tuple(state), names, where, "if", obstacles)
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
    with regions.staged(construct, where):
        pred = predicate(cond, where, construct)
        operands, _, rebuild = split_unbound(state)
        if state:  # an `if` statement's state goes in and out under the same names
            defined_names = [n for n, v in zip(names, state, strict=True) if not is_undefined(v)]
            check_carriable(operands, defined_names, where, construct)
        check_stageable(obstacles, where, construct)
        count = len(names)
        unbound = {"if": set(), "else": set()}
        python_leaves = {}   # per branch: its outputs' leaves that are Python scalars
        # Python state the branches change without carrying it, and existing lists
        # they give (a staged conditional gives copies): side_effects.py.
        effects = side_effects.watch((if_true, if_false), state)
        existing, picked = side_effects.closure_containers((if_true, if_false)), set()

        with unrolling.held():  # abstract probes of the branches
            fill = returns.fill_for_branches(
                lambda ops: as_tuple(if_true(*rebuild(ops)), count),
                lambda ops: as_tuple(if_false(*rebuild(ops)), count), state, operands)

        def branch(fn, label, dtypes=None, buffers=None):
            taken = (lambda: pred) if label == "if" else (lambda: jnp.logical_not(pred))

            def run(ops):
                inputs = rebuild(ops)
                # Taken before the branch runs: it may replace the leaves of its inputs
                # in place (objects it carries, cells.py).
                python_inputs = _python_inputs(state, inputs)
                with paths.on_path(taken):
                    out = list(as_tuple(fn(*inputs), count))
                for i, value in enumerate(out):
                    if is_undefined(value) and i in fill:
                        out[i] = fill[i]
                    elif is_undefined(value):
                        unbound[label].add(i)
                        out[i] = None
                picked.update(i for i, value in enumerate(out) if id(value) in existing)
                out = tuple(out) if buffers is None else lists.as_buffers(out, buffers)
                check_carriable(out, names, where, construct)
                python_leaves[label] = _python_scalars(out, python_inputs)
                return out if dtypes is None else cast_to(out, dtypes)
            return run

        kept = []   # the decisions of the loops in the branches, as finally staged

        def cond(true_fn, false_fn):
            with unrolling.held() as decisions:
                result = lax.cond(pred, true_fn, false_fn, operands)
            kept[:] = decisions
            return result

        true_fn, false_fn = branch(if_true, "if"), branch(if_false, "else")
        try:
            out, failure = cond(true_fn, false_fn), None
        except TypeError as error:
            out, failure = None, error
        buffers = None
        if failure is not None:
            # A list one branch grows in a staged loop is a buffer there: make it one
            # in both (runtime/lists.py).
            with unrolling.held():
                buffers = lists.branch_buffers(true_fn, false_fn, operands)
            if buffers:
                true_fn = branch(if_true, "if", buffers=buffers)
                false_fn = branch(if_false, "else", buffers=buffers)
                try:
                    out, failure = cond(true_fn, false_fn), None
                except TypeError as error:
                    failure = error
        if failure is not None:
            # Explained outside the `except`, so our error does not chain to JAX's.
            _raise_for_one_sided(unbound, names, where, construct)
            with unrolling.held():
                dtypes = _joined_output_dtypes(true_fn, false_fn, operands, names, where,
                                               construct, (if_true, if_false))
            if dtypes is None:
                raise failure
            del failure
            out = cond(branch(if_true, "if", dtypes, buffers),
                       branch(if_false, "else", dtypes, buffers))
        unrolling.release(kept)
        side_effects.settle(effects, False, construct, where, lambda: jax.eval_shape(
            lambda ops: (true_fn(ops), false_fn(ops)), operands), traced_only=True)
        out = side_effects.as_copies(out, picked, where)
        _raise_for_one_sided(unbound, names, where, construct)
        out = _keep_python_constants(out, python_leaves["if"], python_leaves["else"])
        return tuple((state[i] if is_undefined_return(state[i]) else Undefined(names[i]))
                     if i in unbound["if"] else value
                     for i, value in enumerate(out))


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


def _raise_for_one_sided(unbound, names, where, construct):
    for i in sorted(unbound["if"] ^ unbound["else"]):
        missing = "else" if i in unbound["else"] else "if"
        raise ConversionError(
            f"'{names[i]}' has a value after only one branch of this {construct}, and the "
            f"{construct} is staged with lax.cond because its condition is traced: the "
            f"'{missing}' branch leaves it without a value (it is not assigned there, or "
            f"is deleted with `del`). Assign '{names[i]}' before the {construct}, or in "
            "both branches.", where.filename, where.lineno)


def _joined_output_dtypes(true_fn, false_fn, operands, names, where, construct,
                          branch_functions):
    """Promoted dtypes when the branches differ only where Python scalars meet
    arrays (``1`` vs ``2.5``); otherwise raise naming the variable and both types."""
    try:
        true_out = jax.eval_shape(true_fn, operands)
        false_out = jax.eval_shape(false_fn, operands)
    except TypeError:  # a branch fails by itself: lax.cond's error says where
        return None
    found = mismatches(names, true_out, false_out)
    if not found:
        return None
    for name, first, second, joinable in found:
        if not joinable and returns.is_return_value(name, where):
            raise returns.mismatch_error(name, first, second, *branch_functions, where)
        if not joinable:
            raise mismatch_error(
                f"has a different type in the two branches of this staged {construct}",
                name, first, second, where,
                "Both branches of an `if` on a traced condition must give each variable "
                "the same shape, dtype and pytree structure; convert one side (e.g. with "
                ".astype) or compute it outside the `if`.",
                ("when the condition is true", "when it is false"))
    return joined_dtypes(true_out, false_out)

