"""How a staged ``print`` or ``assert`` is emitted, and what surrounds the trace.

A ``print`` or ``assert`` of traced values is a side effect of the compiled
program. By default a print is an ordered host callback and an assert a check that
stops the program (a host callback that raises), or a ``checkify`` check when the
function is being traced under ``jax.experimental.checkify.checkify``. The modes
change that for the code traced while they are in force (``autograph.convert(f,
prints=..., asserts=...)`` and ``autograph.staged_effects(...)`` set them):

- ``prints``: ``"callback"`` (default) or ``"drop"`` (a staged print is left out of
  the program; a print run as plain Python still prints);
- ``asserts``: ``"auto"`` (default: a checkify check under ``checkify.checkify``,
  else a host check), ``"callback"`` (always the host check), ``"checkify"``
  (always a checkify check: wrap the function with ``checkify.checkify``) or
  ``"drop"`` (a traced assert is not checked, as under ``python -O``; a Python
  assert still is).

The modes are read while tracing, so they travel with the trace: a function that
``jax.jit`` has already traced keeps what it was traced with.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass

from autograph.runtime.trace_context import FRAMES, current_trace

PRINT_MODES = ("callback", "drop")
ASSERT_MODES = ("auto", "callback", "checkify", "drop")


@dataclass(frozen=True)
class Modes:
    """The modes in force: ``prints`` and ``asserts`` (see the module docstring)."""

    prints: str = "callback"
    asserts: str = "auto"


DEFAULT = Modes()


def current() -> Modes:
    """The modes in force on this thread."""
    return FRAMES.modes or DEFAULT


def validate(prints=None, asserts=None) -> None:
    """Raise ``ValueError`` for a mode that does not exist."""
    for name, value, allowed in (("prints", prints, PRINT_MODES),
                                 ("asserts", asserts, ASSERT_MODES)):
        if value is not None and value not in allowed:
            raise ValueError(f"{name}={value!r}: expected one of "
                             + ", ".join(repr(a) for a in allowed))


@contextlib.contextmanager
def using(prints=None, asserts=None):
    """While the block runs (and traces), the given modes; ``None`` keeps the mode
    in force."""
    validate(prints, asserts)
    before = current()
    FRAMES.modes = Modes(prints if prints is not None else before.prints,
                         asserts if asserts is not None else before.asserts)
    try:
        yield
    finally:
        FRAMES.modes = before


def under_checkify() -> bool:
    """Whether the current trace is nested in one made by ``checkify.checkify``
    (which turns ``checkify.check`` into the error value it returns)."""
    trace = current_trace()
    while trace is not None:
        info = getattr(getattr(trace, "frame", None), "debug_info", None)
        if getattr(info, "traced_for", None) == "checkify":
            return True
        trace = getattr(trace, "parent_trace", None)
    return False


_EXPORT_MODULE = "jax._src.export._export"


def under_export() -> bool:
    """Whether the current trace is made by ``jax.export.export`` (which cannot
    serialize host callbacks)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == _EXPORT_MODULE:
            return True
        frame = frame.f_back
    return False


def export_error_text(what: str, fix: str) -> str:
    """The message for a staged ``print``/``assert`` met while ``jax.export`` traces."""
    return (f"this {what} of a traced value is staged as a host callback, which "
            f"jax.export cannot serialize. For an exported program, {fix}.")
