"""Plain-Python mode on real code: a corpus of algorithmic Python, converted vs original.

    python -m benchmarks.python_mode_corpus [rounds]

Called with Python values (no JAX trace active), a converted function must cost
about what the original costs. The corpus below is ordinary algorithmic Python,
written for this benchmark: nested loops over Python ints, recursion, dynamic
programming over lists, sieves, sorting, string and dict work. Every function is
converted with ``autograph.convert`` (the functions it calls are converted too,
as ``converted_call`` converts the user's callees). Each is timed per call,
original and converted in turn, round after round (the order alternating), with
the garbage collector off; the table gives the medians, their ratio, and whether
the function is loop- or call-heavy (the issue's goal: at most 5x on each of
those, at most 2x overall, the overall figure being the ratio of the summed
per-call medians). Each converted result is checked against the original's.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable

from autograph import convert

# -- the corpus ---------------------------------------------------------------------------


def count_pairs(n):
    """Pairs i < j below n whose product leaves 3 modulo 7 (nested loops over ints)."""
    found = 0
    for i in range(n):
        for j in range(i + 1, n):
            if (i * j) % 7 == 3:
                found += 1
    return found


def fib(n):
    """Fibonacci by plain recursion (call-heavy)."""
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def partitions(n, largest):
    """Ways to write n as a sum of parts no larger than ``largest`` (recursion)."""
    if n == 0:
        return 1
    if n < 0 or largest == 0:
        return 0
    return partitions(n - largest, largest) + partitions(n, largest - 1)


def edit_distance(a, b):
    """Levenshtein distance with a full table of lists."""
    rows, cols = len(a) + 1, len(b) + 1
    table = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        table[i][0] = i
    for j in range(cols):
        table[0][j] = j
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1,
                              table[i - 1][j - 1] + cost)
    return table[-1][-1]


def sieve(limit):
    """The primes below ``limit`` (Eratosthenes, with a while loop inside a for)."""
    marks = [True] * limit
    marks[0] = marks[1] = False
    for p in range(2, limit):
        if marks[p]:
            multiple = p * p
            while multiple < limit:
                marks[multiple] = False
                multiple += p
    return [k for k in range(limit) if marks[k]]


def longest_increasing(values):
    """Length of the longest strictly increasing subsequence (quadratic DP)."""
    best = [1] * len(values)
    for i in range(len(values)):
        for j in range(i):
            if values[j] < values[i] and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
    return max(best) if best else 0


def knapsack(weights, gains, capacity):
    """0/1 knapsack over capacities, one row of the table kept."""
    row = [0] * (capacity + 1)
    for w, g in zip(weights, gains, strict=True):
        for c in range(capacity, w - 1, -1):
            if row[c - w] + g > row[c]:
                row[c] = row[c - w] + g
    return row[capacity]


def insertion_sort(items):
    """Sorted copy by insertion (a while loop per item)."""
    out = list(items)
    for i in range(1, len(out)):
        key = out[i]
        j = i - 1
        while j >= 0 and out[j] > key:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = key
    return out


def merge_sort(items):
    """Sorted copy by recursive merging."""
    if len(items) <= 1:
        return list(items)
    middle = len(items) // 2
    left, right = merge_sort(items[:middle]), merge_sort(items[middle:])
    merged, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    merged.extend(left[i:])
    merged.extend(right[j:])
    return merged


def gcd(a, b):
    """Greatest common divisor (Euclid's loop)."""
    while b:
        a, b = b, a % b
    return a


def coprime_count(n):
    """How many pairs below n are coprime (a loop calling a function)."""
    count = 0
    for a in range(1, n):
        for b in range(1, n):
            if gcd(a, b) == 1:
                count += 1
    return count


def word_counts(text):
    """Word frequencies in a dict, most frequent first (string and dict work)."""
    counts = {}
    for word in text.split():
        word = word.strip(".,;:").lower()
        if not word:
            continue
        counts[word] = counts.get(word, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]


def matmul(a, b):
    """Product of two matrices held as lists of lists."""
    n, m, p = len(a), len(b), len(b[0])
    out = [[0.0] * p for _ in range(n)]
    for i in range(n):
        for j in range(p):
            total = 0.0
            for k in range(m):
                total += a[i][k] * b[k][j]
            out[i][j] = total
    return out


def binary_search_all(sorted_values, queries):
    """Index of each query in ``sorted_values`` (or -1), by bisection."""
    found = []
    for q in queries:
        lo, hi = 0, len(sorted_values) - 1
        index = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if sorted_values[mid] == q:
                index = mid
                break
            if sorted_values[mid] < q:
                lo = mid + 1
            else:
                hi = mid - 1
        found.append(index)
    return found


def collatz_lengths(n):
    """The longest Collatz chain starting below n (a while loop in a for loop)."""
    best, start = 0, 1
    for k in range(1, n):
        steps, x = 0, k
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        if steps > best:
            best, start = steps, k
    return start, best


_TEXT = ("the quick brown fox jumps over the lazy dog; the dog sleeps. " * 20).strip()
_VALUES = [(k * 7919) % 101 for k in range(60)]
_MATRIX = [[float((i * 3 + j) % 5) for j in range(12)] for i in range(12)]

# name -> (function, arguments, loop- or call-heavy)
CORPUS: dict[str, tuple[Callable, tuple, bool]] = {
    "count_pairs": (count_pairs, (60,), True),
    "fib": (fib, (15,), True),
    "partitions": (partitions, (18, 18), True),
    "edit_distance": (edit_distance, ("intention", "execution"), True),
    "sieve": (sieve, (2000,), True),
    "longest_increasing": (longest_increasing, (_VALUES,), True),
    "knapsack": (knapsack, ([3, 4, 5, 9, 4], [3, 4, 4, 10, 4], 20), True),
    "insertion_sort": (insertion_sort, (_VALUES,), True),
    "merge_sort": (merge_sort, (_VALUES,), True),
    "coprime_count": (coprime_count, (25,), True),
    "word_counts": (word_counts, (_TEXT,), False),
    "matmul": (matmul, (_MATRIX, _MATRIX), True),
    "binary_search_all": (binary_search_all, (sorted(_VALUES), _VALUES[:20]), True),
    "collatz_lengths": (collatz_lengths, (300,), True),
    "gcd": (gcd, (1071, 462), False),
}


# -- measuring ----------------------------------------------------------------------------


def _per_call(fn, args, budget_s) -> float:
    calls, spent = 0, 0.0
    while spent < budget_s or calls < 3:
        start = time.perf_counter()
        fn(*args)
        spent += time.perf_counter() - start
        calls += 1
    return spent / calls


def measure(rounds: int = 7, budget_s: float = 0.03, corpus=None) -> list[dict]:
    """One row per corpus function: seconds per call of the original and of the
    converted function (medians of interleaved rounds), and their ratio."""
    rows = []
    for name, (fn, args, heavy) in (corpus or CORPUS).items():
        converted = convert(fn)
        if converted(*args) != fn(*args):
            rows.append({"function": name, "error": "converted result differs"})
            continue
        samples: dict[str, list] = {"original": [], "converted": []}
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for r in range(rounds):
                pairs = [("original", fn), ("converted", converted)]
                for kind, f in pairs if r % 2 else pairs[::-1]:
                    samples[kind].append(_per_call(f, args, budget_s))
        finally:
            if gc_was_enabled:
                gc.enable()
        original = statistics.median(samples["original"])
        conv = statistics.median(samples["converted"])
        rows.append({"function": name, "heavy": heavy, "original_s": original,
                     "converted_s": conv, "ratio": conv / original})
    return rows


def summary(rows: list[dict]) -> dict:
    """The overall ratio (summed per-call medians) and the worst loop-heavy ratio."""
    ok = [r for r in rows if "error" not in r]
    overall = sum(r["converted_s"] for r in ok) / sum(r["original_s"] for r in ok)
    geo = statistics.geometric_mean([r["ratio"] for r in ok])
    worst = max((r["ratio"] for r in ok if r["heavy"]), default=0.0)
    return {"overall": overall, "geometric_mean": geo, "worst_heavy": worst}


COLUMNS = ["function", "heavy", "original / call", "converted / call", "converted / original"]


def format_rows(rows: list[dict]) -> list[list[str]]:
    """Table rows, then the summary."""
    from .suite import format_seconds

    out = []
    for r in rows:
        if "error" in r:
            out.append([r["function"], "", "error", r["error"], ""])
            continue
        out.append([r["function"], "yes" if r["heavy"] else "", format_seconds(r["original_s"]),
                    format_seconds(r["converted_s"]), f"{r['ratio']:.2f}x"])
    s = summary(rows)
    out.append(["overall (sum of medians)", "", "", "", f"{s['overall']:.2f}x"])
    out.append(["geometric mean", "", "", "", f"{s['geometric_mean']:.2f}x"])
    out.append(["worst loop/call-heavy", "", "", "", f"{s['worst_heavy']:.2f}x"])
    return out


def main(rounds: int = 7) -> None:
    from .report import _table

    print(_table(COLUMNS, format_rows(measure(rounds))))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
