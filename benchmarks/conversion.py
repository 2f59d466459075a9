"""Conversion time per function: cold (nothing cached) and cached.

Cold conversion is measured on a copy of the function whose code object is new
(a distinct ``co_name``), so the per-code-object cache cannot answer; the
conversion is forced by ``autograph.to_code``'s sibling, a plain ``convert``
followed by whatever makes the transpiler do its work (see ``_force``).
Cached conversion is ``autograph.convert(f)`` once ``f`` has been converted.
"""

from __future__ import annotations

import itertools
import statistics
import time
import types
from collections.abc import Callable

import autograph

_fresh_ids = itertools.count()


def cold_copy(f: Callable) -> Callable:
    """A function equal to ``f`` but with a code object no cache has seen."""
    code = f.__code__.replace(co_name=f"{f.__code__.co_name}__cold{next(_fresh_ids)}")
    g = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__module__ = f.__module__
    return g


def _force(converted: Callable) -> None:
    """Make sure the transpiler has done its work for ``converted``."""
    autograph.to_code(converted)


def measure(f: Callable, cold_reps: int = 5, cached_reps: int = 200) -> dict[str, float]:
    """Median cold and cached conversion seconds of ``f``.

    Raises whatever conversion raises (the caller reports it).
    """
    _force(autograph.convert(cold_copy(f)))  # warm the transpiler's own imports
    cold = []
    for _ in range(cold_reps):
        g = cold_copy(f)
        start = time.perf_counter()
        _force(autograph.convert(g))
        cold.append(time.perf_counter() - start)
    _force(autograph.convert(f))
    cached = []
    for _ in range(cached_reps):
        start = time.perf_counter()
        autograph.convert(f)
        cached.append(time.perf_counter() - start)
    return {"cold_s": statistics.median(cold), "cached_s": statistics.median(cached),
            "cold_reps": cold_reps, "cached_reps": cached_reps}
