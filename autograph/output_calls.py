"""Library calls whose effect is text written outside the program: ``logging``'s
functions and ``Logger`` methods, ``warnings.warn``, a stream's ``write`` and
``writelines`` (``sys.stdout.write``, a file ``open`` gives, text or binary).
Python makes that effect each time the call runs; in a staged branch or loop body
the call would run once, while tracing, whatever the condition. The calls converter
routes them through ``converted_call`` (by the value its name has when the function
is converted) and the runtime makes the call when the program runs, where Python
would (``printing.call_when_run``), as for ``print``.
Shared by ``converters/call_trees.py`` and the runtime."""

from __future__ import annotations

import functools
import io
import logging
import types
import warnings

LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception",
                            "critical", "fatal", "log"})
STREAM_METHODS = frozenset({"write", "writelines"})


@functools.cache
def function_ids() -> frozenset:
    """The ids of the plain functions among them (``warnings.warn``, ``logging.info``)."""
    found = {id(warnings.warn)}
    found.update(id(getattr(logging, name)) for name in LOGGER_METHODS
                 if hasattr(logging, name))
    return frozenset(found)


def writes_output(f) -> bool:
    """Whether calling ``f`` writes text outside the program (see the module)."""
    if type(f) in (types.FunctionType, types.BuiltinFunctionType) and id(f) in function_ids():
        return True
    owner = getattr(f, "__self__", None)
    name = getattr(f, "__name__", None)
    if owner is None or name is None:
        return False
    return writes_output_method(owner, name)


def writes_output_method(owner, name: str) -> bool:
    """Whether ``owner.<name>(...)`` writes text outside the program (a ``Logger``'s
    ``info``, a stream's ``write``: any ``io.IOBase``, a file included)."""
    kind = type(owner)   # not isinstance: an object may set `__class__` to anything
    if issubclass(kind, (logging.Logger, logging.LoggerAdapter)):
        return name in LOGGER_METHODS
    return issubclass(kind, io.IOBase) and name in STREAM_METHODS
