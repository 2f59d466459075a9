"""Streams a staged ``print`` or write fills only when the compiled program runs.

A ``print(..., file=buf)`` or ``buf.write(...)`` staged under ``jit`` is made when
the program runs (``printing.py``), so while the function is traced the stream
holds none of that text: ``buf.getvalue()`` on the next line would give ``''``
where Python gives the text. ``note`` records such a stream (with the ``jit``
trace the text is deferred into); ``refuse_read`` raises a ``ConversionError``
at the user's line where converted code reads it back (``getvalue``, ``read``,
``tell``...) while that trace is still being traced. A read after the compiled
call returns sees the text, as Python's would, and is left alone. In the same way,
a log call deferred so goes through its loggers when the program runs:
``refuse_logger_change`` refuses a change of their level, handlers or filters
(``log.setLevel``) made while that trace is traced.
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
# The methods that change what a logger's call does: its level, handlers, filters.
LOGGER_CHANGES = frozenset({"setLevel", "addHandler", "removeHandler", "addFilter",
                            "removeFilter"})

# id(stream or logger) -> (weak references to it and to the outermost jit trace,
# the deferred call's Location)
PENDING: dict = {}


def note_call(f, where) -> None:
    """``note`` what a deferred output call ``f`` (``output_calls.py``) depends on: a
    stream's own ``write``: the stream; a ``Logger`` call (``log.info``,
    ``logging.info``): the loggers it goes through and their handlers' streams."""
    owner = getattr(f, "__self__", None)
    if isinstance(owner, io.IOBase):
        note(owner, where)
        return
    if isinstance(owner, logging.LoggerAdapter):
        owner = owner.logger
    if owner is None and getattr(f, "__module__", None) == "logging":
        owner = logging.getLogger()
    while isinstance(owner, logging.Logger):
        note(owner, where)
        for handler in owner.handlers:
            note(getattr(handler, "stream", None), where)
        owner = owner.parent if owner.propagate else None


def note(target, where) -> None:
    """Record that a call made at ``where`` (the user's line) that writes to
    ``target`` (an ``io`` stream, or a ``Logger`` it goes through) is deferred into
    the ``jit`` being traced."""
    if not isinstance(target, (io.IOBase, logging.Logger)) or not under_jit():
        return
    outermost = None
    trace = current_trace()
    while trace is not None:      # the outermost jaxpr trace: the jit's, not a branch's
        if type(trace).__name__ == "DynamicJaxprTrace":
            outermost = trace
        trace = getattr(trace, "parent_trace", None)
    if outermost is None:
        return
    key = id(target)
    try:
        ref = weakref.ref(target, lambda _, key=key, drop=PENDING.pop: drop(key, None))
    except TypeError:   # a stream class without weak references
        return
    entry = PENDING.get(key)
    if entry is None or entry[0]() is not target or entry[1]() is not outermost:
        # the first such call of this trace (held weakly: a trace holds its program)
        PENDING[key] = (ref, weakref.ref(outermost), where)


def _deferred_here(target):
    """The Location of the first call deferred into the ``jit`` being traced now
    that writes to ``target``, or None."""
    entry = PENDING.get(id(target))
    if entry is None or entry[0]() is not target:
        return None
    _, deferred_into, written = entry
    deferred_into = deferred_into()
    trace = current_trace() if deferred_into is not None else None
    while trace is not None:
        if trace is deferred_into:
            return written
        trace = getattr(trace, "parent_trace", None)
    PENDING.pop(id(target), None)   # that program has been traced: its calls are due
    return None


def refuse_read(method) -> None:
    """Raise a ``ConversionError`` at the user's line where ``method`` (a bound read
    method, ``buf.getvalue``) reads a stream whose deferred text the ``jit`` being
    traced now has not written yet."""
    stream = getattr(method, "__self__", None)
    written = _deferred_here(stream)
    if written is None:
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


def refuse_logger_change(method) -> None:
    """Raise a ``ConversionError`` at the user's line where ``method`` (a bound
    ``Logger.setLevel``, ``addHandler``...) changes a logger that a log call deferred
    into the ``jit`` being traced now goes through: the change is made now, while
    tracing, before that call is made, when the program runs."""
    logger = getattr(method, "__self__", None)
    logged = _deferred_here(logger)
    if logged is None:
        return
    where = caller_location()
    raise ConversionError(
        f"this {method.__name__}() changes the logger {logger.name!r}, which the log "
        f"call at line {logged.lineno} goes through; that call is staged inside jit and "
        "made when the compiled program runs, after this change (made now, while "
        "tracing), so it would log with the logger as changed, not as Python's call "
        "finds it. Configure the logger outside the function, before the call.",
        where.filename, where.lineno)
