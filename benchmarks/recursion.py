"""Recursion with Python values: the depth a converted function reaches, and what a
converted recursive call costs, against the original.

    python -m benchmarks.recursion

Depth: the deepest ``n`` for which ``f(n)`` returns rather than raising
``RecursionError`` at the interpreter's current limit (binary search), for the
original, ``convert(f)`` and a ``@convert``-decorated copy, and under ``jax.jit``
with the depth static. Cost: ``f(n)`` per level of recursion, original and
converted timed round-robin in one run (``harness.interleaved_medians``); the
ratio is what the note reports.
"""

from __future__ import annotations

import sys

import jax

import autograph

from .harness import TimingPlan, interleaved_medians


def count(n):
    if n == 0:
        return 0
    return 1 + count(n - 1)


@autograph.convert
def count_decorated(n):
    if n == 0:
        return 0
    return 1 + count_decorated(n - 1)


def count_ternary(n):
    return 0 if n == 0 else 1 + count_ternary(n - 1)


def add_static(x, n):
    if n == 0:
        return x
    return add_static(x, n - 1) + 1.0


def deepest(fn, high=20_000) -> int:
    """The largest ``n`` with ``fn(n)`` free of ``RecursionError``."""
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        try:
            fn(mid)
            low = mid
        except RecursionError:
            high = mid - 1
    return low


def measure(levels=(10, 100), plan: TimingPlan | None = None) -> dict:
    """Depths (original vs converted) and per-level cost ratios, as one dict."""
    plan = plan or TimingPlan(rounds=7, sample_s=0.005, budget_s=1.0)
    converted = autograph.convert(count)
    ternary = autograph.convert(count_ternary)
    jitted = jax.jit(add_static, static_argnums=1)
    jitted_converted = jax.jit(autograph.convert(add_static), static_argnums=1)
    high = sys.getrecursionlimit() * 2
    depth = {
        "limit": sys.getrecursionlimit(),
        "original": deepest(count, high),
        "converted": deepest(converted, high),
        "decorated": deepest(count_decorated, high),
        "ternary_original": deepest(count_ternary, high),
        "ternary_converted": deepest(ternary, high),
        "jit_static_original": deepest(lambda n: jitted(1.0, n), high),
        "jit_static_converted": deepest(lambda n: jitted_converted(1.0, n), high),
    }
    cost = []
    for n in levels:
        medians = interleaved_medians({"original": lambda n=n: count(n),
                                       "converted": lambda n=n: converted(n)}, plan)
        original = medians["original"]["median_s"] / n
        per_level = medians["converted"]["median_s"] / n
        cost.append({"levels": n, "original_ns": original * 1e9,
                     "converted_ns": per_level * 1e9, "ratio": per_level / original})
    return {"depth": depth, "cost": cost}


def main():
    result = measure()
    depth = result["depth"]
    print(f"python {sys.version.split()[0]}, recursion limit {depth['limit']}")
    for kind in ("", "ternary_", "jit_static_"):
        original, converted = depth[f"{kind}original"], depth[f"{kind}converted"]
        print(f"depth {kind or 'if_'}: original {original}, converted {converted} "
              f"({converted / original:.0%})")
    print(f"depth @convert-decorated: {depth['decorated']}")
    for row in result["cost"]:
        print(f"cost per level at depth {row['levels']}: original {row['original_ns']:.0f} ns, "
              f"converted {row['converted_ns']:.0f} ns, ratio {row['ratio']:.1f}x")


if __name__ == "__main__":
    main()
