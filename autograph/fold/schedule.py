"""The schedule of a batch: its trees' recordings merged and placed into steps.

Every node gets a depth, its *height* (leaves and other nodes computed from
parameters and data alone: 0; otherwise 1 + the largest height of its inputs).
Nodes of height 0 are computed all at once, per signature. The others run in a
sequence of *steps*: a step computes up to its capacity ``K`` nodes of one
signature at once (gather, the callee vmapped, scatter). A node goes into the
first step after its inputs' steps that has room (list scheduling, in height
order): a level wider than its step spills its last nodes into the next step,
beside the next level's nodes whose inputs are ready, instead of costing a step
of its own.

A batch's own steps are sized to its levels: one step per (height, signature),
its capacity the level's width rounded up to a fine geometric grid
(:func:`bucket`), so the computed rows are close to the real ones (no padding
to the widest level, no fixed chunk size cutting a level into many steps), then
a few spare steps of the narrowest capacity. Consecutive steps of one capacity
run as one ``scan``; the others are single steps (unrolled), like a depth-batched
program written by hand.

Planning is array work over the whole batch, not Python per node: the trees'
recordings are concatenated per signature with their row offsets (:func:`merge`),
column-major (one contiguous row of indices per input and output: NumPy's loops
run along the last axis, which for a block of nodes by a few columns is the
short one), with stable sorts of small ints done as 16-bit radix sorts,
and a layout whose first batch was placed by levels (each (height, signature) in
one step of its own) places a later batch whose levels fit by a table lookup
(:func:`level_map`, :func:`place_by_levels`); list scheduling runs only when a
level spills.

The buffers' rows are allotted by the layout (:class:`Rows`), not by the
recordings: each leaf signature's outputs, then each step's, contiguous, so a
step writes each output as one slice at a row known from the layout alone; the
plan renumbers every node's output rows, then its inputs and the roots, through
that allotment. A padded slot repeats a real node of its step and writes its
own row (one that nothing reads) or, in steps of several signatures, which
scatter by index, the class's dump row (the last): its gradient is then exactly
zero, never ``0 * nan``. A step with no nodes (spare) computes nothing.

The sizes (the rows of the recordings' classes, leaves, the steps' capacities) are what one compiled
executor is specialised to. A batch reuses the smallest executor issued so far
whose buffers hold it (not more than about twice its rows) and whose steps it
can be placed into; otherwise it gets its own steps, made at least as large as
every issued layout's step by step, so the newest layout fits every batch seen
so far and a new compile happens only when a batch outgrows them.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from dataclasses import dataclass, field

import numpy as np
from jax import tree_util

from autograph.errors import ConversionError

# Buffer sizes are rounded to the grid ceil(2 ** (k / 4)), with this much headroom;
# step capacities to a finer grid, at least MIN_CAPACITY rows, with headroom for
# the next batches: a level of n nodes over many random trees varies by about
# sqrt(n) nodes, so a step holds n * 1.05 + 2 sqrt(n) (with 1.05 alone, 23 of 30
# new batches had a level a few nodes too wide and were list-scheduled, 2.2 ms a
# plan where the table lookup takes under 1 ms; with the spread, 39 of 40 batches
# of three seeds take the lookup, for about the same computed rows), and
# SPARE_ROWS rows of spare steps at the end.
GRID_STEPS_PER_DOUBLING = 4
CAPACITY_STEPS_PER_DOUBLING = 8
HEADROOM = 1.25
CAPACITY_HEADROOM = 1.05
CAPACITY_SPREAD = 2.0
MIN_CAPACITY = 8
SPARE_ROWS = 64

# Size-classed layouts (SizeChooser): after CLASS_AFTER batches of one layout shape,
# a few more layouts for the batches below the largest, at most MAX_LAYOUTS per
# shape with one left for a batch that outgrows them all. A class's layout is
# sized to the batches of at most CLASS_QUANTILES' quantile of the inner nodes
# seen: each level's width scales with the batch's size (a level varies ~6%
# between batches, almost all of it the batch's total), so a step holds the
# CLASS_LEVEL_QUANTILE of its level's share of the batch, times the class's size,
# plus CLASS_SPREAD sqrt of that (none: the quantile is margin enough); levels that
# under CLASS_PRESENT of the batches reach get no step (a taller batch takes a larger
# layout).
CLASS_AFTER = 32
MAX_LAYOUTS = 4
CLASS_QUANTILES = {1: (0.6,), 2: (0.4, 0.8)}
CLASS_LEVEL_QUANTILE = 0.95
CLASS_SPREAD = 0.0
CLASS_PRESENT = 0.1


def bucket(n: int | float, steps_per_doubling: int = GRID_STEPS_PER_DOUBLING) -> int:
    """The smallest size of the geometric grid at least ``n`` (0 stays 0)."""
    if n <= 0:
        return 0
    k = math.ceil(steps_per_doubling * math.log2(n) - 1e-9)
    size = math.ceil(2 ** (k / steps_per_doubling))
    return size if size >= n else math.ceil(n)


@dataclass(frozen=True, eq=False)
class Layout:
    """What one compiled executor is specialised to (static under ``jit``)."""

    registry: object
    classes: tuple            # (shape, dtype name) of each buffer
    leaf_sigs: tuple          # signatures of height-0 nodes
    inner_sigs: tuple         # the others
    n_trees: int
    root_treedef: object
    root_classes: tuple
    sizes: tuple              # rows per class, leaves per leaf signature
    steps: tuple = ()         # the capacity of each step
    counter: object = field(default=None, compare=False)

    def _key(self):
        return (id(self.registry), self.classes, self.leaf_sigs, self.inner_sigs,
                self.n_trees, self.root_treedef, self.root_classes, self.sizes, self.steps)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def shape_key(self):
        """Everything but the sizes: layouts with equal shape keys share buckets."""
        return self._key()[:-2]

    @functools.cached_property
    def rows(self):
        """Where every output goes in the buffers (:class:`Rows`)."""
        return Rows.of(self)

    def runs(self):
        """``(capacity, steps)`` of each run of equal capacities: one scan each."""
        runs: list = []
        for k in self.steps:
            if runs and runs[-1][0] == k:
                runs[-1][1] += 1
            else:
                runs.append([k, 1])
        return [tuple(r) for r in runs]


@dataclass(frozen=True, eq=False)
class Rows:
    """The buffers' rows, allotted by the layout: each writer's outputs contiguous.

    A class's buffer holds, in order: each leaf signature's outputs of the class
    (``leaves`` rows per output), then every step's (``K`` rows per output of the
    class, as many outputs as any inner signature has of it), then a dump row.
    A step's output ``j`` is then written as one slice of ``K`` rows at
    ``step_starts(sig)[step, j]`` (like a level of a depth-batched program
    written by hand), not scattered row by row; a padded slot writes its own row,
    which nothing reads."""

    total: tuple            # rows per class, the dump row (the last) included
    leaf_starts: tuple      # per leaf signature, the first row of each output
    base: tuple             # per class, the first row of the steps' part
    per_slot: tuple         # per class, rows per slot of a step
    offsets: np.ndarray     # the first slot of each step (slots end to end)
    starts: dict            # per inner signature: (steps, outputs), each output's first row
    output_starts: dict     # the same, (outputs, steps)
    class_index: dict

    @classmethod
    def of(cls, layout):
        class_index = {c: i for i, c in enumerate(layout.classes)}
        used = [0] * len(layout.classes)
        leaf_starts = []
        for sig, n in zip(layout.leaf_sigs, layout.sizes[len(layout.classes):], strict=True):
            starts = []
            for c in sig.out_classes:
                starts.append(used[class_index[c]])
                used[class_index[c]] += n
            leaf_starts.append(tuple(starts))
        per_slot = tuple(max((sig.out_classes.count(c) for sig in layout.inner_sigs),
                             default=0) for c in layout.classes)
        caps = np.asarray(layout.steps, np.int64)
        slots = int(caps.sum())
        total = tuple(u + slots * m + 1 for u, m in zip(used, per_slot, strict=True))
        offsets = np.cumsum(caps) - caps
        starts = {}
        for sig in layout.inner_sigs:
            starts[sig] = np.zeros((len(caps), len(sig.out_classes)), np.int32)
            rank: dict = {}
            for j, c in enumerate(sig.out_classes):
                i = class_index[c]
                rank[c] = rank.get(c, -1) + 1
                starts[sig][:, j] = used[i] + offsets * per_slot[i] + rank[c] * caps
        output_starts = {sig: np.ascontiguousarray(s.T) for sig, s in starts.items()}
        return cls(total, tuple(leaf_starts), tuple(used), per_slot, offsets, starts,
                   output_starts, class_index)

    def dump(self, sig):
        """The dump row of each output of ``sig`` (written by padded slots of
        steps that scatter)."""
        return np.asarray([self.total[self.class_index[c]] - 1 for c in sig.out_classes],
                          np.int32)


class Plan:
    """A batch's schedule: int (and data) arrays, a pytree whose static part is the
    :class:`Layout`. Pass it through ``jax.jit`` as an argument."""

    def __init__(self, arrays, layout: Layout):
        self.arrays = arrays
        self.layout = layout

    def __repr__(self):
        runs = ", ".join(f"{c}x{k}" if c > 1 else f"{k}" for k, c in self.layout.runs())
        return (f"<fold plan: {self.layout.n_trees} trees, sizes {self.layout.sizes}, "
                f"{len(self.layout.steps)} steps: {runs}>")


tree_util.register_pytree_node(
    Plan, lambda plan: ((plan.arrays,), plan.layout),
    lambda layout, children: Plan(children[0], layout))
def merge(recordings):
    """One batch's nodes: the trees' recordings concatenated, rows offset per class.

    Vectorised over the trees: each recording holds its rows per signature packed
    (height, input rows, output rows) and its row counts by class number, so a
    signature's rows are one concatenation plus every row's tree's offsets. The
    trees of one recorded batch, all and in order, are its tables as they are
    (``recording_batch.Batch.merged``)."""
    first = recordings[0]
    root_treedef, root_classes = first.root_treedef, first.root_classes
    # per-tree attributes read by map (C loops: this runs once per plan, over every tree)
    root_keys = set(map(_root_key, recordings))
    if len(root_keys) > 1:
        rec = next(r for r in recordings if r.root_key is not first.root_key)
        raise ConversionError(
            "autograph.fold: the trees of a batch return different structures "
            f"({first.root_treedef} and {rec.root_treedef}); their results are stacked")
    batch = first.batch
    if (batch is not None and len(recordings) == len(batch.roots)
            and all(map(operator.is_, map(_batch_of, recordings), itertools.repeat(batch)))
            and list(map(_index_of, recordings)) == list(range(len(recordings)))):
        # a fresh batch's trees, in the order recorded (their structures checked
        # above): the recorder's tables are this merge already (recording_batch.Batch)
        return (*batch.merged, root_treedef, root_classes)
    width = len(first.class_index)
    vectors = list(map(_count_vector_of, recordings))
    if set(map(len, vectors)) != {width}:         # recorded before a class was added
        vectors = [np.pad(v, (0, width - len(v))) for v in vectors]
    counts = np.concatenate(vectors).reshape(len(vectors), width)
    columns_of = list(map(_columns_of, recordings))
    sigs = columns_of[0].keys()
    parts: dict = {}
    if all(map(sigs.__eq__, map(dict.keys, columns_of))):      # the same signatures
        which = list(range(len(recordings)))
        for sig in sigs:
            got = list(map(operator.itemgetter(sig), columns_of))
            parts[sig] = (which, [g[0] for g in got], [g[1] for g in got])
    else:
        for r, columns in enumerate(columns_of):
            for sig, part in columns.items():
                entry = parts.get(sig)
                if entry is None:
                    parts[sig] = ([r], [part[0]], [part[1]])
                else:
                    entry[0].append(r)
                    entry[1].append(part[0])
                    entry[2].append(part[1])
    # offsets[r, c]: the rows of class c that the trees before tree r take
    offsets = np.cumsum(counts, axis=0) - counts
    class_index = first.class_index
    merged = {}
    for sig, (which, columns_list, data_list) in parts.items():
        # column-major: NumPy loops over an (n, a few) array along its short rows,
        # several times slower than along contiguous columns
        columns = np.concatenate(columns_list, axis=1)
        lengths = [c.shape[1] for c in columns_list]
        tree_offsets = offsets[which].astype(np.int32)
        # one block of columns per class (a TreeLSTM cell's: all of one class), each
        # added its tree's offset as one broadcast
        for c, block in _column_blocks(sig.in_classes + sig.out_classes, 1):
            columns[block] += np.repeat(tree_offsets[:, class_index[c]], lengths)
        n_in = len(sig.in_classes)
        merged[sig] = (columns[0], columns[1:1 + n_in], columns[1 + n_in:],
                       [np.concatenate([data[j] for data in data_list])
                        for j in range(len(sig.data_avals))])
    total = counts.sum(axis=0).tolist()
    totals = {c: total[i] for c, i in class_index.items() if i < width and total[i]}
    root_rows = np.fromiter(itertools.chain.from_iterable(map(_root_rows_of, recordings)),
                            np.int64).reshape(len(recordings), -1)
    roots = root_rows + offsets[:, [class_index[c] for c in root_classes]]
    return merged, totals, roots.astype(np.int32), root_treedef, root_classes


_root_key = operator.attrgetter("root_key")
_batch_of = operator.attrgetter("batch")
_index_of = operator.attrgetter("index")
_count_vector_of = operator.attrgetter("count_vector")
_columns_of = operator.attrgetter("columns")
_root_rows_of = operator.attrgetter("root_rows")


def _groups(heights_by_sig):
    """Groups (height, sig index, node indices) in execution order."""
    groups = []
    for s, heights in enumerate(heights_by_sig):
        order = _stable_order(heights, int(heights.max(initial=0)) + 1)
        values, starts, counts = np.unique(heights[order], return_index=True,
                                           return_counts=True)
        for h, start, count in zip(values.tolist(), starts.tolist(), counts.tolist(),
                                   strict=True):
            groups.append((h, s, order[start:start + count]))
    groups.sort(key=lambda g: (g[0], g[1]))
    return groups


def place(groups, merged, inner_sigs, totals, steps=None, capacity=None):
    """Every inner node's step: list scheduling in height order.

    Each node of a group goes into the first step after its inputs' steps that
    has room and computes its signature (or nothing yet). ``steps``: the
    capacities of a layout's steps, or None to open steps as needed, ``capacity(n)``
    rows for ``n`` ready nodes. Returns ``(capacities, step_sig, node_step)``:
    each step's capacity and signature (-1: none), and the step of every node per
    signature; None if ``steps`` do not hold the batch."""
    fixed = steps is not None
    caps = list(steps) if fixed else []
    free = list(caps)
    step_sig = [-1] * len(caps)
    step_of = {c: np.full(n, -1, np.int64) for c, n in totals.items()}
    node_step = [np.zeros(len(merged[sig][0]), np.int64) for sig in inner_sigs]
    columns = [(_columns(sig.in_classes), _columns(sig.out_classes)) for sig in inner_sigs]
    for _, s, nodes in groups:
        _, inputs, outputs, _ = merged[inner_sigs[s]]
        in_columns, out_columns = columns[s]
        rows = np.take(inputs, nodes, axis=1)
        ready = None
        for c, cols in in_columns:
            latest = np.take(step_of[c], rows[cols]).max(axis=0)
            ready = latest if ready is None else np.maximum(ready, latest)
        ready += 1
        n = len(nodes)
        level = ready[0] == ready[-1] and (n < 3 or (ready == ready[0]).all())
        if not level and (ready[1:] < ready[:-1]).any():
            order = _stable_order(ready, int(ready.max()) + 1)
            nodes, ready = nodes[order], ready[order]
        assigned = np.empty(n, np.int64)
        placed, j = 0, int(ready[0])
        while placed < n:
            if j == len(caps):
                if fixed:
                    return None
                caps.append(capacity(n - placed))   # every remaining node is ready here
                free.append(caps[-1])
                step_sig.append(-1)
            if free[j] and step_sig[j] in (-1, s):
                ready_here = n if level else int(np.searchsorted(ready, j, side="right"))
                take = min(free[j], ready_here - placed)
                if take > 0:
                    assigned[placed:placed + take] = j
                    step_sig[j] = s
                    free[j] -= take
                    placed += take
            j += 1
        node_step[s][nodes] = assigned
        rows = np.take(outputs, nodes, axis=1).astype(np.intp)   # (a scatter by intp
        for c, cols in out_columns:                                 # is ~3x one by int32)
            step_of[c][rows[cols]] = assigned
    return tuple(caps), step_sig, node_step


@functools.lru_cache(maxsize=1024)
def _columns(classes):
    """``(class, [positions])`` of each distinct class in ``classes``."""
    where: dict = {}
    for j, c in enumerate(classes):
        where.setdefault(c, []).append(j)
    return tuple(where.items())


@functools.lru_cache(maxsize=1024)
def _column_blocks(classes, first=0):
    """:func:`_columns` shifted by ``first``, each position list a slice where it is
    one range (a basic index: no copy)."""
    blocks = []
    for c, cols in _columns(classes):
        cols = [first + j for j in cols]
        if cols == list(range(cols[0], cols[-1] + 1)):
            cols = slice(cols[0], cols[-1] + 1)
        blocks.append((c, cols))
    return tuple(blocks)


def level_map(placement, heights_by_sig):
    """The step of each (signature, height) in ``placement``, as one int array per
    signature indexed by height (-1: none), when the placement is one by levels:
    every (height, signature) in one step of its own, the steps in height order.
    Any batch whose levels fit those steps can then be placed by a table lookup
    (:func:`place_by_levels`). None when the placement is not by levels (a level
    spilled into the next step)."""
    _, _, node_step = placement
    if not heights_by_sig:
        return None
    maps, entry_heights, entry_steps = [], [], []
    for heights, steps in zip(heights_by_sig, node_step, strict=True):
        if not len(heights):
            return None
        top = int(heights.max())
        low = np.full(top + 1, np.iinfo(np.int64).max, np.int64)
        high = np.full(top + 1, -1, np.int64)
        np.minimum.at(low, heights, steps)
        np.maximum.at(high, heights, steps)
        present = high >= 0
        if (low[present] != high[present]).any():
            return None
        maps.append(np.where(present, high, -1))
        entry_heights.append(np.flatnonzero(present))
        entry_steps.append(high[present])
    entry_heights, entry_steps = np.concatenate(entry_heights), np.concatenate(entry_steps)
    order = np.argsort(entry_steps, kind="stable")
    # distinct steps, and a lower height always in an earlier step: every node's
    # inputs (all of lower heights) are computed before its step
    if (np.diff(entry_steps[order]) <= 0).any() or (np.diff(entry_heights[order]) < 0).any():
        return None
    return maps


def place_by_levels(maps, heights_by_sig, caps, widths=None):
    """Every inner node's step from a :func:`level_map` of a layout's steps: a
    node's step is its (signature, height)'s, vectorised over the batch. With one
    inner signature, heights above the map's take the steps after its last (a
    taller batch uses the spare steps). None if the batch does not fit: a level
    wider than its step, a height without a step. ``widths``: the nodes per height
    of each signature (``np.bincount`` of its heights), if made already: the fit is
    then checked on the levels, not on every node."""
    if widths is None:
        widths = [np.bincount(h) for h in heights_by_sig]
    used = np.zeros(len(caps), np.int64)
    step_sig = np.full(len(caps), -1, np.int64)
    node_step = []
    for s, (table, heights, width) in enumerate(zip(maps, heights_by_sig, widths,
                                                    strict=True)):
        if not len(heights):
            node_step.append(np.zeros(0, np.int64))
            continue
        top = len(width) - 1
        if top >= len(table):
            last = int(table.max())
            extra = top + 1 - len(table)
            if len(maps) > 1 or last + extra >= len(caps):
                return None
            table = np.concatenate([table, np.arange(last + 1, last + 1 + extra)])
        present = width > 0
        level_steps = table[:top + 1][present]
        if (level_steps < 0).any():
            return None
        np.add.at(used, level_steps, width[present])
        step_sig[level_steps] = s
        node_step.append(np.take(table, heights))
    if (used > np.asarray(caps)).any():
        return None
    return tuple(caps), step_sig.tolist(), node_step


def _capacity_of(capacities):
    """Rows of a new step for ``n`` ready nodes: on the fine grid, or the smallest
    of the user's ``capacities`` that holds them (the largest if none does)."""
    if capacities is None:
        return lambda n: bucket(max(n * CAPACITY_HEADROOM + CAPACITY_SPREAD * math.sqrt(n),
                                    MIN_CAPACITY), CAPACITY_STEPS_PER_DOUBLING)
    return lambda n: min((c for c in capacities if c >= n), default=max(capacities))


def _spare_steps(caps):
    """A few spare steps of the narrowest capacity, for batches a little taller."""
    if not caps:
        return caps
    last = min(caps)
    return caps + (last,) * (SPARE_ROWS // last)


def schedule(recordings, registry, capacities, chooser, counter=None):
    """The :class:`Plan` of a batch of recordings. ``capacities``: the step sizes
    allowed (None: any, on the grid); ``chooser``: the :class:`SizeChooser` of the
    folded function."""
    merged, totals, roots, root_treedef, root_classes = merge(recordings)
    classes = tuple(sorted(totals, key=repr))
    sigs = sorted(merged, key=lambda s: s.number)
    leaf_sigs = tuple(s for s in sigs if not s.in_classes)
    inner_sigs = tuple(s for s in sigs if s.in_classes)
    heights = [merged[s][0] for s in inner_sigs]
    need = (tuple(totals[c] + 1 for c in classes)
            + tuple(len(merged[s][0]) for s in leaf_sigs))
    shape = Layout(registry, classes, leaf_sigs, inner_sigs, len(recordings),
                   root_treedef, root_classes, ())
    shape_key = shape.shape_key()
    groups = []             # made when list scheduling needs them

    def listed():
        if not groups:
            groups.extend(_groups(heights))
        return groups

    def placed(steps, lookup_only=False):
        levels = chooser.levels.get((shape_key, steps))
        if levels is not None:
            placement = place_by_levels(levels, heights, steps, widths)
            if placement is not None or lookup_only:
                return placement
        placement = place(listed(), merged, inner_sigs, totals, steps)
        if placement is not None and levels is None:
            chooser.levels[(shape_key, steps)] = level_map(placement, heights)
        return placement

    def design():
        return place(listed(), merged, inner_sigs, totals, capacity=_capacity_of(capacities))

    # the levels' widths, for the size classes (not with the user's capacities)
    widths = [np.bincount(h) for h in heights]
    sizes, (steps, step_sig, node_step) = chooser(shape_key, need, placed, design,
                                                  widths if capacities is None else None)
    layout = Layout(registry, classes, leaf_sigs, inner_sigs, len(recordings),
                    root_treedef, root_classes, sizes, steps, counter)
    rows = chooser.rows.get(layout)
    if rows is None:
        rows = chooser.rows[layout] = layout.rows
    layout.__dict__["rows"] = rows      # the cached_property, made once per layout
    # every output's buffer row (rows allotted by the layout: see Rows), by its
    # merged row; then the inputs and roots read through it
    new_rows = {c: np.empty(totals[c], np.int32) for c in classes}
    leaf_arrays = []
    for sig, cap, starts in zip(leaf_sigs, sizes[len(classes):], rows.leaf_starts,
                                strict=True):
        _, _, outputs, data = merged[sig]
        n = outputs.shape[1]
        for j, c in enumerate(sig.out_classes):
            new_rows[c][outputs[j].astype(np.intp)] = np.arange(starts[j], starts[j] + n,
                                                                dtype=np.int32)
        leaf_arrays.append({"data": [np.concatenate([d, np.repeat(d[:1], cap - n, axis=0)])
                                     for d in data]})
    slotted = []
    for sig, steps_of_nodes in zip(inner_sigs, node_step, strict=True):
        _, _, outputs, _ = merged[sig]
        take, order, where, firsts = _slots(steps_of_nodes, steps, rows.output_starts[sig])
        # (NumPy scatters by an intp index ~3x faster than by int32)
        sorted_outputs = np.take(outputs, order, axis=1).astype(np.intp)
        for j, c in enumerate(sig.out_classes):
            new_rows[c][sorted_outputs[j]] = firsts[j]
        slotted.append((take, where, firsts))

    # every step's slots laid end to end, one array each (few leaves to pass to
    # jit: each is a transfer); the executor slices the runs out (static offsets).
    # Row indices are column-major, (values, slots), like the merged nodes
    per_sig = []
    for sig, (take, where, firsts) in zip(inner_sigs, slotted, strict=True):
        _, inputs, _, data = merged[sig]
        part = {"inputs": _through(new_rows, sig.in_classes, np.take(inputs, take, axis=1)),
                "data": [np.take(d, take, axis=0) for d in data]}
        if len(inner_sigs) > 1:     # steps of several signatures scatter by index
            outs = np.empty((len(sig.out_classes), len(take)), np.int32)
            outs[:] = rows.dump(sig)[:, None]
            outs[:, where] = firsts
            part["outputs"] = outs
        per_sig.append(part)
    step_sig = np.asarray(step_sig, np.int32)
    step_sig[step_sig < 0] = len(inner_sigs)         # an empty step: computes nothing
    arrays = {"leaf": leaf_arrays, "steps": {"sig": step_sig, "per_sig": per_sig},
              "roots": np.ascontiguousarray(_through(new_rows, root_classes, roots.T).T)}
    return Plan(arrays, layout)


def _through(new_rows, classes, rows):
    """``rows`` (one row of indices per entry of ``classes``) renumbered by
    ``new_rows``."""
    blocks = _column_blocks(classes)
    if len(blocks) == 1:
        return np.take(new_rows[blocks[0][0]], rows)
    out = np.empty(rows.shape, np.int32)
    for c, cols in blocks:
        out[cols] = np.take(new_rows[c], rows[cols])
    return out


def _slots(node_step, capacities, output_starts):
    """The node in each slot of every step (the steps' slots end to end). A padded
    slot repeats its step's first node; a step with none of its own, the
    signature's earliest node (its inputs are computed before every step it can be
    computed in: real values, never nan). Also, for the nodes in step order (stable:
    ``order``), each one's slot (``where``) and its output rows (``firsts``, one row
    per output: ``output_starts`` of its step plus its place within the step)."""
    caps = np.asarray(capacities, np.int64)
    n = len(node_step)
    order = _stable_order(node_step, len(caps))
    steps = node_step[order]
    n_in = np.bincount(steps, minlength=len(caps))
    first = np.cumsum(n_in) - n_in            # the first of each step's nodes, in order
    head = np.where(n_in > 0, order[np.minimum(first, n - 1)], order[0])
    take = np.repeat(head, caps)
    position = np.arange(n, dtype=np.int32)
    # a node's place within its step is its position in order less its step's first
    where = np.take(np.cumsum(caps) - caps - first, steps) + position
    take[where] = order
    firsts = np.take(output_starts - first.astype(np.int32), steps, axis=1)
    firsts += position
    return take, order, where, firsts


def _stable_order(keys, bound):
    """``argsort(keys, kind="stable")`` of ints in ``[0, bound)``: as 16-bit keys where
    they fit, which NumPy sorts by radix (int64 keys take a merge sort, ~8x slower)."""
    if bound <= np.iinfo(np.int16).max:
        keys = keys.astype(np.int16)
    return np.argsort(keys, kind="stable")


class SizeChooser:
    """The layouts issued so far, per layout shape.

    A batch reuses the smallest issued layout whose buffers hold it (rows and
    leaves at least its own and not more than about twice them) and whose steps
    it can be placed into. Otherwise it gets a new one: its rows with headroom,
    rounded up to the grid, its own steps, and every size and step at least each
    issued layout's (so the newest layout fits every batch seen so far, and a
    new compile happens only when a batch outgrows them).

    The first layouts are sized for the largest batches seen, so a median batch
    computes about 1.2x its rows there. After ``CLASS_AFTER`` batches of a shape,
    the chooser adds *class* layouts (:func:`class_layouts`) sized to the batches
    below quantiles of the sizes seen, as many as ``MAX_LAYOUTS`` allows with one
    left over for a batch that outgrows every layout. A class layout is placed
    into by its level table alone (a batch that does not fit it costs a table
    lookup, not list scheduling, and takes a larger layout)."""

    def __init__(self):
        self.issued: dict = {}
        self.levels: dict = {}      # (shape key, steps) -> level_map of its first batch
        self.rows: dict = {}        # layout -> its Rows
        self.history: dict = {}     # shape key -> [(need, level widths)] until classed
        self.lookup_only: set = set()   # (shape key, sizes, steps) of class layouts

    def __call__(self, shape_key, need, placed, design, widths=None):
        """``(sizes, placement)``: ``placed(steps, lookup_only)`` places the batch into
        a layout's steps (None if it does not fit), ``design()`` into steps of its
        own; ``widths``: the batch's nodes per height, one array per inner
        signature (for the class layouts)."""
        issued = self.issued.setdefault(shape_key, [])
        history = self.history.get(shape_key, [])
        if widths is not None and history is not None and issued:
            history.append((need, widths))
            self.history[shape_key] = history
            if len(history) >= CLASS_AFTER:
                self.history[shape_key] = None      # classed once
                budget = MAX_LAYOUTS - 1 - len(issued)
                for sizes, steps, maps in class_layouts(history, budget):
                    if (sizes, steps) not in issued:
                        issued.append((sizes, steps))
                        self.levels[(shape_key, steps)] = maps
                        self.lookup_only.add((shape_key, sizes, steps))

        def holds(sizes):
            return all(n <= s <= 2 * n + 16 for n, s in zip(need, sizes, strict=True))

        for sizes, steps in sorted(issued, key=lambda e: (sum(e[0]), sum(e[1]))):
            if holds(sizes):
                placement = placed(steps, (shape_key, sizes, steps) in self.lookup_only)
                if placement is not None:
                    return sizes, placement
        own = _spare_steps(design()[0])
        sizes = tuple(bucket(n * HEADROOM) for n in need)
        steps = own
        for previous_sizes, previous_steps in issued:
            sizes = tuple(max(a, b) for a, b in zip(sizes, previous_sizes, strict=True))
            steps = _stepwise_max(steps, previous_steps)
        placement = placed(steps)
        if placement is None:           # a larger step can place a node later: rare
            steps, placement = own, placed(own)
        if (sizes, steps) not in issued:
            issued.append((sizes, steps))
        return sizes, placement


def class_layouts(history, count):
    """Up to ``count`` layouts ``(sizes, steps, level maps)`` for the size classes of
    the batches in ``history`` (``(need, widths)`` each, as :class:`SizeChooser`
    gets them): the class of quantile ``q`` holds batches of up to the ``q``
    quantile of the inner nodes seen, one step per (height, signature) that at
    least ``CLASS_PRESENT`` of the batches reach, in height order."""
    quantiles = CLASS_QUANTILES.get(min(count, max(CLASS_QUANTILES)), ())
    if not quantiles:
        return []
    n_sigs = len(history[0][1])
    top = max(len(w) for _, widths in history for w in widths)
    counts = np.zeros((len(history), n_sigs, top))
    for b, (_, widths) in enumerate(history):
        for s, w in enumerate(widths):
            counts[b, s, :len(w)] = w
    totals = counts.sum(axis=(1, 2))
    if not totals.all():
        return []
    share = np.quantile(counts / totals[:, None, None], CLASS_LEVEL_QUANTILE, axis=0)
    present = (counts > 0).mean(axis=0) >= CLASS_PRESENT
    needs = np.array([need for need, _ in history], float)
    need_share = np.quantile(needs / totals[:, None], CLASS_LEVEL_QUANTILE, axis=0)
    entries = [(h, s) for h in range(top) for s in range(n_sigs) if present[s, h]]
    out = []
    for q in quantiles:
        size = float(np.quantile(totals, q))
        caps = []
        for h, s in entries:
            rows = size * share[s, h]
            caps.append(max(math.ceil(rows + CLASS_SPREAD * math.sqrt(rows)), 1))
        maps = [np.full(top, -1, np.int64) for _ in range(n_sigs)]
        for step, (h, s) in enumerate(entries):
            maps[s][h] = step
        sizes = tuple(math.ceil(size * x) for x in need_share)
        out.append((sizes, tuple(caps), maps))
    return out
def _stepwise_max(a, b):
    return tuple(max(x, y) for x, y in itertools.zip_longest(a, b, fillvalue=0))
