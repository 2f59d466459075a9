"""Conversion time per function: cold (nothing cached) and cached.

- cold: a fresh ``autograph.transpiler.Transpiler`` (empty caches) converts the
  function: parse, analyse, rewrite, compile, bind;
- cached: the same transpiler asked again for the same function (what every
  call of a converted function after the first costs to find its conversion);
- decorate: ``autograph.convert(f)`` itself, which only wraps (conversion is
  lazy, on the first call).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import autograph
from autograph.transpiler import Transpiler


def _times(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def measure(f: Callable, cold_reps: int = 5, cached_reps: int = 200) -> dict[str, float]:
    """Cold, cached and decorate seconds for converting ``f`` (medians, and minima).

    Raises whatever conversion raises (the caller reports it).
    """
    Transpiler().convert(f)  # pay one-time imports and warm-ups outside the timings
    cold = _times(lambda: Transpiler().convert(f), cold_reps)
    warm = Transpiler()
    warm.convert(f)
    cached = _times(lambda: warm.convert(f), cached_reps)
    decorate = _times(lambda: autograph.convert(f), cached_reps)
    return {"cold_s": statistics.median(cold), "cold_min_s": min(cold),
            "cached_s": statistics.median(cached), "cached_min_s": min(cached),
            "decorate_s": statistics.median(decorate),
            "cold_reps": cold_reps, "cached_reps": cached_reps}
