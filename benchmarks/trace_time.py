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
import sys
import time
from collections.abc import Callable

from benchmarks import against

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
    """The tracers of the checkout at ``root`` (``against.import_checkout``), each
    run once (conversion, imports and JAX's one-time costs paid outside the
    timings)."""
    def load():
        from benchmarks.workloads import get_workloads
        return _tracers(get_workloads)

    tracers = against.import_checkout(root, load)
    for trace in tracers.values():
        trace()
    return tracers


def run(versions: dict, rounds: int) -> None:
    """Time each version's tracers, interleaved round by round; print the table."""
    names = sorted(set.intersection(*(set(v) for v in versions.values())))

    def sample(kind, name):
        start = time.process_time()
        versions[kind][name]()
        return time.process_time() - start

    print(f"trace time, CPU, {rounds} rounds")
    print(against.table(against.interleave(list(versions), names, sample, rounds),
                        "workload"))


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
