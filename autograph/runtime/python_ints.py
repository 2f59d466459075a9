"""Traced int32 scalars that stand for a Python int of the user's program.

A Python int a staged region carries (``k`` in ``if x > 3: k += 5``, or in a loop
whose condition is traced) leaves it as a traced int32: it then reads traced data,
and no value of it is worked out while tracing. Python's int never wraps; the
int32 does. The regions note such values here (``note``), and a later staged loop
that steps one by literals checks it for a wrap in each iteration, its value being
unknown (``loops._StepChecks``): ``k`` carried by an outer loop into an inner one
is such a value.

The notes are weak: a value is forgotten with its tracer.
"""

from __future__ import annotations

import weakref

import numpy as np

from autograph.runtime.tracing import is_tracer

_NOTED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def is_noted(value) -> bool:
    """Whether ``value`` is a traced scalar noted as a Python int of the program."""
    return is_tracer(value) and _NOTED.get(id(value)) is value


def stands_for_int(value) -> bool:
    """Whether ``value`` is a Python int (not a bool) or a traced one noted so."""
    return type(value) is int or is_noted(value)


def mark(value) -> None:
    """Note ``value`` (a traced signed-integer scalar) as a Python int of the program."""
    if is_tracer(value) and getattr(value, "ndim", None) == 0 \
            and np.issubdtype(value.dtype, np.signedinteger):
        _NOTED[id(value)] = value


def note(given, out) -> None:
    """Note the traced scalars of ``out`` (a region's outputs, by position) whose
    ``given`` value (its input at that position) was a Python int or noted."""
    for before, after in zip(given, out, strict=False):
        if stands_for_int(before):
            mark(after)
