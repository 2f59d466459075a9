"""Run the whole suite: conversion times, every workload, the scaling curve.

``run_suite(config)`` returns one JSON-ready dict; nothing in it depends on a
workload succeeding: a failure (a ``ConversionError`` from a construct the core
does not support yet, or anything else) is recorded as ``{"error": ...}`` and
the suite goes on.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import jax
import numpy as np

import autograph

from . import (
    conversion,
    first_call,
    lambda_files,
    programs,
    python_loops,
    python_mode_corpus,
    unrolling,
    vmap_select,
)
from . import fold as fold_benchmark
from .harness import TimingPlan, aot_split, error_text, interleaved_medians, timed
from .scaling import measure_scaling
from .workloads import (
    AUTOGRAPH,
    COMPILED_KINDS,
    EAGER,
    HAND_LAX,
    KINDS,
    UNROLLED,
    Workload,
    get_workloads,
)

Progress = Callable[[str], None]


@dataclass
class SuiteConfig:
    """What to run and how hard to time it (see :func:`quick` and :func:`full`)."""

    quick: bool = False
    tiny: bool = False
    only: list[str] | None = None
    plan: TimingPlan = field(default_factory=TimingPlan)
    unroll_cap: int = 1000
    scaling: bool = True
    scaling_ns: tuple[int, ...] = (10, 100, 1000, 10000)
    scaling_unroll_cap: int = 1000
    scaling_repeats: int = 3
    conversion_cold_reps: int = 20
    conversion_cached_reps: int = 2000
    # Whole-suite sections (skipped under ``only``): the first call of a new
    # function split into stages, and converting every lambda of a file of lambdas.
    first_call_rounds: int = 7
    lambda_sizes: tuple[int, ...] = (200, 2000)
    # Plain-Python loops converted: cost per iteration against the original's, per
    # state size (empty: skipped); and the loops staged vs unrolled over the corpora.
    python_loop_sizes: tuple[int, ...] = (1, 100, 10_000)
    python_loop_rounds: int = 9
    # The corpus of algorithmic Python, converted vs original per call (0: skipped).
    python_corpus_rounds: int = 5
    unrolling: bool = True
    # A staged `if` under vmap against hand-written lax.cond and jnp.where (issue 28).
    vmap_select: bool = True
    # autograph.fold on a TreeLSTM (benchmarks/fold.py): "tiny", "small", "full" or None.
    fold_profile: str | None = "small"

    @classmethod
    def quick_preset(cls, **overrides) -> SuiteConfig:
        """Settings that finish in under a minute on a 2-core laptop-class CPU."""
        base = dict(quick=True, plan=TimingPlan(rounds=5, sample_s=0.004, budget_s=0.25),
                    unroll_cap=0, scaling_unroll_cap=100, scaling_repeats=1,
                    conversion_cold_reps=3, conversion_cached_reps=100,
                    first_call_rounds=3, lambda_sizes=(200,), python_loop_rounds=3,
                    python_corpus_rounds=3, fold_profile="tiny")
        return cls(**{**base, **overrides})

    @classmethod
    def full_preset(cls, **overrides) -> SuiteConfig:
        """Settings for figures worth publishing (several minutes)."""
        base = dict(plan=TimingPlan(rounds=15, sample_s=0.02, budget_s=6.0))
        return cls(**{**base, **overrides})


def conversion_sources(workloads: list[Workload]) -> list[Callable]:
    """The distinct user functions behind ``workloads``, plus the scaling probe."""
    seen: dict[str, Callable] = {}
    for w in workloads:
        seen.setdefault(w.source.__name__, w.source)
    seen.setdefault(programs.accumulate.__name__, programs.accumulate)
    return list(seen.values())


def measure_conversions(functions: list[Callable], config: SuiteConfig) -> dict[str, dict]:
    """Cold and cached conversion time of each function, by name."""
    out = {}
    for f in functions:
        try:
            out[f.__name__] = conversion.measure(
                f, config.conversion_cold_reps, config.conversion_cached_reps)
        except Exception as exc:
            out[f.__name__] = {"error": error_text(exc)}
    return out


def _leaves(value: Any) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(value)]


def compare(reference: Any, value: Any, tolerance: float) -> str | None:
    """None when ``value`` equals ``reference`` (within ``tolerance``), else why not."""
    ref, got = _leaves(reference), _leaves(value)
    if len(ref) != len(got):
        return f"{len(got)} leaves, expected {len(ref)}"
    for a, b in zip(ref, got, strict=True):
        if a.shape != b.shape:
            return f"shape {b.shape}, expected {a.shape}"
        if not np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True):
            diff = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))
            return f"max abs difference {diff:.3g}"
    return None


def run_implementations(workload: Workload, tiny: bool = True) -> dict[str, Any]:
    """Each implementation's output on ``workload``'s inputs (the exception if it raised)."""
    args = workload.make_args(tiny)
    outputs = {}
    for kind, build in workload.builders.items():
        try:
            outputs[kind] = jax.block_until_ready(build()(*args))
        except Exception as exc:
            outputs[kind] = exc
    return outputs


def run_workload(workload: Workload, config: SuiteConfig,
                 conversions: dict[str, dict]) -> dict[str, Any]:
    """Measure every implementation of one workload (see the module docstring)."""
    args = workload.make_args(config.tiny)
    impls: dict[str, dict] = {}
    calls: dict[str, Callable[[], Any]] = {}
    outputs: dict[str, Any] = {}
    for kind in KINDS:
        build = workload.builders.get(kind)
        if build is None:
            continue
        if kind == UNROLLED and workload.unroll_cost > config.unroll_cap:
            impls[kind] = {"skipped": f"unroll cost {workload.unroll_cost} over the cap "
                                      f"{config.unroll_cap} (--unroll-cap)"}
            continue
        if kind == EAGER and workload.slow_eager and config.quick:
            impls[kind] = {"skipped": "eager takes tens of seconds per call (run without --quick)"}
            continue
        entry: dict[str, Any] = {}
        try:
            start = time.perf_counter()
            fn = build()
            entry["build_s"] = time.perf_counter() - start
            if kind in COMPILED_KINDS:
                if hasattr(fn, "trace"):
                    entry.update(aot_split(fn, args))
                else:  # not a jit object itself (to_graph wraps one): split its twin
                    entry.update(aot_split(workload.aot_builders[kind](), args))
                    entry["aot_of"] = "the same function under jax.jit, built afresh"
            out, first = timed(lambda fn=fn: fn(*args))
            if kind == EAGER:
                entry["first_call_s"] = first
            else:
                conv = conversions.get(workload.source.__name__, {}) if kind == AUTOGRAPH else {}
                entry["convert_s"] = conv.get("cold_s", 0.0)
                entry["first_call_s"] = (entry["convert_s"] + entry["build_s"] + entry["trace_s"]
                                         + entry["lower_s"] + entry["compile_s"])
            outputs[kind] = out
            calls[kind] = lambda fn=fn: fn(*args)
        except Exception as exc:
            entry = {"error": error_text(exc)}
        if kind in workload.notes:
            entry["note"] = workload.notes[kind]
        impls[kind] = entry

    reference = EAGER if EAGER in outputs else HAND_LAX
    for kind, out in outputs.items():
        if kind != reference:
            mismatch = compare(outputs[reference], out, workload.tolerance)
            impls[kind]["agrees_with_" + reference] = mismatch is None
            if mismatch:
                impls[kind]["mismatch"] = mismatch

    if calls:
        for kind, stats in interleaved_medians(calls, config.plan).items():
            impls[kind].update(stats)
    result = {"name": workload.name, "description": workload.description, "impls": impls}
    hand = impls.get(HAND_LAX, {}).get("median_s")
    hand_min = impls.get(HAND_LAX, {}).get("min_s")
    for kind in (AUTOGRAPH, UNROLLED, EAGER):
        median = impls.get(kind, {}).get("median_s")
        if hand and median:
            result[f"ratio_{kind}_to_hand_lax"] = median / hand
            result[f"min_ratio_{kind}_to_hand_lax"] = impls[kind]["min_s"] / hand_min
    return result


def environment() -> dict[str, Any]:
    """What the figures were measured on."""
    device = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "autograph": getattr(autograph, "__version__", "?"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "backend": jax.default_backend(),
        "device": getattr(device, "device_kind", str(device)),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": sys.argv,
    }


def run_suite(config: SuiteConfig, progress: Progress = print) -> dict[str, Any]:
    """Run everything ``config`` asks for; return the JSON-ready results."""
    started = time.perf_counter()
    workloads = get_workloads(config.only)
    progress(f"converting {len(conversion_sources(workloads))} functions (cold and cached)")
    conversions = measure_conversions(conversion_sources(workloads), config)
    results = []
    for i, workload in enumerate(workloads, 1):
        t0 = time.perf_counter()
        result = run_workload(workload, config, conversions)
        result["wall_s"] = time.perf_counter() - t0
        results.append(result)
        progress(f"[{i}/{len(workloads)}] {_summary(result)}")
    sections = {}
    if config.only is None and config.first_call_rounds:
        progress(f"first call of {len(first_call.CASES)} new functions, split into stages")
        sections["first_call_split"] = first_call.measure(config.first_call_rounds)
    if config.only is None and config.lambda_sizes:
        progress("converting every lambda of files full of lambdas")
        sections["lambda_files"] = lambda_files.measure(config.lambda_sizes)
    if config.only is None and config.python_loop_sizes:
        progress("plain-Python loops converted: cost per iteration by state size")
        sections["python_loops"] = python_loops.measure(config.python_loop_sizes,
                                                        rounds=config.python_loop_rounds)
    if config.only is None and config.python_corpus_rounds:
        progress("a corpus of algorithmic Python, converted vs original per call")
        rows = python_mode_corpus.measure(config.python_corpus_rounds)
        sections["python_mode_corpus"] = {"rows": rows,
                                          "summary": python_mode_corpus.summary(rows)}
    if config.only is None and config.unrolling:
        progress("loops staged and unrolled over the workloads and the test corpus")
        sections["unrolling"] = unrolling.measure()
    if config.only is None and config.vmap_select:
        progress("a staged if under vmap: select vs lax.cond vs jnp.where")
        sections["vmap_select"] = vmap_select.run(quick=config.quick)
    if config.only is None and config.fold_profile:
        progress("autograph.fold: a TreeLSTM over random trees, batched")
        sections["fold"] = fold_benchmark.run(config.fold_profile, progress)
    scaling = []
    if config.scaling:
        scaling = measure_scaling(config.scaling_ns, config.scaling_unroll_cap,
                                  config.scaling_repeats, progress,
                                  give_up_s=5.0 if config.quick else 60.0)
    plan = asdict(config.plan)
    settings = {**asdict(config), "plan": plan}
    return {
        "environment": environment(),
        "settings": settings,
        "conversion": conversions,
        "workloads": results,
        "scaling": scaling,
        **sections,
        "wall_s": time.perf_counter() - started,
    }


def _summary(result: dict) -> str:
    parts = []
    for kind, entry in result["impls"].items():
        if "median_s" in entry:
            parts.append(f"{kind} {format_seconds(entry['median_s'])}")
        elif "error" in entry:
            parts.append(f"{kind} error")
    ratio = result.get(f"ratio_{AUTOGRAPH}_to_hand_lax")
    tail = f"  autograph/hand {ratio:.2f}" if ratio else ""
    return (f"{result['name']:<20} " + ", ".join(parts) + tail
            + f"  ({result['wall_s']:.1f} s)")


def format_seconds(seconds: float) -> str:
    """A short human reading of a duration: 12.3 us, 4.56 ms, 1.23 s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
