"""Which branch or loop an exception came out of, recorded on the exception.

While the runtime stages an ``if`` or a loop it runs the user's code under
``staged(construct, where)``; an ``if`` decided in Python runs its branch under
``python_branch``. An exception passing out of either carries the region, and
``regions_of(error)`` lists them, innermost first, as ``Region(construct, where,
staged)``. The boundary of a converted function reads them to explain the
error (autograph/error_notes.py): a ``raise`` inside a staged branch runs while
tracing, whatever the condition, unless a Python ``if`` around it decided so (a
raise that a Python value decides where the program may not get is a run-time
check instead: ``checks.raise_if``).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograph.runtime import recursion
from autograph.runtime.trace_context import FRAMES

_REGIONS = "__autograph_regions__"


@dataclass(frozen=True)
class Region:
    """A branch or loop of the user's code: ``construct`` (``"if"``, ``"while loop"``,
    ``"for loop"``, ``"conditional expression"``) at ``where`` (the user's line; None
    when unknown), staged with ``lax`` or decided in Python."""

    construct: str
    where: object = None
    staged: bool = True


PYTHON_BRANCH = Region("if", None, staged=False)


_PASSES = "__autograph_staged_passes__"


class staged:  # noqa: N801 - used as a context manager, like contextlib's
    """``with staged(construct, where):`` the code run inside is the staged region.

    A ``RecursionError`` that passed out of several staged regions, leaving the
    outermost one, is a recursion whose stopping test is traced: it becomes the
    ``ConversionError`` that says so (``recursion.stopping_error``)."""

    __slots__ = ("region",)

    def __init__(self, construct: str, where):
        self.region = Region(construct, where)

    def __enter__(self):
        FRAMES.staged_regions += 1
        return self.region

    def __exit__(self, kind, error, traceback):
        FRAMES.staged_regions -= 1
        if error is not None and isinstance(error, Exception):
            record(error, self.region)
            if isinstance(error, RecursionError):
                passes = error.__dict__[_PASSES] = error.__dict__.get(_PASSES, 0) + 1
                if FRAMES.staged_regions == 0 and passes >= 3:
                    raise recursion.stopping_error(error, self.region)
        return False


def depth() -> int:
    """How many staged regions are being traced on this thread."""
    return FRAMES.staged_regions


def record(error: BaseException, region: Region) -> None:
    """Note on ``error`` that it passed out of ``region`` (after any inner one)."""
    try:
        regions = error.__dict__.setdefault(_REGIONS, [])
    except AttributeError:  # pragma: no cover - exceptions without a __dict__
        return
    if region not in regions:
        regions.append(region)


def regions_of(error: BaseException) -> tuple:
    """The regions ``error`` passed out of, innermost first."""
    return tuple(getattr(error, _REGIONS, ()))
