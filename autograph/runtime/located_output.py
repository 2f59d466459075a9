"""A deferred output call (``printing.call_when_run``) made as if from the user's line.

``warnings.warn`` and a ``Logger``'s methods find the line they are called from on
the stack. Made when the compiled program runs, from a host callback, they named
the runtime's frame (``printing.py``) in the warning's ``file:line`` and in the log
record's ``filename``/``lineno``/``funcName``. ``located(f, frame)`` gives a
function that makes the same call placed at ``frame`` (the user's, found while
tracing), as Python places it: ``warnings.warn_explicit`` with the module's
registry (so the ``default`` filter still shows a warning once per line), a
``Logger``'s ``makeRecord`` and ``handle``. A call it cannot place as Python would
(a ``stacklevel`` other than 1, ``exc_info``, ``stack_info``, a ``LoggerAdapter``)
is made as it is.
"""

from __future__ import annotations

import logging
import warnings

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "warn": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
           "fatal": logging.CRITICAL}


def located(f, frame):
    """``f`` (an output call of ``output_calls.py``) made as if called at ``frame``'s
    current line; ``f`` itself where it needs no place or cannot be placed."""
    if f is warnings.warn:
        return _located_warn(frame)
    name = getattr(f, "__name__", None)
    owner = getattr(f, "__self__", None)
    if isinstance(owner, logging.Logger) and (name in _LEVELS or name == "log"):
        return _located_log(f, owner, name, frame, module_level=False)
    if name in _LEVELS and getattr(logging, name, None) is f:   # logging.info(...)
        return _located_log(f, logging.root, name, frame, module_level=True)
    return f


def _located_warn(frame):
    module_globals = frame.f_globals
    filename, lineno = frame.f_code.co_filename, frame.f_lineno

    def warn(message, category=None, stacklevel=1, source=None, **kwargs):
        if stacklevel != 1 or kwargs:
            return warnings.warn(message, category, stacklevel, source, **kwargs)
        if isinstance(message, Warning):
            category = message.__class__
        if category is None:
            category = UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError("category must be a Warning subclass, not "
                            f"'{type(category).__name__}'")
        module = module_globals.get("__name__", "<string>")
        registry = module_globals.setdefault("__warningregistry__", {})
        return warnings.warn_explicit(message, category, filename, lineno, module, registry,
                                      module_globals, source)

    return warn


def _located_log(f, logger, name, frame, module_level):
    filename, lineno, func = frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name

    def log(*args, **kwargs):
        placed = args[1:] if name == "log" else args
        if (not placed or set(kwargs) - {"extra", "stacklevel"}
                or kwargs.get("stacklevel", 1) != 1
                or name == "log" and not isinstance(args[0], int)):
            return f(*args, **kwargs)
        level = args[0] if name == "log" else _LEVELS[name]
        if module_level and not logging.root.handlers:
            logging.basicConfig()
        if not logger.isEnabledFor(level):
            return None
        msg, *rest = placed
        record = logger.makeRecord(logger.name, level, filename, lineno, msg, tuple(rest),
                                   None, func, kwargs.get("extra"), None)
        logger.handle(record)
        return None

    return log
