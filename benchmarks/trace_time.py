"""Trace time of each benchmark workload's converted function.

For every workload of ``autograph bench`` that has an autograph implementation, the
time ``jax.jit(autograph.convert(f)).trace(*args)`` takes on a fresh function (its
conversion cached, so what is timed is the trace: the runtime operators staging
``if``/``while``/``for`` and the user's code running on tracers), in CPU time.

    python -m benchmarks.trace_time [rounds]

``--against OTHER_CHECKOUT [rounds]`` times this checkout and another (an earlier
commit) in one process, interleaved round by round, as
``benchmarks.conversion --against`` does: the minimum and median per workload and
the ratio of the minima. Separate runs on a shared machine differ by more than
the change being measured.

    python -m benchmarks.trace_time --against /tmp/before 15
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

_KIND = "autograph"


def _tracers(get_workloads) -> dict[str, Callable[[], object]]:
    """``{workload name: trace()}``: each call traces a fresh converted function."""
    found = {}
    for workload in get_workloads(None):
        build = workload.aot_builders.get(_KIND)
        if build is None:
            continue
        args = workload.make_args(False)
        found[workload.name] = (lambda build=build, args=args: build().trace(*args))
    return found


def _checkout(root: str) -> dict[str, Callable[[], object]]:
    """The tracers of the checkout at ``root`` (autograph and benchmarks taken out
    of ``sys.modules`` first, so two checkouts live side by side), each run once
    (conversion, imports and JAX's one-time costs paid outside the timings)."""
    for name in list(sys.modules):
        if name.split(".")[0] in ("autograph", "benchmarks"):
            del sys.modules[name]
    sys.path.insert(0, root)
    try:
        from benchmarks.workloads import get_workloads
        tracers = _tracers(get_workloads)
    finally:
        sys.path.remove(root)
    for trace in tracers.values():
        trace()
    return tracers


def _sample(samples: dict, trace: Callable[[], object]) -> None:
    start = time.process_time()
    trace()
    samples.append(time.process_time() - start)


def _row(name, lo, mid) -> list[str]:
    ratio = f"{lo['this'] / lo['other']:.2f}" if "other" in lo else ""
    return [name, *(f"{lo[k] * 1e3:.1f} ms" for k in lo),
            *(f"{mid[k] * 1e3:.1f} ms" for k in mid), ratio]


def run(versions: dict, rounds: int) -> None:
    """Time each version's tracers, interleaved round by round; print the table."""
    names = sorted(set.intersection(*(set(v) for v in versions.values())))
    samples = {k: {n: [] for n in names} for k in versions}
    order = list(versions)
    for r in range(rounds):
        for kind in (order if r % 2 == 0 else order[::-1]):
            for name in names:
                _sample(samples[kind][name], versions[kind][name])
    rows = []
    for name in [*names, "median"]:
        if name == "median":
            lo = {k: statistics.median(min(v) for v in samples[k].values()) for k in order}
            mid = {k: statistics.median(statistics.median(v) for v in samples[k].values())
                   for k in order}
        else:
            lo = {k: min(samples[k][name]) for k in order}
            mid = {k: statistics.median(samples[k][name]) for k in order}
        rows.append(_row(name, lo, mid))
    headers = ["workload", *(f"{k} (min)" for k in order), *(f"{k} (median)" for k in order)]
    headers.append("this / other (min)" if "other" in versions else "")
    from benchmarks.report import _table
    print(f"trace time, CPU, {rounds} rounds")
    print(_table(headers, rows))


def main(argv: list[str]) -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if argv[:1] == ["--against"]:
        other = os.path.abspath(argv[1])
        rounds = int(argv[2]) if len(argv) > 2 else 15
        versions = {"other": _checkout(other), "this": _checkout(here)}
    else:
        rounds = int(argv[0]) if argv else 15
        versions = {"this": _checkout(here)}
    run(versions, rounds)


if __name__ == "__main__":
    main(sys.argv[1:])
