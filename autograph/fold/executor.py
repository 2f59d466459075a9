"""The executor: one compiled program per :class:`~autograph.fold.schedule.Layout`.

    buffers[c]    zeros (rows, *shape) per class of value (shape, dtype), the rows
                  allotted by the layout (``Layout.rows``): each leaf signature's
                  and each step's outputs contiguous
    leaves        per height-0 signature: the callee vmapped over all its nodes at
                  once, each output written as one slice
    steps         in order: gather the step's inputs from the buffers (by index; the
                  plan's indices are ``(values, slots)``, a run's ``(steps, values, K)``),
                  the callee vmapped over the step's slots, each output written as
                  one slice of ``K`` rows at the step's first row; a run of steps
                  of one capacity is a scan, a step of its own is unrolled
    roots         gathered from their rows, stacked over the trees

Outputs are written into rows that are still zero, as a ``dynamic_update_slice``
(in place, like a depth-batched level written by hand) whose backward pass is
that of an *add* (:func:`_put`): the slice of the cotangent. An overwrite's
transpose would zero those rows of the cotangent, and a scatter by index (the
rows of a step scattered over the buffer) costs XLA a loop over the rows where a
slice is one copy. With one inner signature (a TreeLSTM's cell) a step computes
straight, its intermediates kept for the backward pass like a hand-written
level's (the steps are sized to the levels: about the real rows). With several,
a step's signature is a scalar per step: the inputs of every signature are
gathered, then ``lax.switch`` runs only the step's callee on its rows (the last
branch, nothing: an empty step), and the outputs are scattered by index (every
signature's, the others' slots to the dump row). The buffers stay outside the
switch: a conditional that takes them as operands makes XLA copy them each
step. The switch is recomputed in the backward pass (``_recomputed``). A scan of
the only inner signature has its own backward pass (``_scan_run``): the
parameters' cotangent is taken once over the run's rows, not added into the
carry per step.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util


def _compute(sig, params, values, data, n):
    """The callee's output leaves on ``n`` nodes' gathered arguments (vmapped)."""
    if values or data:
        return jax.vmap(partial(sig.apply, params))(values, list(data))
    # computed from the parameters alone: once, then repeated
    return [jnp.broadcast_to(o, (n, *o.shape)) for o in sig.apply(params, [], [])]


def _gather(sig, buffers, class_index, values_rows):
    return [_take(buffers[class_index[c]], values_rows[j]) for j, c in enumerate(sig.in_classes)]


def _take(buffer, rows):
    """``buffer[rows]``; one row as a ``dynamic_slice`` written here.

    XLA rewrites a gather of one row into a dynamic-slice that it names
    ``dynamic-slice.N``, while the ones JAX lowers (a scan's slice of its inputs)
    are named ``dynamic_slice.N``, numbered apart. XLA CPU names the functions of
    a fusion's parts with ``-`` read as ``_``: two such slices with one number in
    one fusion (a step of one row gathering by the indices the scan sliced) become
    one function, and the compile fails (``RET_CHECK fusion_compiler.cc``,
    "Failed to translate module to LLVM IR"). Written as JAX's own, every slice
    is numbered by one counter."""
    if rows.shape[0] == 1:
        return lax.dynamic_slice_in_dim(buffer, lax.index_in_dim(rows, 0, keepdims=False), 1)
    return buffer[rows]


def _add_at(buffer, rows, values):
    """``buffer.at[rows].add(values)``; one row as JAX's own slice and update (see
    :func:`_take`: XLA makes a one-row scatter a ``dynamic-update-slice.N``)."""
    if rows.shape[0] == 1:
        return _set_at(buffer, rows, _take(buffer, rows) + values)
    return buffer.at[rows].add(values)


def _set_at(buffer, rows, values):
    """``buffer.at[rows].set(values)`` (one row: see :func:`_add_at`)."""
    if rows.shape[0] == 1:
        return lax.dynamic_update_slice_in_dim(
            buffer, values, lax.index_in_dim(rows, 0, keepdims=False), axis=0)
    return buffer.at[rows].set(values)


def _scatter(sig, buffers, class_index, outputs_rows, outs):
    """Write by adding into zero rows (booleans and ints by setting)."""
    for j, (c, out) in enumerate(zip(sig.out_classes, outs, strict=True)):
        i = class_index[c]
        out = out.astype(buffers[i].dtype)
        if jnp.issubdtype(out.dtype, jnp.inexact):
            buffers[i] = _add_at(buffers[i], outputs_rows[j], out)
        else:       # no gradient to keep cheap; booleans do not add
            buffers[i] = _set_at(buffers[i], outputs_rows[j], out)
    return buffers


def _write(sig, buffers, class_index, starts, outs):
    """Each output ``j`` into the rows from ``starts[j]`` on (still zero: see :func:`_put`)."""
    for j, (c, out) in enumerate(zip(sig.out_classes, outs, strict=True)):
        i = class_index[c]
        out = out.astype(buffers[i].dtype)
        if jnp.issubdtype(out.dtype, jnp.inexact):
            buffers[i] = _put(buffers[i], out, starts[j])
        else:       # no gradient
            buffers[i] = lax.dynamic_update_slice_in_dim(buffers[i], out, starts[j], axis=0)
    return buffers


@jax.custom_vjp
def _put(buffer, rows, start):
    """``buffer`` with ``rows`` added into its rows from ``start`` on, which are zero:
    written as a slice (``dynamic_update_slice``, in place), its backward pass the
    slice of the cotangent (an add's), not the zeroing of those rows an overwrite's
    transpose does."""
    return lax.dynamic_update_slice_in_dim(buffer, rows, start, axis=0)


def _put_forward(buffer, rows, start):
    return _put(buffer, rows, start), (start, rows.shape[0])


def _put_backward(saved, ct):
    start, n = saved
    return ct, lax.dynamic_slice_in_dim(ct, start, n, axis=0), None


_put.defvjp(_put_forward, _put_backward)


def execute(params, arrays, layout):
    """The roots of a planned batch (``layout`` static: one trace per layout)."""
    if layout.counter is not None:
        layout.counter()
    rows = layout.rows
    class_index = rows.class_index
    buffers = [jnp.zeros((r, *shape), np.dtype(dtype))
               for r, (shape, dtype) in zip(rows.total, layout.classes, strict=True)]
    leaf_sizes = layout.sizes[len(layout.classes):]
    for sig, leaf, n, starts in zip(layout.leaf_sigs, arrays["leaf"], leaf_sizes,
                                    rows.leaf_starts, strict=True):
        outs = _compute(sig, params, [], leaf["data"], n)
        buffers = _write(sig, buffers, class_index, starts, outs)
    sigs = layout.inner_sigs
    if len(sigs) == 1:
        step = partial(_one_signature, params, class_index, sigs[0])
        firsts = rows.starts[sigs[0]]
    else:
        step = partial(_switched, params, class_index, sigs)
        firsts = arrays["steps"]["sig"]
    first_step = first_slot = 0
    for K, count in layout.runs():
        slots = slice(first_slot, first_slot + K * count)
        chunks = (firsts[first_step:first_step + count],
                  [_run_part(part, slots, count, K) for part in arrays["steps"]["per_sig"]])
        first_step, first_slot = first_step + count, slots.stop
        if count == 1:          # a step of its own: unrolled, as a level written by hand
            buffers, _ = step(buffers, tree_util.tree_map(lambda x: x[0], chunks))
        elif len(sigs) == 1 and _differentiable(sigs[0]):
            buffers = _scan_run(sigs[0], class_index, params, buffers, chunks)
        else:
            buffers, _ = lax.scan(step, buffers, chunks)
    roots = [_take(buffers[class_index[c]], arrays["roots"][:, j])
             for j, c in enumerate(layout.root_classes)]
    return tree_util.tree_unflatten(layout.root_treedef, roots)


def _run_part(part, slots, count, K):
    """A signature's arrays for a run of ``count`` steps of ``K`` slots, step first:
    data ``(count, K, ...)``, row indices ``(count, values, K)`` (the plan's are
    ``(values, slots)``)."""
    out = {"data": [d[slots].reshape(count, K, *d.shape[1:]) for d in part["data"]]}
    for name in ("inputs", "outputs"):
        if name in part:
            rows = part[name][:, slots]
            out[name] = rows.reshape(rows.shape[0], count, K).transpose(1, 0, 2)
    return out


def _one_signature(params, class_index, sig, buffers, chunk):
    """A step of the only inner signature, its outputs written as slices from the
    step's first rows: computed whatever its slots hold (a padded slot repeats a
    node computed earlier and writes a row nothing reads)."""
    starts, (part,) = chunk
    values = _gather(sig, buffers, class_index, part["inputs"])
    outs = _compute(sig, params, values, list(part["data"]), part["inputs"].shape[1])
    return _write(sig, list(buffers), class_index, starts, outs), None


def _differentiable(sig):
    return all(jnp.issubdtype(np.dtype(dtype), jnp.inexact)
               for _, dtype in sig.in_classes + sig.out_classes)


def _scan_run(sig, class_index, params, buffers, chunks):
    """A run of steps of the only inner signature, as a ``scan`` whose backward
    pass is written here: a reverse scan carries the buffers' cotangent and each
    step adds its inputs' cotangent into it, in place; the parameters' cotangent
    is one vjp over every step's rows at the end. (Differentiated by JAX, the
    scan adds a parameter-sized cotangent into its carry every step: for a
    chain's narrow steps that add costs more than the step.) Each step keeps its
    gathered inputs for the backward pass, which recomputes the callee."""
    starts, (part,) = chunks
    count, _, K = part["inputs"].shape

    def apply(params, values, data, n):
        outs = _compute(sig, params, values, data, n)
        return [o.astype(np.dtype(dtype)) for o, (_, dtype) in zip(outs, sig.out_classes,
                                                                     strict=True)]

    def forward(params, buffers, part, keep):
        def body(buffers, step):
            step_starts, step = step
            values = _gather(sig, buffers, class_index, step["inputs"])
            outs = apply(params, values, list(step["data"]), K)
            buffers = _write(sig, list(buffers), class_index, step_starts, outs)
            return buffers, values if keep else None
        return lax.scan(body, list(buffers), (starts, part))

    @jax.custom_vjp
    def run(params, buffers, part):
        return forward(params, buffers, part, False)[0]

    def run_forward(params, buffers, part):
        buffers, values = forward(params, buffers, part, True)
        return buffers, (params, values, part)

    def run_backward(saved, ct):
        params, values, part = saved

        def body(ct, step):
            step_values, step_starts, step_part = step
            # gathered by index: a dynamic slice of the carried cotangent here made
            # XLA CPU copy the whole buffer every step (a chain's gradient 3-5x)
            ct_outs = [_take(ct[class_index[c]], step_starts[j] + jnp.arange(K))
                       for j, c in enumerate(sig.out_classes)]
            _, vjp = jax.vjp(lambda v: apply(params, v, list(step_part["data"]), K),
                             step_values)
            (ct_values,) = vjp(ct_outs)
            ct = list(ct)
            for j, c in enumerate(sig.in_classes):
                i = class_index[c]
                ct[i] = _add_at(ct[i], step_part["inputs"][j], ct_values[j])
            return ct, ct_outs

        ct, ct_outs = lax.scan(body, list(ct), (values, starts, part), reverse=True)
        rows = partial(tree_util.tree_map, lambda x: x.reshape(count * K, *x.shape[2:]))
        _, vjp = jax.vjp(lambda p: apply(p, rows(values), rows(list(part["data"])),
                                         count * K), params)
        (ct_params,) = vjp(rows(ct_outs))
        return ct_params, ct, None

    run.defvjp(run_forward, run_backward)
    return run(params, list(buffers), part)


def _switched(params, class_index, sigs, buffers, chunk):
    """A step of one of several signatures (a scalar per step): the inputs of every
    signature gathered, then ``lax.switch`` runs only the step's callee on its rows;
    the last branch computes nothing (a step left empty)."""
    sig_index, per_sig = chunk
    gathered = [(_gather(sig, buffers, class_index, part["inputs"]), list(part["data"]))
                for sig, part in zip(sigs, per_sig, strict=True)]
    sizes = [part["outputs"].shape[1] for part in per_sig]

    def branch(s, gathered):
        outs = []
        for t, sig in enumerate(sigs):
            if t == s:
                outs.append(_compute(sig, params, *gathered[t], sizes[t]))
            else:
                outs.append(_zeros(sig, sizes[t]))
        return outs

    branches = [partial(branch, s) for s in range(len(sigs))]
    branches.append(partial(branch, None))
    outs = _recomputed(lambda i, g: lax.switch(i, branches, g))(sig_index, gathered)
    buffers = list(buffers)
    for sig, part, out in zip(sigs, per_sig, outs, strict=True):
        buffers = _scatter(sig, buffers, class_index, part["outputs"], out)
    return buffers, None


def _recomputed(fn):
    """``fn`` whose intermediates the backward pass recomputes from its inputs.

    The scan then keeps only each step's gathered rows for the backward pass. Saved
    from inside the switch, the callee's intermediates would be stacked over every
    step, padding included, and the parameters with them (a switch's outputs are
    not recognised as the same every step)."""
    return jax.checkpoint(fn, prevent_cse=False)


def _zeros(sig, n):
    return [jnp.zeros((n, *shape), np.dtype(dtype)) for shape, dtype in sig.out_classes]


run = jax.jit(execute, static_argnames="layout")
