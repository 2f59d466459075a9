"""Streams a staged ``print`` or write fills only when the compiled program runs.

A ``print(..., file=buf)`` or ``buf.write(...)`` staged under ``jit`` is made when
the program runs (``printing.py``), so while the function is traced the stream
holds none of that text: ``buf.getvalue()`` on the next line would give ``''``
where Python gives the text. ``note`` records such a stream (with the ``jit``
trace the text is deferred into); ``refuse_read`` raises a ``ConversionError``
at the user's line where converted code reads it back (``getvalue``, ``read``,
``tell``...) while that trace is still being traced. A read after the compiled
call returns sees the text, as Python's would, and is left alone.
"""

from __future__ import annotations

import io
import logging
import weakref

from autograph.errors import ConversionError
from autograph.runtime.trace_context import current_trace, under_jit
from autograph.runtime.tracing import caller_location

# The methods that read back what a stream holds (or where its end is).
READS = frozenset({"getvalue", "getbuffer", "read", "read1", "readinto", "readline",
                   "readlines", "tell"})

# id(stream) -> (weak reference to it, the outermost jit trace, the write's Location)
PENDING: dict = {}


def note_call(f, where) -> None:
    """``note`` the streams a deferred output call ``f`` (``output_calls.py``) writes
    to: a stream's own ``write``, or the streams of the handlers a ``Logger`` call
    (``log.info``, ``logging.info``) reaches."""
    owner = getattr(f, "__self__", None)
    if isinstance(owner, io.IOBase):
        note(owner, where)
        return
    if isinstance(owner, logging.LoggerAdapter):
        owner = owner.logger
    if owner is None and getattr(f, "__module__", None) == "logging":
        owner = logging.getLogger()
    while isinstance(owner, logging.Logger):
        for handler in owner.handlers:
            note(getattr(handler, "stream", None), where)
        owner = owner.parent if owner.propagate else None


def note(stream, where) -> None:
    """Record that text for ``stream`` (an ``io`` stream) written at ``where`` (the
    user's line) is deferred into the ``jit`` being traced."""
    if not isinstance(stream, io.IOBase) or not under_jit():
        return
    outermost = None
    trace = current_trace()
    while trace is not None:      # the outermost jaxpr trace: the jit's, not a branch's
        if type(trace).__name__ == "DynamicJaxprTrace":
            outermost = trace
        trace = getattr(trace, "parent_trace", None)
    if outermost is None:
        return
    key = id(stream)
    try:
        ref = weakref.ref(stream, lambda _, key=key, drop=PENDING.pop: drop(key, None))
    except TypeError:   # a stream class without weak references
        return
    entry = PENDING.get(key)
    if entry is None or entry[0]() is not stream or entry[1] is not outermost:
        PENDING[key] = (ref, outermost, where)   # the first such write of this trace


def refuse_read(method) -> None:
    """Raise a ``ConversionError`` at the user's line where ``method`` (a bound read
    method, ``buf.getvalue``) reads a stream whose deferred text the ``jit`` being
    traced now has not written yet."""
    stream = getattr(method, "__self__", None)
    entry = PENDING.get(id(stream))
    if entry is None or entry[0]() is not stream:
        return
    _, deferred_into, written = entry
    trace = current_trace()
    while trace is not None:
        if trace is deferred_into:
            break
        trace = getattr(trace, "parent_trace", None)
    else:
        PENDING.pop(id(stream), None)   # that program has been traced: its text is due
        return
    where = caller_location()
    raise ConversionError(
        f"{type(stream).__name__}.{method.__name__}() here reads back a stream that the "
        f"print, write or log call at line {written.lineno} fills only when the compiled "
        "program runs (it is staged inside jit), so while tracing the stream holds "
        "none of that text, and this read would not see what Python's sees. Read the "
        "stream after the compiled call returns, or build the text with str.format or "
        "an f-string of static values.",
        where.filename, where.lineno)
