"""Conversion time per function: cold (nothing cached) and cached.

- cold: a fresh ``autograph.transpiler.Transpiler`` (empty caches) converts the
  function: parse, analyse, rewrite, compile, bind;
- cached: the same transpiler asked again for the same function (what every
  call of a converted function after the first costs to find its conversion);
- disk: a fresh transpiler whose disk cache (``autograph.disk_cache``) holds the
  function converts it: what a restarted process pays for a function it has
  converted before (the cache's once-per-process digest of autograph's own files
  is paid outside the timings: ``environment_digest_s`` measures it);
- decorate: ``autograph.convert(f)`` itself, which only wraps (conversion is
  lazy, on the first call);
- parse+compile: reading the function's source, parsing and compiling it, the
  floor under any source-to-source conversion (same process, interleaved).

    python -m benchmarks.conversion [cold_reps]

``--against OTHER_CHECKOUT [rounds]`` compares cold conversion with another checkout
of the project (an earlier commit, say) in one process, interleaved round by round:
CPU time (``time.process_time``) per function, the minimum and the median over the
rounds, and the ratio of the minima. On a shared, loaded machine wall-clock cold
times of separate runs differ by more than the change being measured.

    python -m benchmarks.conversion --against /tmp/before 30
"""

from __future__ import annotations

import ast
import inspect
import linecache
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import autograph
from autograph import disk_cache
from autograph.transpiler import Transpiler


def _times(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def parse_and_compile(f: Callable) -> None:
    """Read ``f``'s source (linecache), parse and compile it: the floor."""
    code = f.__code__
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename)
    block = inspect.getblock(lines[code.co_firstlineno - 1:])
    text = "".join(block)
    if block[0][:1].isspace():
        text = "if 1:\n" + text
    compile(ast.parse(text), code.co_filename, "exec")


def measure(f: Callable, cold_reps: int = 5, cached_reps: int = 200) -> dict[str, float]:
    """Cold, cached, disk, decorate and parse+compile seconds for ``f`` (medians,
    and minima); cold, disk and parse+compile interleaved.

    Raises whatever conversion raises (the caller reports it).
    """
    Transpiler().convert(f)  # pay one-time imports and warm-ups outside the timings
    cold, disk, floor = [], [], []
    with tempfile.TemporaryDirectory() as directory:
        Transpiler(disk_cache=disk_cache.DiskCache(directory)).convert(f)   # the entry
        for _ in range(cold_reps):
            cold += _times(lambda: Transpiler().convert(f), 1)
            disk += _times(lambda: Transpiler(
                disk_cache=disk_cache.DiskCache(directory)).convert(f), 1)
            floor += _times(lambda: parse_and_compile(f), 1)
    warm = Transpiler()
    warm.convert(f)
    cached = _times(lambda: warm.convert(f), cached_reps)
    decorate = _times(lambda: autograph.convert(f), cached_reps)
    return {"cold_s": statistics.median(cold), "cold_min_s": min(cold),
            "cached_s": statistics.median(cached), "cached_min_s": min(cached),
            "disk_s": statistics.median(disk), "disk_min_s": min(disk),
            "parse_compile_s": statistics.median(floor),
            "decorate_s": statistics.median(decorate),
            "cold_reps": cold_reps, "cached_reps": cached_reps}


def environment_digest_s() -> float:
    """Seconds the disk cache's once-per-process digest of autograph's files takes."""
    disk_cache._ENVIRONMENT.clear()
    start = time.perf_counter()
    disk_cache._environment_digest()
    return time.perf_counter() - start


def _checkout(root: str):
    """``(Transpiler, benchmark functions)`` imported from the checkout at ``root``
    (autograph and benchmarks taken out of ``sys.modules`` first: two checkouts
    live side by side in one process, each module holding its own globals)."""
    for name in list(sys.modules):
        if name.split(".")[0] in ("autograph", "benchmarks"):
            del sys.modules[name]
    sys.path.insert(0, root)
    try:
        from autograph.transpiler import Transpiler as transpiler
        from benchmarks.suite import conversion_sources
        from benchmarks.workloads import get_workloads
        functions = conversion_sources(get_workloads(None))
    finally:
        sys.path.remove(root)
    for f in functions:
        transpiler().convert(f)       # one-time imports and warm-ups
    return transpiler, functions


def compare(other: str, rounds: int = 30) -> None:
    """Cold conversion CPU time, this checkout against ``other``, interleaved."""
    import os

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    versions = {"other": _checkout(os.path.abspath(other)), "this": _checkout(here)}
    names = [f.__name__ for f in versions["this"][1]]
    samples = {k: {n: [] for n in names} for k in versions}
    for r in range(rounds):
        for kind in ("other", "this") if r % 2 else ("this", "other"):
            transpiler, functions = versions[kind]
            for f in functions:
                start = time.process_time()
                transpiler().convert(f)
                samples[kind][f.__name__].append(time.process_time() - start)
    from .report import _table
    from .suite import format_seconds

    rows = []
    for name in [*names, "median"]:
        if name == "median":
            lo = {k: statistics.median(min(v) for v in samples[k].values()) for k in samples}
            mid = {k: statistics.median(statistics.median(v) for v in samples[k].values())
                   for k in samples}
        else:
            lo = {k: min(samples[k][name]) for k in samples}
            mid = {k: statistics.median(samples[k][name]) for k in samples}
        rows.append([name, format_seconds(lo["other"]), format_seconds(lo["this"]),
                     format_seconds(mid["other"]), format_seconds(mid["this"]),
                     f"{lo['this'] / lo['other']:.2f}"])
    print(_table(["function", "other (min)", "this (min)", "other (median)",
                  "this (median)", "this / other (min)"], rows))


def main(cold_reps: int = 20) -> None:
    from .report import _table
    from .suite import conversion_sources, format_seconds
    from .workloads import get_workloads

    rows, results = [], {}
    for f in conversion_sources(get_workloads(None)):
        r = results[f.__name__] = measure(f, cold_reps, 500)
        rows.append([f.__name__, *(format_seconds(r[k]) for k in (
            "cold_s", "cold_min_s", "cached_s", "disk_s", "parse_compile_s"))])
    rows.append(["median", *(format_seconds(statistics.median(r[k] for r in results.values()))
                             for k in ("cold_s", "cold_min_s", "cached_s", "disk_s",
                                       "parse_compile_s"))])
    print(_table(["function", "cold (median)", "cold (min)", "cached", "disk cache",
                  "parse+compile"], rows))
    print(f"disk cache, once per process: {format_seconds(environment_digest_s())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--against"]:
        compare(sys.argv[2], *map(int, sys.argv[3:]))
    else:
        main(*map(int, sys.argv[1:]))
