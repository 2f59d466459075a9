"""A batch's recordings from one recorder: its flat tables cut into per-tree ones.

The fast recorder (``recording_fast``) records every new tree of a batch in one
pass: its call sites are bound once per batch, not once per tree, and its tables
grow across the trees (one flat row list per signature, one row counter per
buffer class). Only the memo and the common-subexpression table start afresh
with each tree, so each tree's nodes are exactly those of a recording of its
own. ``split`` then makes the per-tree :class:`Recording`\\ s the plan merges and
the fold caches, with numpy over the whole batch: one array per signature, the
rows made local to their tree by subtracting, per column, the rows of its class
that the earlier trees took, and each tree's part a slice of it.

    recorder tables (rows numbered across the batch)       per tree
    cell: [h, l, r, o, ...]  trees' nodes 0..n0, n0..n1  -> rows[n0:n1] - offsets[tree 1]
"""

from __future__ import annotations

import numpy as np

from autograph.fold.recording import Recording, _column


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
    offsets = np.cumsum(class_counts, axis=0) - class_counts
    arrays = []
    for s, sig in enumerate(sigs):
        nodes = recorder.nodes[sig]
        n = int(bounds[-1, s])
        rows = np.fromiter(nodes.rows, np.int32, n * sig.width).reshape(n, sig.width)
        if n_trees > 1 and n:
            columns = [column[cls] for cls in sig.in_classes + sig.out_classes]
            rows[:, 1:] -= np.repeat(offsets[:, columns].astype(np.int32), per_tree[:, s],
                                     axis=0)
        k = len(sig.data_avals)     # the data of each node, flat: k numbers per node
        data = [_column(nodes.data if k == 1 else nodes.data[j::k], aval, n)
                for j, aval in enumerate(sig.data_avals)]
        arrays.append((rows, data))
    recordings = []
    count_lists, offset_lists, bound_lists = class_counts.tolist(), offsets.tolist(), \
        bounds.tolist()
    class_index = registry.class_index      # the trees' count vectors, made at once
    for cls in classes:
        class_index.setdefault(cls, len(class_index))
    vectors = np.zeros((n_trees, len(class_index)), np.int64)
    vectors[:, [class_index[cls] for cls in classes]] = class_counts
    for t in range(n_trees):
        packed = {}
        for s, sig in enumerate(sigs):
            a, b = bound_lists[t][s], bound_lists[t + 1][s]
            if b > a:
                rows, data = arrays[s]
                packed[sig] = (rows[a:b], [d[a:b] for d in data])
        counts = {cls: n for cls, n in zip(classes, count_lists[t], strict=True) if n}
        tree_roots, treedef = roots[t]
        local = [(cls, idx - offset_lists[t][column[cls]]) for cls, idx in tree_roots]
        recordings.append(Recording(packed, counts, local, treedef, class_index,
                                    registry.root_keys, vectors[t]))
    return recordings
