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

``--profile [rounds] [rows]`` shows where cold conversion spends its CPU time, by
sampling the stack every 0.3 ms of CPU time (``benchmarks.sampling``): each
function's share of the samples, inclusive and self, with no cost per call. (A
conversion in a hot loop runs with warm caches: ``first_call --profile`` samples
the convert stage as a first call meets it, right after an XLA compile.)

    python -m benchmarks.conversion --profile 100 40
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

from . import against


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
        Transpiler(disk_cache=disk_cache.DiskCache(directory)).convert(f)   # the entry,
        disk_cache.DiskCache(directory).flush()    # in the file (not read from memory)
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
    (``against.import_checkout``), each function converted once (one-time imports
    and warm-ups paid outside the timings)."""
    def load():
        from autograph.transpiler import Transpiler as transpiler
        from benchmarks.suite import conversion_sources
        from benchmarks.workloads import get_workloads
        return transpiler, conversion_sources(get_workloads(None))

    transpiler, functions = against.import_checkout(root, load)
    for f in functions:
        transpiler().convert(f)
    return transpiler, functions


def compare(other: str, rounds: int = 30) -> None:
    """Cold conversion CPU time, this checkout against ``other``, interleaved."""
    import os

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    versions = {"other": _checkout(os.path.abspath(other)), "this": _checkout(here)}
    by_name = {k: {f.__name__: (transpiler, f) for f in functions}
               for k, (transpiler, functions) in versions.items()}

    def sample(kind, name):
        transpiler, f = by_name[kind][name]
        start = time.process_time()
        transpiler().convert(f)
        return time.process_time() - start

    names = [f.__name__ for f in versions["this"][1]]
    print(against.table(against.interleave(["other", "this"], names, sample, rounds)))


def profile(rounds: int = 100, rows: int = 40) -> dict:
    """Print each function's share of the CPU-time samples taken while the benchmark
    functions are converted cold ``rounds`` times: inclusive (on the stack) and
    self (running), as percentages of the samples inside ``Transpiler.convert``
    (the ``rows`` largest of each); return all of them, ``{"inclusive": {function:
    percent}, "self": {...}}``."""
    from .sampling import StackSamples
    from .suite import conversion_sources
    from .workloads import get_workloads

    functions = conversion_sources(get_workloads(None))
    for f in functions:
        Transpiler().convert(f)      # one-time imports and warm-ups
    samples = StackSamples()
    with samples:
        for _ in range(rounds):
            for f in functions:
                Transpiler().convert(f)
    return samples.report("transpiler.py:convert", rows, "Transpiler.convert")


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
    elif sys.argv[1:2] == ["--profile"]:
        profile(*map(int, sys.argv[2:]))
    else:
        main(*map(int, sys.argv[1:]))
