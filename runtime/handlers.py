"""What an ``except`` clause of converted code may handle.

Python raises an exception only on the paths that run. A staged branch or loop
is traced whatever its condition, so an exception raised while tracing it (a
``raise`` under a traced ``if`` in a called function, say) would reach an
``except`` clause for every input, and the compiled program raises nothing when it
runs: handling it would compute something Python does not. Nor is a
``ConversionError`` (autograph refusing a construct) an error of the user's
computation. ``except`` clauses whose ``try`` calls functions check what they
caught first (``converters/try_statements.py``).
"""

from __future__ import annotations

import sys

from autograph.errors import ConversionError
from autograph.runtime.regions import regions_of
from autograph.runtime.tracing import caller_location


def check_caught():
    """Called first in an ``except`` clause: let the exception being handled through
    unless it is a ``ConversionError`` (raised again as it is) or was raised while a
    staged branch or loop was traced (a ``ConversionError`` at the ``except``)."""
    error = sys.exc_info()[1]
    if isinstance(error, ConversionError):
        raise error
    staged = [region for region in regions_of(error) if region.staged]
    if not staged:
        return
    region = staged[-1]
    where = caller_location()
    raise ConversionError(
        f"this `except` caught {type(error).__name__}({error}) raised while tracing the "
        f"{region.construct} at {region.where}, which autograph staged with lax because "
        "its condition or iterable is traced: its code runs while tracing, whatever the "
        "condition, so the `except` would handle the error for every input, and the "
        "compiled program raises nothing when it runs (an `except` cannot see errors of "
        "compiled code). Check traced values with an `assert` (autograph stages it) or "
        "jax.experimental.checkify, or compute a fallback with jnp.where; keep the "
        "`try` for errors Python raises.", where.filename, where.lineno) from error


def current_exception():
    """The exception being handled (``sys.exc_info()[1]``): kept by a ``try`` whose
    ``finally`` may discard it with a jump."""
    return sys.exc_info()[1]
