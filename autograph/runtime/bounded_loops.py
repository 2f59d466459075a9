"""A bounded ``while`` loop that costs the iterations it takes, forward and in reverse.

``set_loop_options(maximum_iterations=N)`` makes a staged ``while`` (or a ``for`` over
a traced range) reverse-differentiable. ``bounded_while(cond_fun, body_fun, state, N)``
is that loop::

    t = 0
    while t < N and cond_fun(state):
        state = body_fun(state)
        t += 1

What it costs depends on how it is used, not on ``N``:

- **Evaluated** (with or without ``jit``/``vmap``): one ``lax.while_loop`` with
  ``t < N`` as an extra stop condition. It costs the iterations taken.
- **Forward mode** (``jvp``, ``jacfwd``): that ``while_loop`` for the values, and one
  more ``while_loop`` carrying values and tangents for the tangents: the iterations
  taken, twice.
- **Reverse mode** (``grad``, ``vjp``, ``jacrev``): the forward pass runs the
  ``while_loop`` and keeps only the loop's input and its trip count ``k``. The
  backward pass replays the ``k`` iterations as nested, skippable ``scan``s and
  differentiates those (below): about the iterations taken times a small factor,
  in memory that grows like ``N ** (1/4)``, not like ``N``.

**How the form is picked per use.** The loop is a ``jax.custom_jvp`` function whose
primal is the ``while_loop`` and whose tangent is ``bounded_tangent_p``, a primitive
of ours, *linear* in the tangents, whose rules are:

- evaluation (what ``jvp`` runs): a ``while_loop`` over values and tangents;
- *transposition* (what reverse mode runs): the vector-Jacobian product of the
  replayed, nested-scan form, taken with ``jax.vjp``;
- its own JVP, for second derivatives: the same primitive on the JVP of the body
  (so ``jacfwd(jacrev(f))``, ``jacrev(jacfwd(f))`` and ``jacrev(jacrev(f))`` all go
  through, each level reverse- or forward-differentiating ordinary ``lax`` code or
  this primitive again);
- batching: the same primitive on the ``vmap`` of the body, each example stopping
  after its own trip count.

Reverse mode in JAX is "linearize, then transpose": linearizing calls the JVP rule,
keeps the primal ``while_loop`` in the forward pass (its inputs are known) and puts
the tangent primitive in the linear program, which transposition then runs
backwards. Nothing here depends on which of JAX's linearization paths runs, and
every rule is an ordinary one (``primitive_jvps``, ``primitive_transposes``,
``primitive_batchers``, a lowering), so ``jit``, ``vmap``, ``jax.checkpoint``,
``scan`` around the loop and loops nested in loops compose as they do for
``lax`` primitives. (``jax.custom_vjp`` alone cannot be forward-differentiated;
``jax.custom_derivatives.linear_call`` cannot be differentiated with respect to
its non-linear inputs, which second derivatives need; the experimental
``jax.experimental.hijax`` primitives do not batch or JVP their linearized form.)

**The replayed form** runs steps ``0 .. N-1``, step ``t`` applying the body if
``t < k``, in stages: stage 0 is a ``scan`` over steps ``0 .. b-1``; stage ``j``
covers steps ``b^j .. b^(j+1)-1`` as a ``scan`` over ``b - 1`` blocks of ``b^j``
steps, each block a ``scan`` over ``b`` blocks of ``b^(j-1)`` steps, and so on down
to single steps. ``b`` is ``BASE`` (16) up to ``N = 16^4``; past it, the least ``b``
with ``b^STAGES >= N``, so there are at most ``STAGES`` (4) stages: the program
reverse mode compiles grows with the number of stages squared, not with ``N``.
Each stage and block sits in a ``lax.cond`` on
whether it starts before ``k``, so the blocks past the stopping point cost one
predicate each, and whole stages past it one predicate. Every block of more than one
step is under ``jax.checkpoint``: reverse mode keeps each block's input and replays
the block when the backward pass reaches it (treeverse-style recomputation). A step
in stage ``j`` is computed ``j + 1`` times in the replay (once more in the forward
``while_loop``), so reverse mode costs about ``k * (log_b(k) + 2)`` body evaluations
and one backward pass of ``k`` steps, whatever ``N``, and keeps ``b`` states per
level plus the body intermediates of one block of ``b`` steps. ``checkpoint=True``
(a body under ``jax.checkpoint``) keeps states instead of those intermediates too.

Under ``vmap`` the stage and block predicates ask whether *any* example still runs
(``any_example``), so the batch does the work of its longest example; each step
updates only the examples with ``t < k`` of their own. Prints and asserts in the
body run once per iteration, in the forward pass: the body the tangent primitive
replays is traced again without them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util
from jax.extend.core import ClosedJaxpr, Primitive, jaxpr_as_fun
from jax.interpreters import ad, batching, mlir

from autograph.runtime import loop_counters, paths
from autograph.runtime.abstract import run_or_keep
from autograph.runtime.trace_context import pruned, trace_flat

BASE = 16    # the least branching factor b of the replayed form: blocks of b^j steps
STAGES = 4   # its stages at most: b grows with the bound past BASE ** STAGES

# -- the loop --------------------------------------------------------------------------


def bounded_while(cond_fun, body_fun, state, maximum_iterations: int):
    """``lax.while_loop(cond_fun, body_fun, state)`` stopped after at most
    ``maximum_iterations`` iterations, differentiable in both modes (module docstring).

    ``state`` is a pytree; ``body_fun`` must return one of the same structure and
    types (a ``TypeError`` otherwise, as ``lax.while_loop`` raises).
    """
    if maximum_iterations == 0:
        return state
    leaves, treedef = tree_util.tree_flatten(state)
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    if not any(_inexact(x) for x in leaves):
        try:
            out = _integer_while(cond_fun, body_fun, leaves, treedef, maximum_iterations)
        except _NotInteger:
            pass
        else:
            return tree_util.tree_unflatten(treedef, out)
    spec, leaves, consts = _trace_loop(cond_fun, body_fun, leaves, treedef,
                                       maximum_iterations)
    if spec.quiet is None:
        out, _ = _while(spec, *consts[:2], leaves)
    else:
        out, _ = _run(spec, *consts, leaves)
    return tree_util.tree_unflatten(treedef, out)


def bounded_range(lower, upper, body_fun, state, maximum_iterations: int):
    """``fori_loop(lower, upper, body_fun, state)`` for at most ``maximum_iterations``
    iterations (``bounded_while`` over the index and the state)."""
    start = jnp.asarray(lower) + jnp.zeros((), jnp.int32)  # as lower + arange(N) was

    def cond(carry):
        return carry[0] < upper

    def body(carry):
        index, values = carry
        return index + 1, body_fun(index, values)

    _, out = bounded_while(cond, body, (start, state), maximum_iterations)
    return out


@dataclass(frozen=True, eq=False)
class _Spec:
    """One traced loop: jaxprs taking their constants first, then the state leaves."""

    cond: ClosedJaxpr    # (*cond_consts, *state) -> bool
    body: ClosedJaxpr    # (*body_consts, *state) -> state
    # The body without its prints and asserts, for derivatives; None where no state
    # leaf is of a floating type (no tangent to take: a plain while_loop).
    quiet: ClosedJaxpr | None
    maximum_iterations: int


class _NotInteger(Exception):
    """``_integer_while`` declines: the body gives a leaf a floating type or a type
    other than the one it entered with."""


def _integer_while(cond_fun, body_fun, leaves, treedef, maximum_iterations):
    """The loop over integer and boolean ``leaves`` whose body gives each leaf its
    own type back: no tangent reaches or leaves it (JAX's JVP and linearize pass
    its zeros by without a rule), so it is the ``while_loop`` the evaluated form
    runs (``_while``, the ``t < N`` stop included), without a ``custom_jvp``.
    Counters the body steps together (``loop_counters``: the user's ``i += 1``, the
    length of a list appended once per iteration) are carried once, and the trip
    count is one of them where it can be; then, without effects, the loop is bound
    from the traced jaxprs as they are (``loop_counters.spliced_while``), else
    they are evaluated into ``lax.while_loop``. Raises ``_NotInteger`` (before
    anything is bound) where the body makes a leaf a float or another type: the
    general form promotes or reports it.

    Before: carry (t, fib, length, i), which XLA compiles as three counters
    (fibonacci_while's compile 1.15x the hand-written loop's). After: (fib, length),
    the hand-written loop's one counter."""
    flat_cond, flat_body = _flat_functions(cond_fun, body_fun, treedef)
    body, body_consts = _trace(flat_body, leaves)
    types = [jax.typeof(x) for x in leaves]
    for x, y in zip(types, body.out_avals, strict=True):
        if ((x.shape, x.dtype) != (y.shape, y.dtype) or (x.weak_type and not y.weak_type)
                or jnp.issubdtype(y.dtype, jnp.inexact)):
            raise _NotInteger
    cond, cond_consts = _trace(flat_cond, leaves)
    counters = loop_counters.plan(loop_counters.find(body, len(body_consts)), leaves,
                                  maximum_iterations)
    if counters.trip is not None:
        out = loop_counters.spliced_while(counters, cond, cond_consts, body, body_consts,
                                          leaves, types, maximum_iterations, _trace)
        if out is not None:
            return out
    run_cond = jaxpr_as_fun(cond)
    # The derived counters' own steps are dead code in the loop's body.
    run_body, used = pruned(body, [k in counters.carried for k in range(len(leaves))])

    def keep_going(carry):
        t, values = carry
        if counters.trip is not None:
            t = counters.trips(values)
        return jnp.logical_and(t < maximum_iterations,
                               run_cond(*cond_consts, *counters.expand(values, types))[0])

    def step(carry):
        t, values = carry
        consts = _kept(body_consts, used[:len(body_consts)])
        out = run_body(*consts, *counters.expand(values, types, used[len(body_consts):]))
        if counters.trip is None:
            t = t + 1
        return t, out

    trips = () if counters.trip is not None else jnp.zeros((), jnp.int32)
    _, out = lax.while_loop(keep_going, step, (trips, counters.carry(leaves)))
    return counters.expand(out, types)


def _flat_functions(cond_fun, body_fun, treedef):
    """The loop's test and body over the state's leaves, each giving a list."""

    def flat_cond(*xs):
        return [cond_fun(tree_util.tree_unflatten(treedef, xs))]

    def flat_body(*xs):
        out = body_fun(tree_util.tree_unflatten(treedef, xs))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != treedef:
            raise TypeError(
                "body_fun output and input must have identical types, got\n"
                f"{out_tree} and {treedef}")
        return out_leaves

    return flat_cond, flat_body


def _trace_loop(cond_fun, body_fun, leaves, treedef, maximum_iterations):
    """Trace the loop functions on the state ``leaves`` (weak-typed leaves promoted
    to the type the body gives them, as ``lax.while_loop`` does)."""
    flat_cond, flat_body = _flat_functions(cond_fun, body_fun, treedef)
    body, body_consts = _trace(flat_body, leaves)
    promoted = [_promote_weak(x, out) for x, out in zip(leaves, body.out_avals, strict=True)]
    if any(p is not x for p, x in zip(promoted, leaves, strict=True)):
        leaves = promoted
        body, body_consts = _trace(flat_body, leaves)
    for x, out in zip(leaves, body.out_avals, strict=True):
        if (jax.typeof(x).shape, jax.typeof(x).dtype) != (out.shape, out.dtype):
            raise TypeError(
                "body_fun output and input must have identical types, got "
                f"{out.str_short()} and {jax.typeof(x).str_short()}")
    cond, cond_consts = _trace(flat_cond, leaves)
    if not any(_inexact(x) for x in leaves):
        # Integers and booleans only: every tangent out of the loop is a zero, which
        # JAX's JVP and linearize pass by without a rule, so no custom_jvp is needed
        # (its trace and the jaxpr layer it adds: fibonacci_while's first call).
        quiet, quiet_consts = None, []
    elif body.effects:
        with paths.replaying():  # a new function: make_jaxpr caches by function
            quiet, quiet_consts = _trace(lambda *xs: flat_body(*xs), leaves)
    else:
        quiet, quiet_consts = body, body_consts
    spec = _Spec(cond, body, quiet, maximum_iterations)
    return spec, leaves, (cond_consts, body_consts, quiet_consts)


def _trace(fn, args):
    """``fn`` as a jaxpr without constants: what it closes over (tracers of an
    enclosing trace included) becomes its leading parameters, returned second.
    Traced by ``trace_context.trace_flat`` (no ``jit`` built around ``fn``, as
    ``jax.make_jaxpr`` builds, each time)."""
    jaxpr, consts, _ = trace_flat(fn, [jax.typeof(x) for x in args])
    names = jaxpr.debug_info.arg_names
    debug = jaxpr.debug_info._replace(
        arg_names=None if names is None else ("",) * len(jaxpr.constvars) + tuple(names))
    opened = jaxpr.replace(constvars=(), invars=(*jaxpr.constvars, *jaxpr.invars),
                           debug_info=debug)
    return ClosedJaxpr(opened, ()), list(consts)


def _promote_weak(value, out_aval):
    aval = jax.typeof(value)
    if aval.weak_type and not _same_type(aval, out_aval) and aval.shape == out_aval.shape:
        return lax.convert_element_type(value, jnp.result_type(value, out_aval.dtype))
    return value


def _same_type(a, b) -> bool:
    return (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _run(spec, cond_consts, body_consts, quiet_consts, xs):
    """The loop as a ``while_loop``; returns the final state and the trip count."""
    del quiet_consts
    return _while(spec, cond_consts, body_consts, xs)


def _while(spec, cond_consts, body_consts, xs):
    """``_run`` without its derivative rule: the ``while_loop`` itself."""
    cond = jaxpr_as_fun(spec.cond)
    body = jaxpr_as_fun(spec.body)
    bound = spec.maximum_iterations

    def keep_going(carry):
        t, values = carry
        return jnp.logical_and(t < bound, cond(*cond_consts, *values)[0])

    def step(carry):
        t, values = carry
        return t + 1, body(*body_consts, *values)

    trips, out = lax.while_loop(keep_going, step, (jnp.zeros((), jnp.int32), list(xs)))
    return out, trips


@_run.defjvp
def _run_jvp(spec, primals, tangents):
    cond_consts, body_consts, quiet_consts, xs = primals
    _, _, quiet_tangents, x_tangents = tangents
    out, trips = _run(spec, cond_consts, body_consts, quiet_consts, xs)
    const_diff = tuple(_inexact(c) for c in quiet_consts)
    state_diff = tuple(_inexact(x) for x in xs)
    out_diff = bounded_tangent_p.bind(
        *quiet_consts, *xs, trips, *_kept(quiet_tangents, const_diff),
        *_kept(x_tangents, state_diff), body=spec.quiet, const_diff=const_diff,
        state_diff=state_diff, maximum_iterations=spec.maximum_iterations)
    out_diff = iter(out_diff)
    out_tangents = [next(out_diff) if diff else _float0(y)
                    for y, diff in zip(out, state_diff, strict=True)]
    return (out, trips), (out_tangents, _float0(trips))


def _inexact(value) -> bool:
    return jnp.issubdtype(jnp.result_type(value), jnp.inexact)


def _kept(values, mask):
    return [v for v, keep in zip(values, mask, strict=True) if keep]


def _float0(value):
    return np.zeros(np.shape(value), jax.dtypes.float0)


# -- the tangent of the loop: a linear primitive ------------------------------------


bounded_tangent_p = Primitive("autograph_bounded_tangent")
bounded_tangent_p.multiple_results = True


def _split(args, const_diff, state_diff):
    """The operands of ``bounded_tangent_p``: constants, state, trip count, and the
    tangents of the inexact constants and state leaves."""
    nc, ns = len(const_diff), len(state_diff)
    ndc = sum(const_diff)
    consts, xs, trips = args[:nc], args[nc:nc + ns], args[nc + ns]
    rest = args[nc + ns + 1:]
    return list(consts), list(xs), trips, list(rest[:ndc]), list(rest[ndc:])


def _merge(values, diff_values, mask, fill):
    """``values`` with the entries where ``mask`` is set taken from ``diff_values``
    and the others made by ``fill(value)``."""
    it = iter(diff_values)
    return [next(it) if keep else fill(v) for v, keep in zip(values, mask, strict=True)]


def _body_jvp(body, consts, xs, dconsts, dxs, const_diff, state_diff):
    """One iteration of the body and its tangent (``dxs`` for the inexact leaves)."""
    primals = (*consts, *xs)
    tangents = (*_merge(consts, dconsts, const_diff, _float0),
                *_merge(xs, dxs, state_diff, _float0))
    out, dout = jax.jvp(jaxpr_as_fun(body), primals, tangents)
    return list(out), _kept(dout, state_diff)


def _tangent_impl(*args, body, const_diff, state_diff, maximum_iterations):
    """The tangent by running the loop forward over values and tangents."""
    del maximum_iterations
    consts, xs, trips, dconsts, dxs = _split(args, const_diff, state_diff)

    def step(carry):
        values, tangents = carry
        return _body_jvp(body, consts, values, dconsts, tangents, const_diff, state_diff)

    if jnp.ndim(trips) == 0:
        _, dxs = lax.fori_loop(0, trips, lambda _, carry: step(carry), (xs, dxs))
        return dxs

    def keep_going(carry):  # a batch of loops: each example stops at its own count
        return jnp.any(carry[0] < trips)

    def masked_step(carry):
        t, values, tangents = carry
        new = step((values, tangents))
        running = t < trips
        return t + 1, *_select_prefix(running, new, (values, tangents))

    _, _, dxs = lax.while_loop(keep_going, masked_step,
                               (jnp.zeros((), jnp.int32), xs, dxs))
    return dxs


def _tangent_abstract_eval(*avals, body, const_diff, state_diff, maximum_iterations):
    del body, maximum_iterations
    *_, dx_avals = _split(avals, const_diff, state_diff)
    return dx_avals


def _tangent_jvp(primals, tangents, *, body, const_diff, state_diff, maximum_iterations):
    """The tangent's own JVP (second derivatives): the tangent of the loop whose body
    is the JVP of this one's, over values and tangents together."""
    out = bounded_tangent_p.bind(*primals, body=body, const_diff=const_diff,
                                 state_diff=state_diff,
                                 maximum_iterations=maximum_iterations)
    consts, xs, trips, dconsts, dxs = _split(primals, const_diff, state_diff)
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    t_consts, t_xs, _, t_dconsts, t_dxs = _split(tangents, const_diff, state_diff)
    body2 = _joint_body(body, const_diff, state_diff, consts, xs, dconsts, dxs)
    const_diff2 = const_diff + (True,) * len(dconsts)
    state_diff2 = state_diff + (True,) * len(dxs)
    out2 = bounded_tangent_p.bind(
        *consts, *dconsts, *xs, *dxs, trips, *_kept(t_consts, const_diff), *t_dconsts,
        *_kept(t_xs, state_diff), *t_dxs, body=body2, const_diff=const_diff2,
        state_diff=state_diff2, maximum_iterations=maximum_iterations)
    return out, out2[len(out2) - len(dxs):]


def _joint_body(body, const_diff, state_diff, consts, xs, dconsts, dxs):
    """The body over (values, tangents): ``(*consts, *dconsts, *xs, *dxs)`` to
    ``(*xs, *dxs)`` one iteration later."""
    nc, ndc, ns = len(consts), len(dconsts), len(xs)

    def joint(*args):
        c, dc = args[:nc], args[nc:nc + ndc]
        x, dx = args[nc + ndc:nc + ndc + ns], args[nc + ndc + ns:]
        new, dnew = _body_jvp(body, c, x, dc, dx, const_diff, state_diff)
        return [*new, *dnew]

    joint_jaxpr, consts_out = _trace(joint, [*consts, *dconsts, *xs, *dxs])
    assert not consts_out
    return joint_jaxpr


def _tangent_transpose(cts, *args, body, const_diff, state_diff, maximum_iterations):
    """Reverse mode: the vector-Jacobian product of the replayed loop."""
    consts, xs, trips, dconsts, dxs = _split(args, const_diff, state_diff)
    assert not any(ad.is_undefined_primal(v) for v in (*consts, *xs, trips))
    out_avals = [jax.typeof(x) for x in _kept(xs, state_diff)]
    cts = [jnp.zeros(a.shape, a.dtype) if type(ct) is ad.Zero else ct
           for ct, a in zip(cts, out_avals, strict=True)]
    run_body = jaxpr_as_fun(body)

    def replayed(diff_consts, diff_xs):
        all_consts = _merge(consts, diff_consts, const_diff, lambda c: c)
        all_xs = _merge(xs, diff_xs, state_diff, lambda x: x)

        def step(values):
            return run_body(*all_consts, *values)

        return _kept(replay(step, all_xs, trips, maximum_iterations), state_diff)

    _, pullback = jax.vjp(replayed, _kept(consts, const_diff), _kept(xs, state_diff))
    ct_consts, ct_xs = pullback(cts)
    ct_dconsts = [ct if ad.is_undefined_primal(d) else None
                  for ct, d in zip(ct_consts, dconsts, strict=True)]
    ct_dxs = [ct if ad.is_undefined_primal(d) else None
              for ct, d in zip(ct_xs, dxs, strict=True)]
    return [None] * (len(consts) + len(xs) + 1) + ct_dconsts + ct_dxs


def _tangent_batch(args, dims, *, body, const_diff, state_diff, maximum_iterations):
    """``vmap``: every state leaf and tangent batched along axis 0, each example
    stopping after its own trip count; constants stay unbatched where they and
    their tangents are."""
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True)
                if d is not None)
    consts, xs, trips, dconsts, dxs = _split(args, const_diff, state_diff)
    c_dims, x_dims, t_dim, dc_dims, dx_dims = _split(dims, const_diff, state_diff)
    dc_dims_all = _merge(consts, dc_dims, const_diff, lambda _: None)
    dconsts_all = _merge(consts, dconsts, const_diff, lambda _: None)
    new_consts, new_dconsts, const_axes = [], [], []
    for c, cd, dc, dcd, diff in zip(consts, c_dims, dconsts_all, dc_dims_all, const_diff,
                                    strict=True):
        batched = cd is not None or (diff and dcd is not None)
        new_consts.append(_at_front(c, cd, size) if batched else c)
        if diff:
            new_dconsts.append(_at_front(dc, dcd, size) if batched else dc)
        const_axes.append(0 if batched else None)
    xs = [_at_front(x, d, size) for x, d in zip(xs, x_dims, strict=True)]
    dxs = [_at_front(dx, d, size) for dx, d in zip(dxs, dx_dims, strict=True)]
    if t_dim is not None:
        trips = jnp.moveaxis(trips, t_dim, 0)
    elif jnp.ndim(trips):  # counts of an inner batch, shared by this one's examples
        trips = jnp.broadcast_to(trips, (size, *jnp.shape(trips)))
    batched_body = jax.vmap(jaxpr_as_fun(body), in_axes=(*const_axes, *[0] * len(xs)))
    new_body, extra = _trace(batched_body, [*new_consts, *xs])
    assert not extra
    out = bounded_tangent_p.bind(*new_consts, *xs, trips, *new_dconsts, *dxs,
                                 body=new_body, const_diff=const_diff,
                                 state_diff=state_diff,
                                 maximum_iterations=maximum_iterations)
    return out, [0] * len(out)


def _at_front(value, dim, size):
    if dim is None:
        return jnp.broadcast_to(value, (size, *jnp.shape(value)))
    return jnp.moveaxis(value, dim, 0)


bounded_tangent_p.def_impl(_tangent_impl)
bounded_tangent_p.def_abstract_eval(_tangent_abstract_eval)
mlir.register_lowering(bounded_tangent_p, mlir.lower_fun(_tangent_impl, multiple_results=True))
ad.primitive_jvps[bounded_tangent_p] = _tangent_jvp
ad.primitive_transposes[bounded_tangent_p] = _tangent_transpose
batching.primitive_batchers[bounded_tangent_p] = _tangent_batch


# -- the replayed form: nested, skippable, checkpointed scans ---------------------------


def replay(step, xs, trips, maximum_iterations: int):
    """``step`` applied ``trips`` times to ``xs`` (``trips <= maximum_iterations``; an
    array whose shape is a prefix of every leaf's under a batch of loops), written
    with ``scan`` and ``cond`` only so that reverse mode goes through it; see the
    module docstring for its shape and cost."""
    base = branching_factor(maximum_iterations)
    first = min(base, maximum_iterations)
    xs = _guarded(0, trips, lambda v: _block(step, v, 0, 1, first, trips, base), xs)
    size = base   # stage j: steps b^j .. b^(j+1) - 1, in blocks of b^j
    while size < maximum_iterations:
        count = min(base - 1, -(-(maximum_iterations - size) // size))
        xs = _guarded(size, trips, lambda v, size=size, count=count: _block(
            step, v, size, size, count, trips, base), xs)
        size *= base
    return xs


def branching_factor(maximum_iterations: int) -> int:
    """The least ``b >= BASE`` with ``b ** STAGES >= maximum_iterations``: the
    replayed form has at most ``STAGES`` stages."""
    base = max(BASE, round(maximum_iterations ** (1 / STAGES)))
    while base ** STAGES < maximum_iterations:
        base += 1
    return base


def _block(step, xs, start, size, count, trips, base):
    """``count`` blocks of ``size`` steps each, from step ``start``, each skipped when
    it starts at or after ``trips``; a block of one step is one guarded ``step``."""

    def one(carry, _):
        values, first = carry
        if size == 1:
            new = _guarded(first, trips,
                           lambda v: _select_prefix(first < trips, step(v), v), values)
        else:
            new = _guarded(first, trips, lambda v: _block(step, v, first, size // base, base,
                                                          trips, base), values)
        return (new, first + size), None

    if size > 1:
        one = jax.checkpoint(one, prevent_cse=False)
    (xs, _), _ = lax.scan(one, (xs, jnp.asarray(start, jnp.int32)), None, length=count)
    return xs


def _guarded(start, trips, run, xs):
    """``run(xs)`` if some loop of the batch runs step ``start``, else ``xs``."""
    running = any_example(jnp.any(start < trips))
    return run_or_keep(running, run, xs)


def _select_prefix(mask, new, old):
    """``where(mask, new, old)`` leaf by leaf, ``mask``'s shape a prefix of theirs."""
    mask = jnp.asarray(mask)

    def pick(a, b):
        m = mask.reshape(mask.shape + (1,) * (jnp.ndim(a) - mask.ndim))
        return jnp.where(m, a, b)

    return tree_util.tree_map(pick, new, old)


# -- "does any example still run": a predicate that vmap reduces ------------------------

any_example_p = Primitive("autograph_any_example")


def any_example(pred):
    """``pred`` (a boolean scalar); under ``vmap``, whether it holds for any example,
    unbatched, so that a ``cond`` on it stays a branch instead of becoming a select
    that runs both sides."""
    return any_example_p.bind(pred)


any_example_p.def_impl(lambda pred: pred)
any_example_p.def_abstract_eval(lambda aval: aval)
mlir.register_lowering(any_example_p, lambda ctx, pred: [pred])
batching.primitive_batchers[any_example_p] = (
    lambda args, dims: (jnp.any(args[0], axis=dims[0]), None))


def _any_example_jvp(primals, tangents):
    (pred,), _ = primals, tangents
    out = any_example_p.bind(pred)
    return out, ad.Zero(jax.typeof(out).to_tangent_aval())


ad.primitive_jvps[any_example_p] = _any_example_jvp

