"""The executor: one compiled program per :class:`~autograph.fold.schedule.Layout`.

    buffers[c]    zeros (rows, *shape) per class of value (shape, dtype)
    leaves        per height-0 signature: the callee vmapped over all its nodes at
                  once, outputs scattered into their rows
    each phase    a scan over chunks: gather the chunk's inputs from the buffers,
                  the callee vmapped over the chunk, scatter its outputs
    roots         gathered from their rows, stacked over the trees

Outputs are written by *adding* into rows that are still zero: an ``.at[].set``
would make the backward pass of each step copy the whole buffer (its transpose
must zero the overwritten rows of the cotangent), where ``.add`` transposes to a
plain gather. Each step picks its chunk's signature with ``lax.switch`` (a
scalar per step, not batched, so only one branch runs); the last branch does
nothing, for the padding chunks that fill a scan up to its size.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util


def _run_signature(sig, params, buffers, class_index, values_rows, data, outputs_rows):
    """Gather, compute (vmapped over the leading axis), scatter by adding."""
    values = [buffers[class_index[c]][values_rows[:, j]]
              for j, c in enumerate(sig.in_classes)]
    if values or data:
        outs = jax.vmap(partial(sig.apply, params))(values, list(data))
    else:                       # computed from the parameters alone: once, then repeated
        n = outputs_rows.shape[0]
        outs = [jnp.broadcast_to(o, (n, *o.shape)) for o in sig.apply(params, [], [])]
    buffers = list(buffers)
    for j, (c, out) in enumerate(zip(sig.out_classes, outs, strict=True)):
        i = class_index[c]
        out = out.astype(buffers[i].dtype)
        if jnp.issubdtype(out.dtype, jnp.inexact):
            buffers[i] = buffers[i].at[outputs_rows[:, j]].add(out)
        else:       # no gradient to keep cheap; booleans do not add
            buffers[i] = buffers[i].at[outputs_rows[:, j]].set(out)
    return buffers


def execute(params, arrays, layout):
    """The roots of a planned batch (``layout`` static: one trace per layout)."""
    if layout.counter is not None:
        layout.counter()
    class_index = {c: i for i, c in enumerate(layout.classes)}
    rows = layout.sizes[:len(layout.classes)]
    buffers = [jnp.zeros((r, *shape), np.dtype(dtype))
               for r, (shape, dtype) in zip(rows, layout.classes, strict=True)]
    for sig, leaf in zip(layout.leaf_sigs, arrays["leaf"], strict=True):
        empty = np.zeros((leaf["outputs"].shape[0], 0), np.int32)
        buffers = _run_signature(sig, params, buffers, class_index, empty, leaf["data"],
                                 leaf["outputs"])
    if layout.inner_sigs:
        for phase in arrays["phases"]:
            buffers = _scan_chunks(params, buffers, class_index, layout.inner_sigs, phase)
    roots = [buffers[class_index[c]][arrays["roots"][:, j]]
             for j, c in enumerate(layout.root_classes)]
    return tree_util.tree_unflatten(layout.root_treedef, roots)


def _scan_chunks(params, buffers, class_index, sigs, phase):
    def run_chunk(s, buffers, per_sig):
        part = per_sig[s]
        return _run_signature(sigs[s], params, buffers, class_index, part["inputs"],
                              part["data"], part["outputs"])

    def step(buffers, chunk):
        sig_index, per_sig = chunk
        if len(sigs) == 1 and not SKIP_PADDING:
            return run_chunk(0, buffers, per_sig), None
        branches = [partial(run_chunk, s) for s in range(len(sigs))]
        return lax.switch(sig_index, [*branches, _skip], buffers, per_sig), None

    buffers, _ = lax.scan(step, buffers, (phase["sig"], phase["per_sig"]))
    return buffers


SKIP_PADDING = False


def _skip(buffers, per_sig):
    """A padding chunk past the batch's last: nothing to compute."""
    return list(buffers)


run = jax.jit(execute, static_argnames="layout")
