"""Measurement primitives: interleaved timing, AOT first-call split, jaxpr sizes.

All timings use ``time.perf_counter`` and block on every result
(``jax.block_until_ready``), so asynchronous dispatch never flatters a number.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax


def block(value: Any) -> Any:
    """Wait for every array in ``value`` (any pytree) to be computed."""
    return jax.block_until_ready(value)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn()`` once, blocking on its result; return (result, seconds)."""
    start = time.perf_counter()
    out = block(fn())
    return out, time.perf_counter() - start


def error_text(exc: BaseException, limit: int = 300) -> str:
    """A one-line description of ``exc`` for tables and JSON."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class TimingPlan:
    """How hard to time: rounds, time per sample, and a per-implementation budget."""

    rounds: int = 7
    sample_s: float = 0.005
    budget_s: float = 1.0
    max_calls: int = 2000


def interleaved_medians(fns: dict[str, Callable[[], Any]], plan: TimingPlan) -> dict[str, dict]:
    """Median seconds per call of each ``fns[k]()``, timed round-robin.

    Each round times every implementation once, in an order rotated each round,
    so that slow drifts of a noisy machine hit all of them alike. A sample runs
    an implementation enough times to last about ``plan.sample_s``. An
    implementation stops being sampled once it has spent ``plan.budget_s``
    (after at least one sample; the calibration call counts as the only sample
    when it alone takes that long), so a slow eager run cannot stall the suite.
    The garbage collector is off while timing (collected between rounds, as
    ``timeit`` does): otherwise a collection triggered by one implementation's
    garbage lands in another's sample.
    """
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        return _interleaved_medians(fns, plan)
    finally:
        if gc_was_enabled:
            gc.enable()


def _interleaved_medians(fns: dict[str, Callable[[], Any]], plan: TimingPlan) -> dict[str, dict]:
    calls = {}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    spent = dict.fromkeys(fns, 0.0)
    for name, fn in fns.items():
        calls[name], elapsed, n = _calibrate(fn, plan)
        if elapsed >= plan.budget_s:  # too slow to sample again: this run is the sample
            samples[name].append(elapsed / n)
            spent[name] = elapsed
    names = list(fns)
    for r in range(plan.rounds):
        gc.collect()
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            if samples[name] and spent[name] >= plan.budget_s:
                continue
            n = calls[name]
            elapsed = _run(fns[name], n)
            spent[name] += elapsed
            samples[name].append(elapsed / n)
    return {
        name: {
            "median_s": statistics.median(s),
            "min_s": min(s),
            "samples": len(s),
            "calls_per_sample": calls[name],
        }
        for name, s in samples.items()
    }


def _run(fn: Callable[[], Any], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        out = fn()
    block(out)
    return time.perf_counter() - start


def _calibrate(fn: Callable[[], Any], plan: TimingPlan) -> tuple[int, float, int]:
    """Calls per sample for ``fn``: double a batch until it lasts half a sample.

    Returns (calls per sample, seconds of the last batch, its size). A single
    call is too noisy a yardstick on a busy machine, hence the doubling.
    """
    n = 1
    while True:
        elapsed = _run(fn, n)
        if elapsed >= plan.sample_s / 2 or elapsed >= plan.budget_s or n >= plan.max_calls:
            break
        n *= 2
    if elapsed < plan.budget_s / 4:  # cheap to check again: a hiccup must not set n
        elapsed = min(elapsed, _run(fn, n), _run(fn, n))
    per_call = elapsed / n
    return max(1, min(plan.max_calls, round(plan.sample_s / per_call))), elapsed, n


def count_eqns(jaxpr) -> dict[str, int]:
    """Equation counts of a (closed) jaxpr: top level, and recursive into sub-jaxprs."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    return {"top": len(inner.eqns), "total": _count_recursive(inner)}


def _count_recursive(jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for sub in _sub_jaxprs(eqn.params.values()):
            total += _count_recursive(sub)
    return total


def _sub_jaxprs(values):
    for value in values:
        if isinstance(value, tuple | list):
            yield from _sub_jaxprs(value)
        elif hasattr(value, "eqns"):
            yield value
        elif hasattr(getattr(value, "jaxpr", None), "eqns"):
            yield value.jaxpr


def aot_split(jitted, args: tuple) -> dict[str, Any]:
    """First-call cost of a ``jax.jit`` object, split into its AOT stages.

    Returns the seconds spent in ``trace``, ``lower`` and ``compile``, the jaxpr
    equation counts, and the bytes of temporary memory the compiled program
    allocates at its peak (XLA's memory analysis; None where the backend gives
    none). ``jitted`` should be fresh (never called) so that no stage hits a cache.
    """
    start = time.perf_counter()
    traced = jitted.trace(*args)
    t_trace = time.perf_counter()
    lowered = traced.lower()
    t_lower = time.perf_counter()
    compiled = lowered.compile()
    t_compile = time.perf_counter()
    memory = compiled.memory_analysis()
    return {
        "trace_s": t_trace - start,
        "lower_s": t_lower - t_trace,
        "compile_s": t_compile - t_lower,
        "eqns": count_eqns(traced.jaxpr),
        "temp_bytes": getattr(memory, "temp_size_in_bytes", None),
    }


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn`` (no blocking: host-side work)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
