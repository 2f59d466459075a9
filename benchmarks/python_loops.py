"""Plain-Python loops, converted: the cost per iteration against the original's.

    python -m benchmarks.python_loops [size ...]

Called with Python values a converted function runs its loops as Python loops;
deciding that must cost what Python costs, whatever the loop carries. Each program
here runs ``ITERATIONS`` iterations of a loop whose state already holds ``size``
items (1, 100, 10,000): a scalar accumulator beside a list it writes, a list it
appends to, a dict it fills; as a ``for`` and as a ``while``. Reported per program
and size: the original's and the converted function's time per iteration, the
converted loop's cost per iteration beyond the original's, and their ratio, from
one interleaved run.
"""

from __future__ import annotations

import functools
import gc
import statistics
import sys
import time
from collections.abc import Callable

from autograph import convert

SIZES = (1, 100, 10_000)
ITERATIONS = 200


def accumulate_for(table, n):
    total = 0
    for i in range(n):
        total += i
        table[i % len(table)] = total
    return total


def append_for(items, n):
    for i in range(n):
        items.append(i)
    return items


def fill_dict_for(mapping, n):
    for i in range(n):
        mapping[-1 - i] = i
    return mapping


def accumulate_while(table, n):
    total = 0
    i = 0
    while i < n:
        total += i
        table[i % len(table)] = total
        i += 1
    return total


def append_while(items, n):
    i = 0
    while i < n:
        items.append(i)
        i += 1
    return items


def fill_dict_while(mapping, n):
    i = 0
    while i < n:
        mapping[-1 - i] = i
        i += 1
    return mapping


def _list_state(size):
    return list(range(size))


def _dict_state(size):
    return {k: k for k in range(size)}


PROGRAMS: dict[str, tuple[Callable, Callable]] = {
    "scalar accumulator (for)": (accumulate_for, _list_state),
    "list append (for)": (append_for, _list_state),
    "dict fill (for)": (fill_dict_for, _dict_state),
    "scalar accumulator (while)": (accumulate_while, _list_state),
    "list append (while)": (append_while, _list_state),
    "dict fill (while)": (fill_dict_while, _dict_state),
}


def measure(sizes=SIZES, iterations: int = ITERATIONS, rounds: int = 9,
            budget_s: float = 0.05, programs: dict | None = None) -> list[dict]:
    """One row per program and state size: seconds per iteration of the original and
    of the converted function, and converted / original. Each call gets a fresh
    state of ``size`` items, built outside the timed span; the two functions are
    timed in turn, round after round (order alternating), for about ``budget_s``
    each per round, with the garbage collector off; medians over the rounds."""
    rows = []
    for name, (fn, make_state) in (programs or PROGRAMS).items():
        converted = convert(fn)
        for size in sizes:
            if converted(make_state(size), iterations) != fn(make_state(size), iterations):
                rows.append({"program": name, "size": size,
                             "error": "converted result differs from the original"})
                continue
            per = _interleaved({"original": fn, "converted": converted},
                               functools.partial(make_state, size), iterations, rounds,
                               budget_s)
            rows.append({"program": name, "size": size, "iterations": iterations,
                         "original_s": per["original"], "converted_s": per["converted"],
                         "overhead_s": per["converted"] - per["original"],
                         "ratio": per["converted"] / per["original"]})
    return rows


def _interleaved(fns: dict, make_state, iterations, rounds, budget_s) -> dict:
    samples = {name: [] for name in fns}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            gc.collect()
            for name in (list(fns) if r % 2 else list(fns)[::-1]):
                fn, spent, calls = fns[name], 0.0, 0
                while spent < budget_s or calls < 3:
                    state = make_state()
                    start = time.perf_counter()
                    fn(state, iterations)
                    spent += time.perf_counter() - start
                    calls += 1
                samples[name].append(spent / calls / iterations)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def _ns(seconds: float) -> str:
    return f"{seconds * 1e9:,.0f} ns"


def format_rows(rows: list[dict]) -> list[list[str]]:
    """Table rows: program, state size, original and converted per iteration, ratio."""
    out = []
    for r in rows:
        if "error" in r:
            out.append([r["program"], str(r["size"]), "error", r["error"][:60], "", ""])
            continue
        ratio = f"{r['ratio']:.1f}x"
        out.append([r["program"], f"{r['size']:,}", _ns(r["original_s"]),
                    _ns(r["converted_s"]), _ns(r["overhead_s"]), ratio])
    return out


COLUMNS = ["loop (Python values)", "state size", "original / iteration",
           "converted / iteration", "overhead / iteration", "converted / original"]


def main(*sizes: int) -> None:
    from .report import _table

    print(_table(COLUMNS, format_rows(measure(sizes or SIZES))))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
