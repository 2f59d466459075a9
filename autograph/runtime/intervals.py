"""What a staged loop's index can be: static bounds of traced loop indices.

A staged ``for`` over a range traces its body once, with the index as a tracer, but
the range says which values that index takes. While such a body is traced,
``bounded(index, low, high)`` records that the tracer ``index`` lies in
``[low, high]``; ``bounds(value)`` answers for a value: a Python int is its own
bounds, a recorded tracer has its loop's, anything else has none. Slices of static
width use it to stay in range (``xs[i:i + k]``, runtime/slices.py), and inner loops
whose range depends on an outer index use it to get a static trip bound
(``loop_bound``: triangular loops, ``for j in range(i)``).
"""

from __future__ import annotations

import contextlib
import itertools
import operator
from dataclasses import dataclass

import numpy as np

from autograph.runtime.trace_context import FRAMES, pushed
from autograph.runtime.tracing import is_tracer

_RANGE_ITERATOR = type(iter(range(0)))
# How many combinations of outer index values ``loop_bound`` evaluates at most.
MAX_COMBINATIONS = 1 << 16


@contextlib.contextmanager
def bounded(index, low: int, high: int):
    """While the block runs, the tracer ``index`` is known to lie in ``[low, high]``."""
    with pushed(FRAMES.index_bounds, (index, low, high)):
        yield


def bounds(value) -> tuple[int, int] | None:
    """``(low, high)`` that ``value`` lies in: a Python int's own value, a recorded
    loop index's bounds; None when not known."""
    if not is_tracer(value):
        try:
            exact = operator.index(value)
        except TypeError:
            return None
        return exact, exact
    for index, low, high in reversed(FRAMES.index_bounds):
        if index is value:
            return low, high
    return None


@dataclass(frozen=True)
class LoopBound:
    """The most iterations an inner loop's range has (``trips``) and the values its
    index takes (``low``..``high``; ``None`` when it never runs), over every value
    the enclosing loops' indices take."""

    trips: int
    low: int | None
    high: int | None


def counter_bound(start, limit, step: int = 1, inclusive: bool = False) -> int | None:
    """The most iterations a ``while`` can run whose test holds ``counter < limit``
    (``<=`` with ``inclusive``) and whose body adds ``step`` (> 0) to the counter
    once per iteration, the counter starting at ``start``: None (no bound) unless
    ``start`` and ``limit`` are Python ints. The converters pass it as the loop's
    ``maximum_iterations`` (``converters/loop_bounds.py``): ``while err > tol and
    i < 30`` with ``i += 1`` from ``i = 0`` runs at most 30 times, so its staged
    form is reverse-differentiable."""
    if not (_is_int(start) and _is_int(limit)):
        return None
    span = int(limit) - int(start) + (1 if inclusive else 0)
    return max(0, -(-span // step))


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def loop_bound(range_at, *indices) -> LoopBound | None:
    """``LoopBound`` of the ranges ``range_at(*values)`` for every combination of
    values that the enclosing loops' ``indices`` take; None when an index is not a
    staged loop index with known bounds (the inner range is then a Python range,
    or unbounded) or the ranges cannot be computed from Python ints.

    The converters pass it where a ``for`` over a ``range`` depends on the index of
    an enclosing ``for`` over a range: ``for j in range(i + 1, n)`` gives
    ``bound=ag__.loop_bound(lambda i: ag__.range_(i + 1, n), i)``."""
    spans = []
    for index in indices:
        known = bounds(index)
        if known is None or not any(is_tracer(i) for i in indices):
            return None
        spans.append(range(known[0], known[1] + 1))
    count = 1
    for span in spans:
        count *= len(span)
    if count > MAX_COMBINATIONS:
        return None
    trips, low, high = 0, None, None
    try:
        for values in itertools.product(*spans):
            rng = range_at(*values)
            if type(rng) is _RANGE_ITERATOR:  # reversed(range(...))
                _, (rng,), _ = rng.__reduce__()
            if not isinstance(rng, range):
                return None
            trips = max(trips, len(rng))
            if len(rng):
                first, last = min(rng[0], rng[-1]), max(rng[0], rng[-1])
                low = first if low is None else min(low, first)
                high = last if high is None else max(high, last)
    except Exception:  # noqa: BLE001 - a bound that is not a Python int: unknown
        return None
    return LoopBound(trips, low, high)


__all__ = ["LoopBound", "bounded", "bounds", "loop_bound"]
