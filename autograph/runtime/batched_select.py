"""A staged ``if`` under ``vmap``: both branches on the batched values, then a select.

``cond(pred, true_fn, false_fn, operands)`` is a drop-in for ``lax.cond``. Where
the predicate is not batched it *is* ``lax.cond`` (one branch runs). Where a
``vmap`` batches the predicate, it becomes what one writes by hand:

    out = jnp.where(pred, true_fn(operands), false_fn(operands))

with every operand that is not batched (a closed-over weight matrix) left as it
is. JAX's own batching of ``lax.cond`` broadcasts every operand to the batch
first, so ``W @ h`` becomes a batch of copies of ``W`` times ``h``.

Two ways the predicate is known to be batched:

- while Python runs under ``jax.vmap`` (``vmap(f)``, ``jit(vmap(f))``,
  ``grad(vmap(f))``, ``vmap(grad(f))``): the predicate is a batched tracer now,
  and the select is written at once, in the current trace;
- when the ``if`` is traced into a jaxpr that a ``vmap`` batches later (a staged
  loop's body, ``vmap(jit(f))``): the ``if`` is a ``jax.custom_batching.custom_vmap``
  call whose batching rule writes the select (or, for a predicate the batch
  shares, a ``cond`` of the batched branches, which a ``vmap`` further out may
  batch in turn). ``custom_vmap`` has no reverse-mode rule, so it sits in a
  ``jax.custom_jvp``. Its JVP is again a staged ``if`` (the same construct), one
  that gives each branch's linearization residuals, the other branch's filled
  with ones; the tangent is a select between the two branches' linear maps of
  their residuals. With a predicate that is not batched only one branch runs,
  and the branch not taken gets ones, so its linear map stays finite and adds
  no NaN to a gradient.

In the select, the batched values a branch reads (operands and closed-over ones)
are cut off from the gradient for the examples that do not take it (as JAX's own
rule does, jax issue 1052), so a branch not taken (``sqrt`` of a negative) gives
no NaN gradient to the example's inputs. What no select can do without copying
them per example: cut off the values that are not batched (the closed-over
weights) per example. A branch
whose derivative is infinite at an example that does not take it still gives
NaN to the gradient of such a weight under ``vmap``, as the ``jnp.where`` form
does.

The ``cond`` itself is bound on the branches' jaxprs as they were traced
(``_DirectCond``), not through ``lax.cond``, which would trace them again; only
where they have effects, or where the installed JAX lays out jaxprs otherwise
than the direct bind expects (``DIRECT_BIND``), is it ``lax.cond``.

Kept as ``lax.cond`` (JAX's batching, copies included): branches with side
effects (a staged ``print`` or ``assert``; their per-example paths, ``paths.py``,
keep each effect to the examples that reach it) unless the predicate is known
to be batched while Python runs, and branches with a ``while`` loop, whose
linear map would run the loop on the branch not taken.
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util
from jax.extend.core import ClosedJaxpr, DebugInfo, Jaxpr, Var, jaxpr_as_fun
from jax.extend.core.primitives import cond_p

from autograph.runtime.trace_context import (
    BatchTracer,
    lower_custom_vmap_calls_directly,
    trace_flat,
)


def cond(pred, true_fn, false_fn, *operands):
    """``lax.cond(pred, true_fn, false_fn, *operands)``, lowered under ``vmap`` with a
    batched ``pred`` to a select between both branches on the batched operands.

    Before: ``jax.vmap(lambda h: lax.cond(h.sum() > 0, f, g, h))`` broadcasts every
    operand of ``f`` and ``g`` to the batch. After: ``jnp.where(pred, f(h), g(h))``
    with the closed-over operands of ``f`` and ``g`` as they are.
    """
    return _cond(pred, true_fn, false_fn, operands, spare={})


def is_batched(value) -> bool:
    """Whether ``value`` is a tracer that a ``vmap`` running now maps (looking
    through the tracers of ``grad`` and ``jvp`` to their primal values)."""
    while value is not None:
        if isinstance(value, BatchTracer):
            return value.batch_dim is not None
        value = getattr(value, "primal", None)
    return False


def _cond(pred, true_fn, false_fn, operands, spare):
    """``cond`` (``true_fn`` and ``false_fn`` take the tuple ``operands`` spread);
    ``spare``: ``{position: branch}`` for the output leaves whose value
    only matters where that branch is taken (its linearization residuals; the
    other branch gives a filler), so one that neither branch batches is that
    branch's, with no select."""
    true, false = (_traced(fn, operands) for fn in (true_fn, false_fn))
    return _bind(pred, true, false, (true_fn, false_fn), operands, spare)


def cond_traced(pred, true, false, *operands):
    """``cond`` of two branches already traced, each a ``(closed jaxpr over the
    operands' leaves, tree of its output)``: JAX's own order, each branch traced
    once by the caller, checked and bound here without tracing the user's code
    again (``conditionals._Branch``)."""
    return _bind(pred, true, false, (_replay(*true), _replay(*false)), operands, {})


def _replay(closed, out_tree):
    """The branch function that a traced branch stands for (its jaxpr evaluated)."""
    def replay(*operands):
        out = jaxpr_as_fun(closed)(*tree_util.tree_leaves(operands))
        return tree_util.tree_unflatten(out_tree, out)
    return replay


def _bind(pred, true, false, functions, operands, spare):
    """``_cond`` once each branch is a closed jaxpr with its output tree
    (``functions``: the branches again, should a weak type need making strong)."""
    (true_jaxpr, out_tree), (false_jaxpr, false_tree) = true, false
    true_fn, false_fn = functions
    leaves, _ = tree_util.tree_flatten(operands)
    if jnp.result_type(pred) != jnp.bool_:
        pred = jnp.asarray(pred) != 0
    weak = _weak_only(true_jaxpr.out_avals, false_jaxpr.out_avals)
    if out_tree == false_tree and weak:
        # `y = 0.0` in one branch, an array in the other: both strong, as lax.cond has it
        (true_jaxpr, _), (false_jaxpr, _) = (_traced(_strong(fn, weak), operands)
                                             for fn in (true_fn, false_fn))
    if out_tree != false_tree or true_jaxpr.out_avals != false_jaxpr.out_avals:
        # Types to reconcile: the TypeError lax.cond raises, without tracing again.
        raise TypeError(
            "true_fun and false_fun output must have identical types, got\n"
            f"{tree_util.tree_unflatten(out_tree, true_jaxpr.out_avals)}\nand\n"
            f"{tree_util.tree_unflatten(false_tree, false_jaxpr.out_avals)}")
    staged = _StagedIf(true_jaxpr, false_jaxpr, spare)
    consts = (list(true_jaxpr.consts), list(false_jaxpr.consts))
    if is_batched(pred):
        out = staged.select_now(pred, *consts, leaves)
    elif (true_jaxpr.effects or false_jaxpr.effects
          or _has_loop(true_jaxpr.jaxpr) or _has_loop(false_jaxpr.jaxpr)
          or (not spare and _integer_scalars(true_jaxpr, false_jaxpr))):
        out = staged.cond(pred, *consts, leaves)
    else:
        out = staged(pred, *consts, leaves)
    return tree_util.tree_unflatten(out_tree, out)


def _integer_scalars(true, false) -> bool:
    """Whether both branches (closed jaxprs) take only scalars, constants included,
    and no value in or out is of a floating type. JAX's own batching of such a
    ``cond`` is the select the ``custom_vmap`` rule writes: it broadcasts only
    scalars to the batch, and no tangent reaches it (collatz's ``if``). It stays a
    plain ``cond``: one equation and one trace less, and none to lower."""
    if _differentiable(true) or _differentiable(false):
        return False
    return all(v.aval.shape == () for closed in (true, false)
               for v in (*closed.jaxpr.constvars, *closed.jaxpr.invars))


def _weak_only(true_avals, false_avals):
    """Positions where the two branches' outputs differ in weak type only (empty
    where they differ otherwise)."""
    if len(true_avals) != len(false_avals):
        return ()
    found = []
    for i, (a, b) in enumerate(zip(true_avals, false_avals, strict=True)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return ()
        if a != b:
            found.append(i)
    return tuple(found)


def _strong(fn, positions):
    """``fn`` with the output leaves at ``positions`` given a strong type."""
    def strong(*operands):
        leaves, tree = tree_util.tree_flatten(fn(*operands))
        for i in positions:
            leaves[i] = lax.convert_element_type(leaves[i], jnp.result_type(leaves[i]))
        return tree_util.tree_unflatten(tree, leaves)
    return strong


def _traced(fn, operands):
    """``fn`` as a closed jaxpr over the operands' leaves (what it closes over, its
    constants), and the tree of its output."""
    leaves, in_tree = tree_util.tree_flatten(operands)
    out_tree = []

    def flat(*leaves):
        out = fn(*tree_util.tree_unflatten(in_tree, leaves))
        out_leaves, tree = tree_util.tree_flatten(out)
        out_tree.append(tree)
        return out_leaves

    closed = jax.make_jaxpr(flat)(*leaves)
    return closed, out_tree[0]


def _has_loop(jaxpr) -> bool:
    """Whether ``jaxpr`` or a jaxpr nested in it has a ``while`` loop."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "while":
            return True
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and _has_loop(inner):
                    return True
    return False


def _differentiable(closed) -> bool:
    """Whether a value the closed jaxpr ``closed`` takes (constants included) or
    gives is of a floating or complex type, which a tangent can be nonzero for."""
    avals = [v.aval for v in closed.jaxpr.constvars] + [*closed.in_avals, *closed.out_avals]
    return any(jnp.issubdtype(a.dtype, jnp.inexact) for a in avals)


def _inexact(value) -> bool:
    return jnp.issubdtype(jnp.result_type(value), jnp.inexact)


def _masked(pred, leaves, taken, batched=None):
    """The leaves, each batched inexact one cut off from the gradient for the
    examples whose predicate is not ``taken`` (the others stay as they are).
    ``batched``: which leaves are batched, where the leaves cannot say (inside a
    batching rule, whose batch axis leads: ``pred`` is ``(B,)``)."""
    flags = [is_batched(leaf) for leaf in leaves] if batched is None else batched
    keep = pred if taken else jnp.logical_not(pred)
    return [_select(keep, leaf, lax.stop_gradient(leaf)) if flag and _inexact(leaf)
            else leaf for leaf, flag in zip(leaves, flags, strict=True)]


def _select(pred, a, b):
    """``jnp.where(pred, a, b)`` for ``a`` and ``b`` of one type, whose leading axes
    are those of ``pred`` (a batch)."""
    pred = jnp.reshape(pred, jnp.shape(pred) + (1,) * (jnp.ndim(a) - jnp.ndim(pred)))
    return lax.select(jnp.broadcast_to(pred, jnp.shape(a)), a, b)


def _batched_outputs(jaxpr, consts_batched, leaves_batched):
    """Which outputs of ``jaxpr`` depend on a batched input (an equation with a
    batched input gives batched outputs: an over-estimate, never an under-one)."""
    batched = {}
    for var, flag in zip([*jaxpr.constvars, *jaxpr.invars],
                         [*consts_batched, *leaves_batched], strict=True):
        batched[var] = flag
    for eqn in jaxpr.eqns:
        flag = any(batched.get(v, False) for v in eqn.invars if not hasattr(v, "val"))
        flag = flag or eqn.primitive.name == "axis_index"
        for v in eqn.outvars:
            batched[v] = flag
    return [False if hasattr(v, "val") else batched.get(v, False) for v in jaxpr.outvars]


# What JAX's debugging info says of a staged if's custom_vmap function and rule and
# custom_jvp function and rule, given rather than read from their signatures each
# time an if is traced.
_PRIMAL_DEBUG = DebugInfo("custom_vmap fun", "staged_if", None, None)
_RULE_DEBUG = DebugInfo("custom_vmap rule", "staged_if_vmap_rule", None, None)
_JVP_PRIMAL_DEBUG = DebugInfo("custom_jvp fun", "staged_if", None, None)
_JVP_DEBUG = DebugInfo("custom_jvp jvp", "staged_if_jvp", None, None)


def _is_staged_if(call) -> bool:
    """Whether the call jaxpr of a ``custom_vmap`` call is a staged if's."""
    debug = getattr(call.jaxpr, "debug_info", None)
    return debug is not None and debug.func_src_info == _PRIMAL_DEBUG.func_src_info \
        and debug.traced_for == _PRIMAL_DEBUG.traced_for


# Whether a staged if's custom_vmap call is lowered from its jaxpr as it is, not
# traced again by JAX's rule (trace_context.lower_custom_vmap_calls_directly): about
# a millisecond of collatz's lowering. Read at each lowering (a test turns it off).
DIRECT_LOWERING = True
_LOWERS_DIRECTLY = lower_custom_vmap_calls_directly(
    lambda call: DIRECT_LOWERING and _is_staged_if(call))


def _described(method, debug):
    """``method`` as a ``functools.partial`` carrying ``debug`` where JAX looks for a
    function's debugging info before it inspects its signature."""
    described = functools.partial(method.__func__, method.__self__)
    described.__fun_debug_info__ = debug
    return described


class _StagedIf:
    """One staged ``if`` whose branches are closed jaxprs. Called with the predicate,
    each branch's constants and the operands' leaves, it is a ``custom_jvp``
    around a ``custom_vmap`` around ``lax.cond`` (the ``custom_vmap`` alone where
    no value in or out is of a floating type)."""

    def __init__(self, true_jaxpr, false_jaxpr, spare):
        self.jaxprs = {True: true_jaxpr, False: false_jaxpr}
        self.spare = spare

    @functools.cached_property
    def function(self):
        """The ``custom_vmap`` (in a ``custom_jvp`` where a value is of a floating
        type), built only for the ``if`` that is bound through it."""
        primal = jax.custom_batching.custom_vmap(_described(self.cond, _PRIMAL_DEBUG))
        primal.def_vmap(_described(self._vmap_rule, _RULE_DEBUG))
        if not (_differentiable(self.jaxprs[True]) or _differentiable(self.jaxprs[False])):
            # Integers and booleans only, in and out: every tangent reaching it is a
            # symbolic zero, which JAX's JVP and linearize pass by without a rule, so
            # no custom_jvp is needed (one equation and its trace less).
            return primal
        primal.__fun_debug_info__ = _JVP_PRIMAL_DEBUG
        function = jax.custom_jvp(primal)
        function.defjvp(_described(self._jvp, _JVP_DEBUG))
        return function

    def __call__(self, pred, true_consts, false_consts, leaves):
        return self.function(pred, true_consts, false_consts, leaves)

    def _run(self, which, consts, leaves):
        return jax.core.eval_jaxpr(self.jaxprs[which].jaxpr, consts, *leaves)

    def cond(self, pred, true_consts, false_consts, leaves):
        """``lax.cond`` of the two branches: ``cond_p`` bound on the branches as
        traced (``_DirectCond``) where that is known to be what ``lax.cond`` binds,
        else ``lax.cond`` itself, which traces them again."""
        if DIRECT_BIND and self.direct is not None:
            return self.direct(pred, true_consts, false_consts, leaves)
        return lax.cond(pred, lambda args: self._run(True, args[0], args[2]),
                        lambda args: self._run(False, args[1], args[2]),
                        (true_consts, false_consts, leaves))

    @functools.cached_property
    def direct(self):
        """The ``_DirectCond`` of the two branches, or None where one has effects
        (``lax.cond`` orders and checks those)."""
        true, false = self.jaxprs[True], self.jaxprs[False]
        if true.effects or false.effects:
            return None
        return _DirectCond(true, false)

    def select_now(self, pred, true_consts, false_consts, leaves):
        """Both branches in the current trace (where ``pred`` is batched), on operands
        cut off from the gradient where the example does not take the branch."""
        true_out = self._run(True, _masked(pred, true_consts, True),
                             _masked(pred, leaves, True))
        false_out = self._run(False, _masked(pred, false_consts, False),
                              _masked(pred, leaves, False))
        return [(a if self.spare[i] else b)
                if i in self.spare and not is_batched(a) and not is_batched(b)
                else _select(pred, a, b)
                for i, (a, b) in enumerate(zip(true_out, false_out, strict=True))]

    def _vmap_rule(self, axis_size, in_batched, pred, true_consts, false_consts, leaves):
        pred_batched, true_batched, false_batched, leaves_batched = in_batched
        consts_batched = {True: true_batched, False: false_batched}
        out_batched = {which: _batched_outputs(self.jaxprs[which].jaxpr,
                                               consts_batched[which], leaves_batched)
                       for which in (True, False)}
        keep = [i in self.spare and not a and not b for i, (a, b) in
                enumerate(zip(out_batched[True], out_batched[False], strict=True))]

        def batched(which):
            in_axes = ([0 if b else None for b in consts_batched[which]],
                       [0 if b else None for b in leaves_batched])
            out_axes = [None if k else 0 for k in keep]
            return jax.vmap(lambda c, x: self._run(which, c, x), in_axes=in_axes,
                            out_axes=out_axes, axis_size=axis_size)

        run_true, run_false = batched(True), batched(False)
        if pred_batched:
            true_out = run_true(_masked(pred, true_consts, True, batched=true_batched),
                                _masked(pred, leaves, True, batched=leaves_batched))
            false_out = run_false(_masked(pred, false_consts, False, batched=false_batched),
                                  _masked(pred, leaves, False, batched=leaves_batched))
            out = [(a if self.spare[i] else b) if k else _select(pred, a, b)
                   for i, (k, a, b) in enumerate(zip(keep, true_out, false_out,
                                                     strict=True))]
        else:
            # The predicate is the batch's: still one branch, and a vmap further out
            # may batch it (an `if` under vmap of vmap).
            out = _cond(pred, lambda t, f, x: run_true(t, x), lambda t, f, x: run_false(f, x),
                        (true_consts, false_consts, leaves), self.spare)
        return out, [not k for k in keep]

    def _jvp(self, primals, tangents):
        pred, true_consts, false_consts, leaves = primals
        _, true_dots, false_dots, leaf_dots = tangents
        lin = {which: _Linearized(self, which) for which in (True, False)}
        args = (true_consts, false_consts, leaves)
        count = len(self.jaxprs[True].out_avals)
        # Each branch's outputs and residuals, ones for the other branch's residuals.
        fill = {which: [jnp.ones(r.shape, r.dtype) for r in _residual_types(lin[which], args)]
                for which in lin}

        def branch(which):
            def run(*args):
                out, residuals = lin[which].residuals(args)
                return (out, residuals, fill[not which]) if which else (
                    out, fill[not which], residuals)
            return run

        spare = {count + i: i < len(fill[True])
                 for i in range(len(fill[True]) + len(fill[False]))}
        out, true_res, false_res = _cond(pred, branch(True), branch(False), args, spare)
        true_tan = lin[True].tangents(true_res, true_dots, leaf_dots)
        false_tan = lin[False].tangents(false_res, false_dots, leaf_dots)
        out_tan = [_select(pred, a, b) if _inexact(o) else b
                   for o, a, b in zip(out, true_tan, false_tan, strict=True)]
        return out, out_tan


def _direct_bind_supported() -> bool:
    """Whether the installed JAX has the jaxpr layout ``_DirectCond`` builds on
    (jax 0.10: a ``ClosedJaxpr`` of a ``Jaxpr`` with ``constvars``, ``Var(aval)``,
    ``cond_p`` bound as ``cond_p.bind(index, *operands, branches=(false, true))``).
    JAX 0.11 made ``ClosedJaxpr`` and ``Jaxpr`` one class: ``lax.cond`` there."""
    try:
        jaxpr_fields = inspect.signature(Jaxpr.__init__).parameters
        var_fields = inspect.signature(Var.__init__).parameters
    except (TypeError, ValueError):
        return False
    return (ClosedJaxpr is not Jaxpr and cond_p.name == "cond" and cond_p.multiple_results
            and all(f in jaxpr_fields for f in ("constvars", "invars", "outvars", "eqns"))
            and all(f in ClosedJaxpr.__init__.__code__.co_varnames for f in ("jaxpr", "consts"))
            and [n for n, f in var_fields.items() if f.default is f.empty] == ["self", "aval"])


# Whether a staged ``if`` binds ``cond_p`` on its traced branches (``_DirectCond``);
# False: through ``lax.cond`` (a test forces it, to keep both ways tested).
DIRECT_BIND = _direct_bind_supported()


class _DirectCond:
    """``lax.cond`` of two effect-free branches already traced, without tracing
    them again: each branch's closed jaxpr takes ``[*true consts, *false consts,
    *operand leaves]`` (the other branch's constants as unused inputs), and an
    output that both branches pass through from the same input is that input, not
    an output of the ``cond``, as ``lax.cond`` binds it.

    Before: ``lax.cond(pred, lambda a: eval_jaxpr(t, a), lambda a: eval_jaxpr(f, a), a)``
    (each branch traced again). After: ``cond_p.bind(index, *a, branches=(f', t'))``.
    """

    def __init__(self, true, false):
        true_consts = len(true.jaxpr.constvars)
        start = true_consts + len(false.jaxpr.constvars)
        fwd = (_forwarded(true.jaxpr, 0, start), _forwarded(false.jaxpr, true_consts, start))
        self.forwarded = [i if i == j else None for i, j in zip(*fwd, strict=True)]
        keep = [i is None for i in self.forwarded]
        self.branches = (_padded(false, true, keep, before=True),
                         _padded(true, false, keep, before=False))

    def __call__(self, pred, true_consts, false_consts, leaves):
        inputs = [*true_consts, *false_consts, *leaves]
        out = iter(cond_p.bind(lax.convert_element_type(pred, np.int32), *inputs,
                               branches=self.branches))
        return [next(out) if i is None else _array(inputs[i]) for i in self.forwarded]


def _array(value):
    return value if isinstance(value, jax.Array) else jnp.asarray(value)


def _forwarded(jaxpr, consts_at, leaves_at):
    """Per output of ``jaxpr``: the position among the inputs ``[*true consts,
    *false consts, *leaves]`` of the input it passes through unchanged, or None
    (its constants are at ``consts_at``, the leaves at ``leaves_at``)."""
    position = {v: consts_at + i for i, v in enumerate(jaxpr.constvars)}
    position.update((v, leaves_at + i) for i, v in enumerate(jaxpr.invars))
    return [position.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars]


def _padded(closed, other, keep, before):
    """``closed`` as a constant-free closed jaxpr over ``[*true consts, *false consts,
    *leaves]`` (``other``'s constants unused inputs, first where ``before``), with
    only the outputs where ``keep``."""
    jaxpr = closed.jaxpr
    unused = [Var(v.aval) for v in other.jaxpr.constvars]
    consts = [*unused, *jaxpr.constvars] if before else [*jaxpr.constvars, *unused]
    return ClosedJaxpr(jaxpr.replace(
        constvars=[], invars=[*consts, *jaxpr.invars],
        outvars=[v for v, k in zip(jaxpr.outvars, keep, strict=True) if k]), ())


def _residual_types(linearized, args):
    """The abstract values of ``linearized.residuals(args)``'s residuals, found by
    an abstract trace (``trace_context.trace_flat``)."""
    leaves, tree = tree_util.tree_flatten(args)
    _, _, types = trace_flat(
        lambda *leaves: list(linearized.residuals(tree_util.tree_unflatten(tree, leaves))[1]),
        [jax.typeof(leaf) for leaf in leaves])
    return types


class _Linearized:
    """One branch of a ``_StagedIf``, linearized: ``residuals(args)`` gives its
    outputs and residuals (as arrays of strong type, so a filler of ones matches),
    ``tangents(residuals, ...)`` its linear map of the operands' tangents."""

    def __init__(self, staged, which):
        self.staged, self.which = staged, which
        self.linear = None   # the linear map's jaxpr, over its residuals

    def _parts(self, consts, leaves):
        flat = [*consts, *leaves]
        return flat, [i for i, x in enumerate(flat) if _inexact(x)]

    def residuals(self, args):
        consts = args[0] if self.which else args[1]
        flat, inexact = self._parts(consts, args[2])
        split = len(consts)

        def run(*diff):
            full = list(flat)
            for i, value in zip(inexact, diff, strict=True):
                full[i] = value
            return self.staged._run(self.which, full[:split], full[split:])

        if not inexact:   # nothing to differentiate: a linear map of nothing
            out = run()
            self.linear = jax.make_jaxpr(lambda: [
                jnp.zeros(jnp.shape(o), jnp.result_type(o) if _inexact(o) else jnp.float32)
                for o in out])().jaxpr
            return out, []
        out, linear = jax.linearize(run, *[flat[i] for i in inexact])
        closed = jax.make_jaxpr(linear)(*[flat[i] for i in inexact])
        self.linear = closed.jaxpr
        return out, [lax.convert_element_type(r, jnp.result_type(r)) for r in closed.consts]

    def tangents(self, residuals, const_dots, leaf_dots):
        dots = [*const_dots, *leaf_dots]
        inexact = [d for d in dots if getattr(d, "dtype", None) != jax.dtypes.float0]
        out = jax.core.eval_jaxpr(self.linear, residuals, *inexact)
        avals = self.staged.jaxprs[self.which].out_avals
        return [t if jnp.issubdtype(a.dtype, jnp.inexact)
                else np.zeros(a.shape, jax.dtypes.float0) for t, a in zip(out, avals,
                                                                         strict=True)]
