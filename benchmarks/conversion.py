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


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(f: Callable, cold_reps: int = 5, cached_reps: int = 200) -> dict[str, float]:
    """Median cold, cached and decorate seconds for converting ``f``.

    Raises whatever conversion raises (the caller reports it).
    """
    Transpiler().convert(f)  # pay one-time imports and warm-ups outside the timings
    cold = _median_time(lambda: Transpiler().convert(f), cold_reps)
    warm = Transpiler()
    warm.convert(f)
    cached = _median_time(lambda: warm.convert(f), cached_reps)
    decorate = _median_time(lambda: autograph.convert(f), cached_reps)
    return {"cold_s": cold, "cached_s": cached, "decorate_s": decorate,
            "cold_reps": cold_reps, "cached_reps": cached_reps}
