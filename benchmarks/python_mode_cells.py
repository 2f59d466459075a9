"""Per-iteration cost of converted loops in Python mode, with and without cells.

    python benchmarks/python_mode_cells.py [iterations] [repeats]

A converted function called with Python values runs its loops as Python loops.
A loop whose variables no closure shares passes them as parameters (nothing
extra per iteration); one whose body assigns a variable a closure reads (a cell),
or mutates an object in place, goes through ``autograph/runtime/carried_state.py``, which wraps
the body. Each row is one loop of ``iterations`` steps; the variants are timed
interleaved, run by run, and reported as medians: microseconds per iteration and
the ratio to the original Python function, and for each variant with cells or
objects its ratio to the same loop without them (``over plain``).
"""

from __future__ import annotations

import statistics
import sys
import time

import autograph


def plain_for(n):
    s = 0
    for i in range(n):
        s = s + i
    return s


def cell_for(n):
    s = 0
    read = lambda: s  # noqa: E731 - a closure sharing `s`: a cell variable
    for i in range(n):
        s = s + i
    return s + read()


def plain_while(n):
    s = 0
    i = 0
    while i < n:
        s = s + i
        i += 1
    return s


def cell_while(n):
    s = 0
    i = 0

    def bump(d):
        nonlocal s
        s = s + d

    while i < n:
        bump(i)
        i += 1
    return s


def plain_branch(n):
    s = 0
    for i in range(n):
        if i % 2:
            s = s + i
    return s


def cell_branch(n):
    s = 0
    read = lambda: s  # noqa: E731
    for i in range(n):
        if i % 2:
            s = s + i
    return s + read()


class Accumulator:
    def __init__(self):
        self.total = 0


def object_for(n):
    acc = Accumulator()
    for i in range(n):
        acc.total = acc.total + i
    return acc.total


ROWS = (
    ("for, plain", plain_for, None),
    ("for, a cell", cell_for, "for, plain"),
    ("for, mutating an object", object_for, "for, plain"),
    ("while, plain", plain_while, None),
    ("while, a nonlocal writer", cell_while, "while, plain"),
    ("for + if, plain", plain_branch, None),
    ("for + if, a cell", cell_branch, "for + if, plain"),
)


def _time(fn, n):
    start = time.perf_counter()
    fn(n)
    return time.perf_counter() - start


def measure(iterations=20000, repeats=15):
    """``{row: {"us_per_iteration", "over_python", "over_plain"}}``, medians of
    ``repeats`` interleaved runs."""
    variants = {}
    for name, fn, _ in ROWS:
        converted = autograph.convert(fn)
        assert converted(50) == fn(50), name
        variants[name] = (fn, converted)
    samples = {name: ([], []) for name in variants}
    for _ in range(repeats):
        for name, (fn, converted) in variants.items():
            samples[name][0].append(_time(fn, iterations))
            samples[name][1].append(_time(converted, iterations))
    rows = {}
    for name, _, _ in ROWS:
        python, converted = (statistics.median(s) for s in samples[name])
        rows[name] = {"us_per_iteration": converted / iterations * 1e6,
                      "python_us_per_iteration": python / iterations * 1e6,
                      "over_python": converted / python}
    for name, _, baseline in ROWS:
        if baseline is not None:
            rows[name]["over_plain"] = (rows[name]["us_per_iteration"]
                                        / rows[baseline]["us_per_iteration"])
    return rows


def main(iterations=20000, repeats=15):
    rows = measure(iterations, repeats)
    print(f"Python-mode loops, {iterations} iterations, median of {repeats} interleaved runs")
    print(f"{'loop':28} {'us/iter':>8} {'Python':>8} {'x Python':>9} {'over plain':>11}")
    for name, row in rows.items():
        over = f"{row['over_plain']:.2f}" if "over_plain" in row else ""
        print(f"{name:28} {row['us_per_iteration']:8.3f} {row['python_us_per_iteration']:8.3f} "
              f"{row['over_python']:9.1f} {over:>11}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
