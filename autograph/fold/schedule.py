"""The schedule of a batch: its trees' recordings merged, cut into padded chunks.

Every node gets a depth, its *height* (leaves and other nodes computed from
parameters and data alone: 0; otherwise 1 + the largest height of its inputs),
so a node's inputs are always ready when its height comes. Nodes of height 0
are computed all at once, per signature. The others are grouped by (height,
signature) and each group cut into chunks of a capacity ``K``: the executor
runs one chunk per step of a ``scan``, in height order. Levels are not padded
to the widest level (which would compute several times the real rows); only
the last chunk of each group is partly padding. One phase (a scan) per
capacity of a geometric grid (by default 256, 64, 16, 4 rows): each height
goes to the capacity that computes it cheapest, counting a step's overhead as
``step_cost`` rows, and never to a larger capacity than a lower height's (the
phases run one after the other). Wide bottom levels run in large chunks, the
narrow top of a tall tree (a chain) in small ones. The scans' lengths are
sizes too; their padding chunks are skipped (``lax.switch`` to a no-op).

A padded slot repeats a real node of its chunk and writes to the class's dump
row (the last row, never read): its gradient is then exactly zero, never
``0 * nan``.

Sizes are rounded up to a geometric grid (:func:`bucket`), and a batch reuses
an executor already compiled for sizes at least its own (rows and leaves not
more than about twice them): where its levels need more chunks of a scan than
the layout has, heights move to a neighbouring phase (:func:`fit_phases`), so a
random batch compiles a new executor only when it outgrows every layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from jax import tree_util

from autograph.errors import ConversionError

# Sizes are rounded to the grid ceil(2 ** (k / 4)), with this much headroom.
GRID_STEPS_PER_DOUBLING = 4
HEADROOM = 1.25
MIN_CHUNKS = 4
SLACK_ROWS = 64


def bucket(n: int | float) -> int:
    """The smallest size of the geometric grid at least ``n`` (0 stays 0)."""
    if n <= 0:
        return 0
    k = math.ceil(GRID_STEPS_PER_DOUBLING * math.log2(n) - 1e-9)
    size = math.ceil(2 ** (k / GRID_STEPS_PER_DOUBLING))
    return size if size >= n else math.ceil(n)


@dataclass(frozen=True, eq=False)
class Layout:
    """What one compiled executor is specialised to (static under ``jit``)."""

    registry: object
    classes: tuple            # (shape, dtype name) of each buffer
    leaf_sigs: tuple          # signatures of height-0 nodes
    inner_sigs: tuple         # the others
    capacities: tuple         # chunk capacity of each phase
    n_trees: int
    root_treedef: object
    root_classes: tuple
    sizes: tuple              # rows per class, leaves per leaf signature, chunks per phase
    counter: object = field(default=None, compare=False)

    def _key(self):
        return (id(self.registry), self.classes, self.leaf_sigs, self.inner_sigs,
                self.capacities, self.n_trees, self.root_treedef, self.root_classes,
                self.sizes)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def shape_key(self):
        """Everything but the sizes: layouts with equal shape keys share buckets."""
        return self._key()[:-1]


class Plan:
    """A batch's schedule: int (and data) arrays, a pytree whose static part is the
    :class:`Layout`. Pass it through ``jax.jit`` as an argument."""

    def __init__(self, arrays, layout: Layout):
        self.arrays = arrays
        self.layout = layout

    def __repr__(self):
        sizes = self.layout.sizes
        return (f"<fold plan: {self.layout.n_trees} trees, sizes {sizes}, "
                f"chunk capacities {self.layout.capacities}>")


tree_util.register_pytree_node(
    Plan, lambda plan: ((plan.arrays,), plan.layout),
    lambda layout, children: Plan(children[0], layout))


def merge(recordings):
    """One batch's nodes: the trees' recordings concatenated, rows offset per class."""
    first = recordings[0]
    for rec in recordings:
        if rec.root_treedef != first.root_treedef or [c for c, _ in rec.roots] != [
                c for c, _ in first.roots]:
            raise ConversionError(
                "autograph.fold: the trees of a batch return different structures "
                f"({first.root_treedef} and {rec.root_treedef}); their results are stacked")
    classes = list(dict.fromkeys(c for rec in recordings for c in rec.counts))
    column = {c: i for i, c in enumerate(classes)}
    counts = np.zeros((len(recordings), len(classes)), np.int64)
    for r, rec in enumerate(recordings):
        for cls, n in rec.counts.items():
            counts[r, column[cls]] = n
    # offsets[r, c]: the rows of class c that the trees before tree r take
    offsets = np.cumsum(counts, axis=0) - counts
    totals = dict(zip(classes, counts.sum(axis=0).tolist(), strict=True))
    parts: dict = {}
    for r, rec in enumerate(recordings):
        for sig, group in rec.groups.items():
            parts.setdefault(sig, []).append((r, group))
    merged = {}
    for sig, sig_parts in parts.items():
        which = np.repeat(np.asarray([r for r, _ in sig_parts]),
                          [len(g[0]) for _, g in sig_parts])
        in_off = offsets[which][:, [column[c] for c in sig.in_classes]]
        out_off = offsets[which][:, [column[c] for c in sig.out_classes]]
        groups = [g for _, g in sig_parts]
        merged[sig] = (np.concatenate([g[0] for g in groups]),
                       (np.concatenate([g[1] for g in groups]) + in_off).astype(np.int32),
                       (np.concatenate([g[2] for g in groups]) + out_off).astype(np.int32),
                       [np.concatenate([g[3][j] for g in groups])
                        for j in range(len(sig.data_avals))])
    root_cols = [column[c] for c, _ in first.roots]
    roots = (np.asarray([[idx for _, idx in rec.roots] for rec in recordings], np.int64)
             .reshape(len(recordings), len(first.roots)) + offsets[:, root_cols])
    return (merged, totals, roots.astype(np.int32), first.root_treedef,
            tuple(c for c, _ in first.roots))


def _groups(heights_by_sig):
    """Groups (height, sig index, node indices) in execution order."""
    groups = []
    for s, heights in enumerate(heights_by_sig):
        order = np.argsort(heights, kind="stable")
        values, starts, counts = np.unique(heights[order], return_index=True,
                                           return_counts=True)
        for h, start, count in zip(values.tolist(), starts.tolist(), counts.tolist(),
                                   strict=True):
            groups.append((h, s, order[start:start + count]))
    groups.sort(key=lambda g: (g[0], g[1]))
    return groups


def _chunks_per_height(groups, capacities):
    """The heights in order, and the chunks each needs at each capacity."""
    heights, chunks = [], []
    for h, _, nodes in groups:
        if not heights or heights[-1] != h:
            heights.append(h)
            chunks.append([0] * len(capacities))
        for k, c in enumerate(capacities):
            chunks[-1][k] += -(-len(nodes) // c)
    return heights, chunks


def _cheapest_phases(chunks, capacities, step_cost):
    """Each height's phase: the capacity that computes it cheapest, counting
    ``step_cost`` rows of overhead per chunk, never a larger one than a lower
    height's (the phases run one after the other)."""
    phases, phase = [], 0
    for per_capacity in chunks:
        costs = [n * (c + step_cost) for n, c in zip(per_capacity, capacities, strict=True)]
        phase = max(phase, costs.index(min(costs)))
        phases.append(phase)
    return phases


def fit_phases(chunks, preferred, limits):
    """Phases for the heights that keep each phase within ``limits[k]`` chunks, as
    close to ``preferred`` (the cheapest) as that allows; None if they do not fit.

    A batch whose levels are a little wider or taller than the batch a layout was
    made for moves a few heights to a neighbouring phase instead of compiling a
    new layout. ``tail[k]``: the lowest height from which all heights fit in
    phases k and later (filled from the top); a height moves on to phase k only
    from there."""
    n_phases, m = len(limits), len(chunks)
    tail = [m] * (n_phases + 1)
    i = m
    for k in reversed(range(n_phases)):
        used = 0
        while i > 0 and used + chunks[i - 1][k] <= limits[k]:
            i -= 1
            used += chunks[i][k]
        tail[k] = i
    if tail[0] > 0:
        return None
    phases, k, used = [], 0, 0
    for i, per_capacity in enumerate(chunks):
        while k < preferred[i] and i >= tail[k + 1]:
            k, used = k + 1, 0
        while used + per_capacity[k] > limits[k]:
            if k + 1 == n_phases or i < tail[k + 1]:
                return None
            k, used = k + 1, 0
        used += per_capacity[k]
        phases.append(k)
    return phases


def _chunk_counts(chunks, phases, n_phases):
    counts = [0] * n_phases
    for per_capacity, k in zip(chunks, phases, strict=True):
        counts[k] += per_capacity[k]
    return counts


def schedule(recordings, registry, capacities, step_cost, choose_sizes, counter=None):
    """The :class:`Plan` of a batch of recordings."""
    merged, totals, roots, root_treedef, root_classes = merge(recordings)
    classes = tuple(sorted(totals, key=repr))
    class_index = {c: i for i, c in enumerate(classes)}
    sigs = sorted(merged, key=lambda s: s.number)
    leaf_sigs = tuple(s for s in sigs if not s.in_classes)
    inner_sigs = tuple(s for s in sigs if s.in_classes)
    groups = _groups([merged[s][0] for s in inner_sigs])
    heights, chunks = _chunks_per_height(groups, capacities)
    cheapest = _cheapest_phases(chunks, capacities, step_cost)
    n_phases = len(capacities)
    need = (tuple(totals[c] + 1 for c in classes)
            + tuple(len(merged[s][0]) for s in leaf_sigs)
            + tuple(max(n, MIN_CHUNKS) for n in _chunk_counts(chunks, cheapest, n_phases)))
    # Short scans vary most from batch to batch (the tallest tree's height); spare
    # steps of a small capacity are cheap: give each scan SLACK_ROWS rows to spare.
    slack = (0,) * (len(need) - n_phases) + tuple(SLACK_ROWS // k for k in capacities)
    shape = Layout(registry, classes, leaf_sigs, inner_sigs, capacities, len(recordings),
                   root_treedef, root_classes, ())
    fitted = {}

    def fits(sizes):
        fitted[sizes] = fit_phases(chunks, cheapest, sizes[-n_phases:])
        return fitted[sizes] is not None

    sizes = choose_sizes(shape.shape_key(), need, slack, n_phases, fits)
    phase_of_height = dict(zip(heights, fitted.get(sizes) or cheapest, strict=True))
    phases = [phase_of_height[h] for h, _, _ in groups]
    layout = Layout(registry, classes, leaf_sigs, inner_sigs, capacities, len(recordings),
                    root_treedef, root_classes, sizes, counter)
    n_classes, n_leaf = len(classes), len(leaf_sigs)
    rows = sizes[:n_classes]
    dump = [r - 1 for r in rows]

    def out_dump(sig):
        return np.asarray([dump[class_index[c]] for c in sig.out_classes], np.int32)

    leaf_arrays = []
    for sig, cap in zip(leaf_sigs, sizes[n_classes:n_classes + n_leaf], strict=True):
        _, _, outputs, data = merged[sig]
        n = len(outputs)
        take = np.zeros(cap, np.int64)
        take[:n] = np.arange(n)
        outs = outputs[take]
        outs[n:] = out_dump(sig)
        leaf_arrays.append({"outputs": outs, "data": [d[take] for d in data]})

    phase_arrays = []
    for phase, (K, C) in enumerate(zip(capacities, sizes[n_classes + n_leaf:], strict=True)):
        chunk_sig = np.full(C, len(inner_sigs), np.int32)     # past the last: skipped
        takes = [np.zeros((C, K), np.int64) for _ in inner_sigs]
        real = [np.zeros((C, K), bool) for _ in inner_sigs]
        c = 0
        for (_, s, nodes), group_phase in zip(groups, phases, strict=True):
            if group_phase != phase:
                continue
            for start in range(0, len(nodes), K):
                part = nodes[start:start + K]
                chunk_sig[c] = s
                takes[s][c, :] = part[0]
                takes[s][c, :len(part)] = part
                real[s][c, :len(part)] = True
                c += 1
        per_sig = []
        for s, sig in enumerate(inner_sigs):
            _, inputs, outputs, data = merged[sig]
            take = takes[s]
            outs = outputs[take]
            outs[~real[s]] = out_dump(sig)
            per_sig.append({"inputs": inputs[take], "outputs": outs,
                            "data": [d[take] for d in data]})
        phase_arrays.append({"sig": chunk_sig, "per_sig": per_sig})
    arrays = {"leaf": leaf_arrays, "phases": phase_arrays, "roots": roots}
    return Plan(arrays, layout)


class SizeChooser:
    """The sizes of the executors issued so far, per layout shape.

    A batch reuses the smallest issued sizes that fit it: rows and leaves at
    least its own and not more than about twice them, and its heights placed in
    the scans' chunks (``fits``, which may move a height to a neighbouring phase).
    Otherwise it gets new sizes: its needs with headroom, rounded up to the grid,
    and at least every size issued before (so the newest layout fits every batch
    seen so far, and a new compile happens only when some size sets a record).
    The last ``n_flexible`` sizes are the scans' chunk counts, checked by ``fits``."""

    def __init__(self):
        self.issued: dict = {}

    def __call__(self, shape_key, need, slack=None, n_flexible=0, fits=None):
        issued = self.issued.setdefault(shape_key, [])
        slack = slack or (0,) * len(need)
        fixed = len(need) - n_flexible if fits is not None else len(need)

        def reusable(sizes):
            if not all(n <= s <= 2 * n + 16 + extra for n, s, extra in
                       zip(need[:fixed], sizes[:fixed], slack, strict=False)):
                return False
            return fits is None or fits(sizes)

        for sizes in sorted(issued, key=sum):
            if reusable(sizes):
                return sizes
        sizes = tuple(bucket(n * HEADROOM + extra) for n, extra in zip(need, slack, strict=True))
        for previous in issued:
            sizes = tuple(max(a, b) for a, b in zip(sizes, previous, strict=True))
        if sizes not in issued:
            issued.append(sizes)
        if fits is not None:
            fits(sizes)
        return sizes
