"""Errors raised by autograph, each naming the user's own file and line.

This module imports nothing of autograph, so that every layer can raise these.
The notes added to other errors at a converted function's boundary live in
``error_notes.py``.
"""

from __future__ import annotations

import linecache


class ConversionError(Exception):
    """A construct that autograph cannot convert or stage.

    The message names the user's file and line, shows the source line with a
    caret under the construct, says what went wrong and what to do instead.
    """

    def __init__(self, message: str, filename: str | None = None,
                 lineno: int | None = None, col_offset: int | None = None):
        self.raw_message = message
        self.filename = filename
        self.lineno = lineno
        self.col_offset = col_offset
        super().__init__(format_located(message, filename, lineno, col_offset))


class StagingTypeError(ConversionError, TypeError):
    """A staged variable whose type, shape or structure differs between the
    branches of an ``if`` or across a loop iteration.

    It is a ``TypeError`` too, so code that catches JAX's own type errors still
    catches it.
    """


def format_located(message: str, filename: str | None, lineno: int | None,
                   col_offset: int | None = None) -> str:
    """Prefix ``message`` with ``file:line`` and show that source line with a caret
    (under ``col_offset``, or under the statement's start when it is not known)."""
    if filename is None or lineno is None:
        return message
    text = f"{filename}:{lineno}: {message}"
    line = linecache.getline(filename, lineno)
    if line.strip():
        stripped = line.rstrip("\n")
        text += f"\n    {stripped.strip()}"
        indent = len(stripped) - len(stripped.lstrip())
        caret_at = 0 if col_offset is None else max(col_offset - indent, 0)
        text += "\n    " + " " * caret_at + "^"
    return text
