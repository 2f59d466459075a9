"""A batch's recordings from one recorder: its flat tables, kept whole for the
batch's plan and cut into per-tree recordings only when one is used alone.

The fast recorder (``recording_fast``) records every new tree of a batch in one
pass: its call sites are bound once per batch, not once per tree, and its tables
grow across the trees (one flat row list per signature, one row counter per
buffer class). Only the memo and the subexpression table start afresh with each
tree, so each tree's nodes are exactly those of a recording of its own, and the
tables, rows numbered across the batch, are already what ``schedule.merge`` makes
of the trees' recordings in that order. ``split`` makes them a :class:`Batch`
(one array per signature) and one :class:`BatchRecording` per tree: its counts and
roots made local at once, its nodes (``columns``) only when read, a slice of the
batch's arrays with the rows the earlier trees took subtracted per class. A plan
of exactly the batch's trees in order (``merge`` of a fresh batch) takes the
batch's arrays as they are (:meth:`Batch.merged`); the per-tree cache keeps the
recordings, and a later batch that mixes them with others merges their slices.

    recorder tables (rows numbered across the batch)       per tree (when read)
    cell: [h, l, r, o, ...]  trees' nodes 0..n0, n0..n1  -> rows[n0:n1] - offsets[tree 1]
"""

from __future__ import annotations

import functools

import numpy as np

from autograph.fold.recording import Recording, _column, numbers

_INT32 = np.dtype(np.int32)


class Batch:
    """The nodes of a batch's trees, numbered across the batch: ``arrays[s]`` the
    ``(columns (width, n), [data per argument])`` of signature ``sigs[s]`` (column-major,
    as ``schedule.merge`` has them),
    ``bounds[t][s]`` its nodes before tree ``t``, ``class_counts[t, k]`` the rows of
    class ``classes[k]`` in tree ``t`` and ``offsets[t, k]`` before it, ``vectors[t]``
    tree ``t``'s rows per class by ``class_index`` (the registry's numbers),
    ``roots[t]`` tree ``t``'s root rows (a list: the trees' results may differ in
    structure, which ``merge`` refuses)."""

    def __init__(self, sigs, arrays, bounds, classes, class_counts, class_index, totals,
                 roots):
        self.sigs = sigs
        self.arrays = arrays
        self.bounds = bounds
        self.classes = classes
        self.column = {cls: k for k, cls in enumerate(classes)}
        self.class_counts = class_counts
        self.offsets = np.cumsum(class_counts, axis=0) - class_counts
        self.class_index = class_index
        self.vectors = np.zeros((len(class_counts), len(class_index)), np.int64)
        self.vectors[:, [class_index[cls] for cls in classes]] = class_counts
        self.totals = totals
        self.roots = roots

    def columns(self, t):
        """Tree ``t``'s nodes per signature, rows local to the tree, column-major (a
        :attr:`Recording.columns`)."""
        columns = {}
        lower, upper = self.bounds[t], self.bounds[t + 1]
        for s, sig in enumerate(self.sigs):
            a, b = lower[s], upper[s]
            if b > a:
                rows, data = self.arrays[s]
                which = [self.column[cls] for cls in sig.in_classes + sig.out_classes]
                local = rows[:, a:b].copy()
                local[1:] -= self.offsets[t, which].astype(np.int32)[:, None]
                columns[sig] = (local, [d[a:b] for d in data])
        return columns

    @functools.cached_property
    def merged(self):
        """``schedule.merge``'s nodes of all the batch's trees in order, from the
        batch's arrays (views, made once: a plan only reads them): per signature
        (heights, inputs (values in, n), outputs (values out, n), data); the rows
        per class; the roots numbered across the batch."""
        merged = {}
        for sig, (columns, data) in zip(self.sigs, self.arrays, strict=True):
            if columns.shape[1]:
                n_in = len(sig.in_classes)
                merged[sig] = (columns[0], columns[1:1 + n_in], columns[1 + n_in:], data)
        roots = np.array(self.roots, np.int32).reshape(len(self.roots), -1)
        return merged, self.totals, roots


class BatchRecording(Recording):
    """Tree ``index`` of ``batch``: a :class:`Recording` whose nodes, counts and
    roots are cut from the batch's arrays when first read (a fresh batch's plan
    reads none of them: ``schedule.merge`` takes the batch's arrays whole)."""

    def __init__(self, batch, index, root_key):
        self.batch = batch
        self.index = index
        self.class_index = batch.class_index
        self.root_key = root_key        # interned (root_treedef, root_classes)
        self.root_treedef, self.root_classes = root_key

    @functools.cached_property
    def columns(self):
        """Its nodes per signature, rows local to the tree, column-major."""
        return self.batch.columns(self.index)

    @functools.cached_property
    def packed(self):
        """Its nodes per signature, rows local to the tree."""
        return {sig: (rows.T.copy(), data) for sig, (rows, data) in self.columns.items()}

    @functools.cached_property
    def counts(self):
        """Its rows per buffer class."""
        batch = self.batch
        return {cls: n for cls, n in zip(batch.classes, batch.class_counts[self.index].tolist(),
                                         strict=True) if n}

    @functools.cached_property
    def count_vector(self):
        """Its rows per class, by the registry's class numbers."""
        return self.batch.vectors[self.index]

    @functools.cached_property
    def roots(self):
        """The (class, row) of each leaf of its result, rows local to the tree."""
        batch, t = self.batch, self.index
        offsets = batch.offsets[t].tolist()
        return [(cls, idx - offsets[batch.column[cls]])
                for cls, idx in zip(self.root_classes, batch.roots[t], strict=True)]

    @functools.cached_property
    def root_rows(self):
        return tuple(idx for _, idx in self.roots)


def split(recorder, starts, ends, roots) -> list[Recording]:
    """The per-tree recordings of the trees ``recorder`` recorded: ``starts[t]`` and
    ``ends`` map a signature to its number of nodes when tree ``t`` began and when
    the last ended (a signature missing had none yet); ``roots[t]`` is tree ``t``'s
    ``(roots, treedef)`` with rows numbered across the batch."""
    registry = recorder.registry
    sigs = sorted(recorder.nodes, key=lambda sig: sig.number)
    n_trees = len(starts)
    if not n_trees:
        return []
    bounds = np.array([[start.get(sig, 0) for sig in sigs] for start in starts]
                      + [[ends.get(sig, 0) for sig in sigs]], np.int64).reshape(
                          n_trees + 1, len(sigs))
    per_tree = np.diff(bounds, axis=0)                      # (trees, signatures) nodes
    classes = list(recorder.counters)                       # in the order of first use
    column = {cls: i for i, cls in enumerate(classes)}
    outputs = np.zeros((len(sigs), len(classes)), np.int64)
    for s, sig in enumerate(sigs):
        for cls in sig.out_classes:
            outputs[s, column[cls]] += 1
    class_counts = per_tree @ outputs                       # (trees, classes) rows
    arrays = []
    for sig, n in zip(sigs, bounds[-1].tolist(), strict=True):
        nodes = recorder.nodes[sig]
        # column-major from here on (see schedule.merge)
        rows = numbers(nodes.rows, _INT32, n * sig.width).reshape(n, sig.width).T.copy()
        k = len(sig.data_avals)     # the data of each node, flat: k numbers per node
        data = [_column(nodes.data if k == 1 else nodes.data[j::k], aval, n)
                for j, aval in enumerate(sig.data_avals)]
        arrays.append((rows, data))
    class_index = registry.class_index
    for cls in classes:
        class_index.setdefault(cls, len(class_index))
    total = class_counts.sum(axis=0).tolist()
    totals = {cls: n for cls, n in sorted(zip(classes, total, strict=True),
                                          key=lambda item: class_index[item[0]]) if n}
    root_rows = [[idx for _, idx in tree_roots] for tree_roots, _ in roots]
    batch = Batch(sigs, arrays, bounds.tolist(), classes, class_counts, class_index, totals,
                  root_rows)
    root_keys = registry.root_keys      # interned: merge tests them with `is`
    recordings = []
    for t, (tree_roots, treedef) in enumerate(roots):
        key = (treedef, tuple(cls for cls, _ in tree_roots))
        recordings.append(BatchRecording(batch, t, root_keys.setdefault(key, key)))
    return recordings
