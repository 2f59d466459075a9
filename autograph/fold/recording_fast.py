"""Recording's fast path: the same recording as ``recording.Recorder``, made with
fewer decisions per call.

The general recorder routes every call of the recording copy through
``fold_call``, which finds the recorder in a thread-local, runs each step of the
recursion under a decision stack (to replay a branch on a computed value), and
builds each node's signature key by a generic walk of its arguments. A
:class:`FastRecorder` binds its own copy of the user's function to a hook made
for it (a closure over its memo, its signature table and its node writers, taking
the calls without keyword arguments: no ``**kwargs`` dict per call), so a
step of the recursion is a memo lookup and the copy's call, and a node call with
plain arguments (placeholders, Python numbers, tuples and lists of placeholders)
is one pass over them, one table lookup and the node's row:

    encode(p, node.left)        ->  memo[(id(p), id(node.left))], else the copy
    cell(p, (h, c), (h2, c2))   ->  key (cell, p, (tuple, 2), v, v, (tuple, 2), v, v)
                                    -> its signature -> one row, two Values

That hook is each call site's fallback: a site learns from its first call (once
per registry, ``recording_sites.py``) whether it is a step of the recursion or a
node of one pattern of arguments, and from then on runs code generated for that
(the same memo entry, the same row), handing any call that does not match to the
hook. Everything else (keyword arguments, nested containers, arrays as data, a
helper taking tree nodes, a builtin) goes through ``fold_call``, unchanged. A branch on
a computed value (``bool`` of a placeholder) is where the fast path stops: the
tree (and the rest of its batch) is recorded again by the general recorder, which
forks, joins with selects and raises the depth errors at the user's line; the
registry remembers it, and the function's later trees go straight to the general
recorder.

One recorder records all the trees of a batch (``record_batch``): its copies and
sites are bound once, its tables grow across the trees (each tree with a fresh
memo and subexpression table, so its nodes are those of a recording of its own),
and ``recording_batch.split`` cuts them into per-tree recordings with numpy.

    record_batch(registry, fn, trees)  ->  [Recording] (fast where it can, else general)
    record(registry, fn, tree)         ->  record_batch of one tree
"""

from __future__ import annotations

import gc

from jax import tree_util

from autograph.fold.recording import (
    _BUILTINS,
    _RUNNING,
    Nodes,
    Param,
    Recorder,
    Recording,
    Value,
    _local,
    data_key,
    fold_call,
    value_class,
)
from autograph.fold.recording_batch import split
from autograph.fold.recording_sites import MISS, fill_sites
from autograph.fold.rewrite import (
    recording_copy,
    site_arities,
    stepping_arity,
    stepping_copy,
)

# Why the fast path was declined for a registry's function (see ``record``).
VALUE_BRANCH = "a branch on a computed value"
# Why it handed one tree over: its recursion steps keep no mark of a running call
# (a dict write per step), so a call of itself with the same arguments recurses
# until Python's limit; the general recorder then names the call at the user's
# line (or, on a tree that is simply too deep, raises the same RecursionError).
TOO_DEEP = "a recursion too deep for the fast path"


# The structures of a bare result (-1) and of a tuple of n results (n).
_FLAT_TREEDEFS: dict = {}


class _Declined(BaseException):
    """Raised through the user's code when the fast path cannot record a tree."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class FastRecorder(Recorder):
    """A :class:`Recorder` whose copies call :meth:`_make_hook`'s closure, and whose
    nodes are written by one closure per signature (:meth:`_writer`): rows appended
    to one flat list per signature, output rows counted per buffer class."""

    def __init__(self, registry, fn, specialise=True):
        super().__init__(registry, fn)
        self.specialise = specialise
        self.writers: dict = {}         # signature -> its writer
        self.counters: dict = {}        # buffer class -> [its next row] (a list of one int)
        self.cses: dict = {}            # signature -> its subexpression table (cse_of)
        self.site_lists: list = []      # the hooks of each copy's call sites
        self.stepper = self.stepper_arity = None    # rewrite.stepping_copy of fn
        self.positional_hook = self._make_hook()

    def close(self):
        """Drop the hook and the copies bound to it (they refer back to this
        recorder), so that the recorder dies by reference counting."""
        self.positional_hook = self.stepper = None
        self.copies.clear()
        for sites in self.site_lists:     # a copy and its sites' hooks refer to each other
            sites.clear()

    def record_trees(self, trees):
        """Record ``trees`` one after another in this recorder's tables (each with a
        fresh memo and common-subexpression table): their recordings
        (``recording_batch.split``), and why the fast path stopped at the tree
        after the last of them, or None when it recorded all."""
        params = self.params
        previous = getattr(_local, "recorder", None)
        _local.recorder = self
        starts, roots, reason = [], [], None
        memo, cses, nodes = self.memo, self.cses, self.nodes
        try:
            for tree in trees:
                memo.clear()        # the sites hold these dicts: cleared, not replaced
                for cse in cses.values():
                    cse.clear()
                start = {sig: len(table.rows) // sig.width for sig, table in nodes.items()}
                try:
                    roots.append(self.run_root(params, tree))
                except (_Declined, RecursionError) as stop:
                    reason = stop.reason if isinstance(stop, _Declined) else TOO_DEEP
                    for sig, table in nodes.items():    # the tree's nodes so far
                        kept = start.get(sig, 0)
                        del table.data[kept * len(sig.data_avals):]
                        del table.rows[kept * sig.width:]
                    break
                starts.append(start)
        finally:
            _local.recorder = previous
            memo.clear()
            for cse in cses.values():
                cse.clear()
        ends = {sig: len(table.rows) // sig.width for sig, table in nodes.items()}
        return split(self, starts, ends, roots), reason

    def run_root(self, params, tree):
        """:meth:`Recorder.run_root`, the root step taken by the stepping copy once
        it exists (after the batch's first tree), not by the general ``activate``."""
        stepper = self.stepper
        if stepper is not None and self.stepper_arity == 2:
            return self.roots(stepper(self.fn, params, tree))
        return super().run_root(params, tree)

    def roots(self, out):
        """:meth:`Recorder.roots`, a placeholder or a tuple of placeholders (most
        results) without ``jax.tree_util``'s flattening: their structure made once."""
        flat = (out,) if type(out).__base__ is Value else out if type(out) is tuple else ()
        roots = [(x.kind[1], x.idx) for x in flat if type(x).__base__ is Value]
        if not roots or len(roots) != len(flat):
            return super().roots(out)
        shape = -1 if flat is not out else len(flat)
        treedef = _FLAT_TREEDEFS.get(shape)
        if treedef is None:
            treedef = _FLAT_TREEDEFS[shape] = tree_util.tree_structure(
                0 if shape < 0 else (0,) * shape)
        return roots, treedef

    def decide(self, pred, frame):
        """``bool`` of a placeholder: the general recorder forks here; not this one."""
        raise _Declined(VALUE_BRANCH)

    def nodes_of(self, sig):
        """The tables of ``sig``'s nodes in this recording (made on first use)."""
        nodes = self.nodes.get(sig)
        if nodes is None:
            nodes = self.nodes[sig] = Nodes()
        return nodes

    def counter(self, cls):
        """The counter of the rows of buffer class ``cls``: ``[its next row]``, so a
        node takes several rows of one class in one write."""
        counter = self.counters.get(cls)
        if counter is None:
            counter = self.counters[cls] = [0]
        return counter

    def cse_of(self, sig):
        """The subexpression table of ``sig``'s nodes without placeholder inputs in
        the tree being recorded: their data (``recording.data_key``) -> result."""
        cse = self.cses.get(sig)
        if cse is None:
            cse = self.cses[sig] = {}
        return cse

    def _copy(self, f):
        """The recording copy of ``f`` whose sites are this recorder's learned hooks
        (``recording_sites``)."""
        if not self.specialise:
            return recording_copy(f, self.hook, self.positional_hook)
        sites: list = []
        self.site_lists.append(sites)
        copy = recording_copy(f, self.hook, sites)
        self.copies[f] = copy       # before binding: a recursion step's hook calls it
        if f is self.fn:            # the hook of the recursion's steps (recording_sites)
            self.stepper = stepping_copy(f, self.hook, sites, self.memo,
                                         self.positional_hook, _RUNNING, self.params)
            self.stepper_arity = stepping_arity(f)
        fill_sites(sites, self, f.__code__, site_arities(f), self.positional_hook)
        return copy

    def _node(self, sig, values, data, data_keys):
        writer = self.writers.get(sig)
        if writer is None:
            writer = self.writers[sig] = self._writer(sig)
        return writer(values, data, data_keys)

    def _writer(self, sig):
        """``Recorder._node`` for the nodes of ``sig``, its tables bound; only a
        node without placeholder inputs (a leaf) is looked up in the subexpression
        table. An inner call repeated on the same inputs is a second node computing
        the same values (as the Python recursion computes them twice): sharing a
        subtree is the memo's job (one step per tree node), and the table's key,
        lookup and entry per inner node cost more than the few repeats it finds."""
        nodes = self.nodes_of(sig)
        rows, datas, cse, build = nodes.rows, nodes.data, self.cse_of(sig), sig.build
        outputs = [(value_class(kind), self.counter(kind[1])) for kind in sig.out_kinds]
        has_data = bool(sig.data_avals)

        def write(values, data, data_keys):
            if not values:      # a leaf: looked up (as the generated sites key it)
                key = data_key(data_keys)
                hit = cse.get(key, MISS)
                if hit is not MISS:
                    return hit
            height = 0
            for v in values:
                if v.height >= height:
                    height = v.height + 1
            rows.append(height)
            for v in values:
                rows.append(v.idx)
            outs = []
            for cls, counter in outputs:
                out = cls()
                out.idx = idx = counter[0]
                counter[0] = idx + 1
                out.height = height
                outs.append(out)
                rows.append(idx)
            if has_data:    # kept: the key holds the ids of arrays among them
                datas.extend(data)      # flat: recording_batch.split takes every k-th
            result = build(outs)
            if not values:
                cse[key] = result
            return result

        return write

    def record(self, tree):
        """One tree's recording (:meth:`record_trees`); ``_Declined`` where the
        fast path cannot record it."""
        recordings, reason = self.record_trees([tree])
        if reason is not None:
            raise _Declined(reason)
        return recordings[0]

    def _make_hook(self):
        fn, memo, copies, params = self.fn, self.memo, self.copies, self.params
        signatures, writers = self.fast_signatures, {}
        activate, fast_node, writer_of = self.activate, self._fast_node, self.writers

        def hook(f, *args):        # the calls without keywords: the others go to fold_call
            if f is fn:                        # a step of the recursion
                # recording.memo_key's keys for fn
                key = id(args[1]) if len(args) == 2 and args[0] is params else tuple(
                    map(id, args))
                hit = memo.get(key)
                if hit is None:
                    copy = copies.get(f)
                    if copy is None:
                        return activate(f, args, {})
                    memo[key] = _RUNNING
                    # no clean-up on an exception: it ends this recording
                    out = copy(*args)
                    memo[key] = (out, args)     # args kept alive: the key holds their ids
                    return out
                if hit is _RUNNING:
                    return activate(f, args, {})    # the general error
                return hit[0]
            key, values, data = [f], [], []
            found = False
            for x in args:
                t = type(x)
                if t.__base__ is Value:
                    key.append(x.kind)
                    values.append(x)
                    found = True
                elif t is Param:
                    key.append(x.kind)
                    found = True
                elif t is tuple or t is list:
                    key.append((t, len(x)))
                    for y in x:
                        if type(y).__base__ is Value:
                            key.append(y.kind)
                            values.append(y)
                            found = True
                        else:                  # anything deeper: the general hook
                            return fold_call(f, *args)
                elif t is int or t is float or t is bool:
                    key.append(t)
                    data.append(x)
                else:
                    return fold_call(f, *args)
            if not found:
                return f(*args)
            key = tuple(key)
            write = writers.get(key)
            if write is None:
                if f in _BUILTINS:             # len(h), max(a, b): Python's own meaning
                    return f(*args)
                sig = signatures.get(key)
                if sig is None:
                    return fast_node(f, args, key, values, data)
                write = writer_of.get(sig)
                if write is None:
                    write = writer_of[sig] = self._writer(sig)
                writers[key] = write
            return write(values, data, data)

        return hook


def record(registry, fn, tree, *, specialise=True) -> Recording:
    """The recording of ``fn`` over ``tree`` (:func:`record_batch` of one tree)."""
    return record_batch(registry, fn, [tree], specialise=specialise)[0]


def record_batch(registry, fn, trees, *, specialise=True) -> list[Recording]:
    """The recording of ``fn`` over each of ``trees``: all by one
    :class:`FastRecorder` (its sites bound once, its tables cut per tree by
    ``recording_batch.split``), or from the first tree where it declines by the
    general :class:`Recorder`, one per tree (the registry keeps the reason,
    ``registry.fast_declined``, and the counts of each path, ``registry.recorded``).
    ``specialise=False`` leaves every call site on the fast path's general hook
    (``recording_sites`` unused: for comparison).

    Python's cyclic garbage collector is paused while a tree is recorded: the
    recorder's thousands of small objects (placeholders, rows, memo entries) live
    exactly as long as the recording and die by reference counting at its end,
    yet each of them counts toward a collection, and the collections (young ones
    every few dozen nodes, a full one of JAX's heap every few batches) took more
    than half of recording's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _record(registry, fn, list(trees), specialise)
    finally:
        if enabled:
            gc.enable()


def _record(registry, fn, trees, specialise):
    recordings = []
    if registry.fast_declined is None:
        recorder = FastRecorder(registry, fn, specialise)
        try:
            recordings, reason = recorder.record_trees(trees)
        finally:
            recorder.close()
        registry.recorded["fast"] += len(recordings)
        if reason is VALUE_BRANCH:      # for good; TOO_DEEP: this batch's rest only
            registry.fast_declined = reason
    rest = trees[len(recordings):]
    registry.recorded["general"] += len(rest)
    return recordings + [Recorder(registry, fn).record(tree) for tree in rest]
