"""Recording's cost per node, CPU time, with the batch recorder's phases.

``benchmarks/fold.py`` times recording among the fold rows (wall clock, through
``interleaved_medians``). This module times it alone, in process CPU time (the
machine is shared), interleaved round by round: the bare recursion, the batch
recorder (``recording_fast.record_batch``: every tree recorded afresh) and, inside
it, its phases: running the recursion, dropping a tree's memo and subexpression
table (``clear``: the recording's objects die there), and making the tables
per-tree recordings (``split``); then ``schedule.merge`` of the batch's recordings,
the first step of its plan (``record_batch + merge``: the batch's nodes, ready to
place). The garbage collector is off while timing, as
record_batch keeps it. ``handwritten`` is the floor to compare ``run + clear`` with.

    python -m benchmarks.fold_recording [--trees 64] [--rounds 15] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time

import jax

import autograph

from .fold import encode, init, random_batch

PHASES = ("run", "clear", "split")
_MISS = object()


def handwritten(trees):
    """A recorder of ``encode`` written by hand, as the fast path's generated code
    would be at best: the same per-tree memo (by the arguments' ids, the arguments
    kept alive), subexpression table for leaf calls (keyed by the word), row lists,
    a row counter taken once per node (a list of one int) and two-slot placeholders
    (the kind their class, made by calling it), with the checks of each call's
    arguments (the parameters by identity, a tuple's length by unpacking it),
    and nothing else (no split into recordings). Its time per node is the floor of
    recording with these objects; the difference to ``run + clear`` is what the
    generic machinery costs."""
    from autograph.fold.recording import Param, value_class

    kind = value_class(("v", ((8,), "float32")))
    params = object.__new__(Param)
    params.kind = ("p", ())
    memo, cse, leaf_rows, cell_rows, words = {}, {}, [], [], []
    rows = [0]
    memo_get, cse_get = memo.get, cse.get

    def leaf_site(a0, a1):
        if a0 is params and type(a1) is int:
            hit = cse_get(a1, _MISS)
            if hit is not _MISS:
                return hit
            o0 = rows[0]
            rows[0] = o0 + 2
            o1 = o0 + 1
            leaf_rows.extend((0, o0, o1))
            words.append(a1)
            r0 = kind(); r0.idx = o0; r0.height = 0    # noqa: E702
            r1 = kind(); r1.idx = o1; r1.height = 0    # noqa: E702
            result = cse[a1] = (r0, r1)
            return result
        raise NotImplementedError

    def cell_site(a0, a1, a2):
        if a0 is params and type(a1) is tuple and type(a2) is tuple:
            try:
                x0, x1 = a1
                x2, x3 = a2
            except ValueError:
                raise NotImplementedError from None
            if (type(x0) is kind and type(x1) is kind and type(x2) is kind
                    and type(x3) is kind):
                i0, i1, i2, i3 = x0.idx, x1.idx, x2.idx, x3.idx
                h = x0.height     # as the generated sites: faster than max(...)
                if x1.height > h:
                    h = x1.height
                if x2.height > h:
                    h = x2.height
                if x3.height > h:
                    h = x3.height
                h += 1
                o0 = rows[0]
                rows[0] = o0 + 2
                o1 = o0 + 1
                cell_rows.extend((h, i0, i1, i2, i3, o0, o1))
                r0 = kind(); r0.idx = o0; r0.height = h    # noqa: E702
                r1 = kind(); r1.idx = o1; r1.height = h    # noqa: E702
                return (r0, r1)
        raise NotImplementedError

    def step(p, node):
        key = id(node) if p is params else (id(p), id(node))
        hit = memo_get(key)
        if hit is not None:
            return hit[0]
        if node.is_leaf:
            out = leaf_site(p, node.word)
        else:
            out = cell_site(p, step(p, node.left), step(p, node.right))
        memo[key] = (out, p, node)
        return out

    for tree in trees:
        memo.clear()
        cse.clear()
        step(params, tree)
    memo.clear()
    cse.clear()


def _count(node):
    return 1 if node.is_leaf else 1 + _count(node.left) + _count(node.right)


def _bare(node):
    return node.word if node.is_leaf else _bare(node.left) + _bare(node.right)


class _PhaseClock:
    """CPU seconds spent in each phase of ``record_batch``, by wrapping the
    recorder's root step (run, then clear) and ``split`` for the duration of a
    ``with`` block."""

    def __init__(self):
        self.spent = dict.fromkeys(PHASES, 0.0)

    def __enter__(self):
        from autograph.fold import recording_fast

        self._module, self._cls = recording_fast, recording_fast.FastRecorder
        self._split, self._run_root = recording_fast.split, self._cls.run_root
        spent, split, run_root = self.spent, self._split, self._run_root

        def timed_split(*args):
            start = time.process_time()
            out = split(*args)
            spent["split"] += time.process_time() - start
            return out

        def timed_run_root(recorder, *args):
            start = time.process_time()
            out = run_root(recorder, *args)
            middle = time.process_time()
            recorder.memo.clear()       # what record_trees does next, timed here
            for cse in recorder.cses.values():
                cse.clear()
            spent["run"] += middle - start
            spent["clear"] += time.process_time() - middle
            return out

        recording_fast.split = timed_split
        self._cls.run_root = timed_run_root
        return self

    def __exit__(self, *exc):
        self._module.split = self._split
        self._cls.run_root = self._run_root


def measure(trees=64, rounds=15, seed=3):
    """Microseconds of CPU time per node (medians over ``rounds``): the bare
    recursion, ``record_batch`` of ``trees`` random trees, and its phases."""
    from autograph.fold import recording_fast
    from autograph.fold.schedule import merge

    batch = random_batch(random.Random(seed), trees)
    batched = autograph.fold(encode)
    batched(init(jax.random.PRNGKey(0), 8), batch[:1])
    registry = batched._last_registry
    nodes = sum(_count(t) for t in batch)
    samples = {name: [] for name in ("bare", "batch", *PHASES, "merge", "handwritten")}
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        recording_fast.record_batch(registry, encode, batch)      # warm: sites learned
        for r in range(rounds):
            for which in [0, 1, 2][r % 3:] + [0, 1, 2][:r % 3]:
                if which == 2:
                    start = time.process_time()
                    handwritten(batch)
                    samples["handwritten"].append(time.process_time() - start)
                elif which == 0:
                    start = time.process_time()
                    for t in batch:
                        _bare(t)
                    samples["bare"].append(time.process_time() - start)
                else:
                    with _PhaseClock() as clock:
                        start = time.process_time()
                        recordings = recording_fast.record_batch(registry, encode, batch)
                        samples["batch"].append(time.process_time() - start)
                    start = time.process_time()
                    merge(recordings)
                    samples["merge"].append(time.process_time() - start)
                    del recordings
                    for phase in PHASES:
                        samples[phase].append(clock.spent[phase])
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    out = {f"{name}_us_per_node": statistics.median(s) / nodes * 1e6
           for name, s in samples.items()}
    out["nodes"] = nodes
    out["nodes_us_per_node"] = out["batch_us_per_node"] + out["merge_us_per_node"]
    out["batch_over_bare"] = out["batch_us_per_node"] / out["bare_us_per_node"]
    out["run_clear_over_handwritten"] = (
        (out["run_us_per_node"] + out["clear_us_per_node"]) / out["handwritten_us_per_node"])
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = measure(args.trees, args.rounds)
    if args.json:
        print(json.dumps(out))
        return
    print(f"recording, {out['nodes']} nodes, CPU us per node (medians of {args.rounds}): "
          f"bare {out['bare_us_per_node']:.3f}, record_batch {out['batch_us_per_node']:.3f} "
          f"({out['batch_over_bare']:.1f}x bare): run {out['run_us_per_node']:.3f}, "
          f"clear {out['clear_us_per_node']:.3f}, split {out['split_us_per_node']:.3f}; "
          f"then merge {out['merge_us_per_node']:.3f} (record_batch + merge "
          f"{out['nodes_us_per_node']:.3f}); "
          f"a hand-written recorder {out['handwritten_us_per_node']:.3f} (run + clear "
          f"{out['run_clear_over_handwritten']:.2f}x it)")


if __name__ == "__main__":
    main()
