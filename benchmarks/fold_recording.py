"""Recording's cost per node, CPU time, with the batch recorder's phases.

``benchmarks/fold.py`` times recording among the fold rows (wall clock, through
``interleaved_medians``). This module times it alone, in process CPU time (the
machine is shared), interleaved round by round: the bare recursion, the batch
recorder (``recording_fast.record_batch``: every tree recorded afresh) and, inside
it, its phases: running the recursion, dropping a tree's memo and subexpression
table (``clear``: the recording's objects die there), and cutting the tables into
per-tree recordings (``split``). The garbage collector is off while timing, as
record_batch keeps it.

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
            recorder.cse.clear()
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

    batch = random_batch(random.Random(seed), trees)
    batched = autograph.fold(encode)
    batched(init(jax.random.PRNGKey(0), 8), batch[:1])
    registry = batched._last_registry
    nodes = sum(_count(t) for t in batch)
    samples = {name: [] for name in ("bare", "batch", *PHASES)}
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        recording_fast.record_batch(registry, encode, batch)      # warm: sites learned
        for r in range(rounds):
            order = [0, 1] if r % 2 == 0 else [1, 0]
            for which in order:
                if which == 0:
                    start = time.process_time()
                    for t in batch:
                        _bare(t)
                    samples["bare"].append(time.process_time() - start)
                else:
                    with _PhaseClock() as clock:
                        start = time.process_time()
                        recording_fast.record_batch(registry, encode, batch)
                        samples["batch"].append(time.process_time() - start)
                    for phase in PHASES:
                        samples[phase].append(clock.spent[phase])
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    out = {f"{name}_us_per_node": statistics.median(s) / nodes * 1e6
           for name, s in samples.items()}
    out["nodes"] = nodes
    out["batch_over_bare"] = out["batch_us_per_node"] / out["bare_us_per_node"]
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
          f"clear {out['clear_us_per_node']:.3f}, split {out['split_us_per_node']:.3f}")


if __name__ == "__main__":
    main()
