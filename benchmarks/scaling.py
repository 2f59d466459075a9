"""Compile-time scaling of ``for i in range(n)`` with the trip count ``n``.

Converted code stages the loop once (one loop primitive whatever ``n``), so its
trace and compile time stay flat; ``jax.jit`` of the original unrolls ``n``
bodies and grows with ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import jax
import jax.numpy as jnp

import autograph

from . import programs as p
from .harness import aot_split, error_text
from .workloads import AUTOGRAPH, HAND_LAX, UNROLLED, fresh

BUILDERS: dict[str, Callable[[], Callable]] = {
    # What to_graph compiles (to_graph itself may wrap the jit object in a function).
    AUTOGRAPH: lambda: jax.jit(autograph.convert(fresh(p.accumulate))),
    HAND_LAX: lambda: jax.jit(fresh(p.accumulate_lax)),
    UNROLLED: lambda: jax.jit(fresh(p.accumulate)),
}


def measure_scaling(ns: Iterable[int], unroll_cap: int, repeats: int = 1,
                    progress: Callable[[str], None] | None = None,
                    give_up_s: float = 20.0) -> list[dict]:
    """Trace/lower/compile seconds and jaxpr size of each implementation per ``n``.

    The unrolled implementation is skipped above ``unroll_cap``, and any
    implementation is skipped for larger ``n`` once one of its compiles took
    more than ``give_up_s`` (so a loop that does get unrolled cannot stall the
    suite). With ``repeats`` > 1 the run with the smallest total is kept
    (compile times only ever get slower from noise).
    """
    rows = []
    too_slow: dict[str, str] = {}
    for n in ns:
        x = jnp.linspace(0.0, 1.0, n, dtype=jnp.float32)
        for kind, build in BUILDERS.items():
            row = {"n": n, "kind": kind}
            if kind == UNROLLED and n > unroll_cap:
                row["skipped"] = f"n > unroll cap {unroll_cap}"
            elif kind in too_slow:
                row["skipped"] = too_slow[kind]
            if "skipped" in row:
                rows.append(row)
                continue
            try:
                best = None
                for _ in range(repeats if n <= unroll_cap else 1):
                    split = aot_split(build(), (x,))
                    split["total_s"] = split["trace_s"] + split["lower_s"] + split["compile_s"]
                    if best is None or split["total_s"] < best["total_s"]:
                        best = split
                row.update(best)
                if best["total_s"] > give_up_s:
                    too_slow[kind] = f"n={n} took {best['total_s']:.0f} s to compile"
            except Exception as exc:
                row["error"] = error_text(exc)
            rows.append(row)
            if progress:
                progress(_describe(row))
    return rows


def _describe(row: dict) -> str:
    if "error" in row:
        return f"scaling n={row['n']:>5} {row['kind']:<9} error: {row['error']}"
    return (f"scaling n={row['n']:>5} {row['kind']:<9} "
            f"{row['total_s'] * 1e3:8.1f} ms  ({row['eqns']['total']} eqns)")
