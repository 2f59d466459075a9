"""This checkout against another, in one process: what ``--against`` of
``benchmarks.conversion`` and ``benchmarks.trace_time`` shares.

Separate runs on a shared, loaded machine differ by more than the changes being
measured, so both checkouts are imported side by side (``import_checkout``),
timed round by round in alternating order (``interleave``), and compared by the
minimum and the median of each entry (``table``).
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable


def import_checkout(root: str, load: Callable[[], object]):
    """What ``load()`` returns, run with the checkout at ``root`` first on the path
    and ``autograph`` and ``benchmarks`` taken out of ``sys.modules`` first: two
    checkouts live side by side in one process, each module holding its own
    globals."""
    for name in list(sys.modules):
        if name.split(".")[0] in ("autograph", "benchmarks"):
            del sys.modules[name]
    sys.path.insert(0, root)
    try:
        return load()
    finally:
        sys.path.remove(root)


def interleave(kinds: list[str], names: list[str], sample: Callable[[str, str], float],
               rounds: int) -> dict[str, dict[str, list[float]]]:
    """``{kind: {name: seconds of each round}}``: ``sample(kind, name)`` times one
    entry of one version; each round runs every version's entries, the versions in
    alternating order."""
    samples = {k: {n: [] for n in names} for k in kinds}
    for r in range(rounds):
        for kind in (kinds if r % 2 == 0 else kinds[::-1]):
            for name in names:
                samples[kind][name].append(sample(kind, name))
    return samples


def table(samples: dict[str, dict[str, list[float]]], entry: str = "function") -> str:
    """Per entry and over all (the median of the entries' minima and medians): each
    version's minimum and median, and, where there is an ``other``, the ratio of
    ``this`` to it (minima)."""
    from .report import _table
    from .suite import format_seconds

    kinds = list(samples)
    names = list(next(iter(samples.values())))
    rows = []
    for name in [*names, "median"]:
        if name == "median":
            lo = {k: statistics.median(min(v) for v in samples[k].values()) for k in kinds}
            mid = {k: statistics.median(statistics.median(v) for v in samples[k].values())
                   for k in kinds}
        else:
            lo = {k: min(samples[k][name]) for k in kinds}
            mid = {k: statistics.median(samples[k][name]) for k in kinds}
        row = [name, *(format_seconds(lo[k]) for k in kinds),
               *(format_seconds(mid[k]) for k in kinds)]
        if "other" in samples:
            row.append(f"{lo['this'] / lo['other']:.2f}")
        rows.append(row)
    headers = [entry, *(f"{k} (min)" for k in kinds), *(f"{k} (median)" for k in kinds)]
    if "other" in samples:
        headers.append("this / other (min)")
    return _table(headers, rows)
