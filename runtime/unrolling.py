"""Which loops were staged and which ran unrolled, and why: the ``autograph.loops`` log.

A loop with a static trip count (a ``for`` over a Python ``range``, over a traced
array's leading axis) is staged into one ``lax`` loop when its body allows it; when
staging fails (a carry that changes shape from one iteration to the next, a
stateful library object that cannot cross a ``scan`` boundary, a value the body
needs as a Python number) it runs unrolled instead, as ``jax.jit`` of the original
runs it. Each decision is logged on the ``autograph.loops`` logger: an unrolled loop
at INFO, with the reason, a staged one at DEBUG. To see them:

    import logging
    logging.basicConfig()
    logging.getLogger("autograph.loops").setLevel(logging.INFO)   # DEBUG: staged too

Each record carries ``decision`` (``"staged"`` or ``"unrolled"``), ``construct``,
``where`` (the user's file and line) and ``reason`` as attributes, for handlers
that count them (``count_decisions``).
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter

from autograph.runtime.trace_context import FRAMES, pushed

logger = logging.getLogger("autograph.loops")

STAGED = "staged"
UNROLLED = "unrolled"


def staged(construct: str, where) -> None:
    """Record that the loop at ``where`` was staged."""
    _decide(STAGED, construct, where, None)


def unrolled(construct: str, where, reason: str) -> None:
    """Record that the loop at ``where`` runs unrolled, and ``reason``."""
    _decide(UNROLLED, construct, where, reason)


def _decide(decision, construct, where, reason):
    stack = FRAMES.held_decisions
    if stack:
        stack[-1].append((decision, construct, where, reason))
    else:
        _log(decision, construct, where, reason)


def _log(decision, construct, where, reason):
    extra = {"decision": decision, "construct": construct, "where": where, "reason": reason}
    if decision == STAGED:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s: %s staged", where, construct, extra=extra)
    elif logger.isEnabledFor(logging.INFO):
        logger.info("%s: %s unrolled (as jax.jit of the original runs it): %s", where,
                    construct, reason, extra=extra)


@contextlib.contextmanager
def held():
    """``with held() as decisions:`` the decisions taken while the block runs (loops
    nested in one being staged) are held in the list ``decisions``, not recorded;
    ``release(decisions)`` records them. A trace that is thrown away (an abstract
    probe of a body, a staging attempt that failed) releases nothing, so that each
    loop of the program is recorded once, as it finally runs."""
    with pushed(FRAMES.held_decisions, []) as decisions:
        yield decisions


def release(decisions) -> None:
    """Record ``decisions`` held by ``held()``, in order."""
    for decision in decisions:
        _decide(*decision)


def why(error: BaseException) -> str:
    """A one-line reason from the error that staging a loop raised."""
    message = getattr(error, "raw_message", None) or str(error)
    first = message.strip().splitlines()[0] if message.strip() else ""
    if len(first) > 200:
        first = first[:197] + "..."
    return f"staging it failed with {type(error).__name__}: {first}"


class _Counting(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.counts = Counter()
        self.reasons = Counter()

    def emit(self, record):
        decision = getattr(record, "decision", None)
        if decision is not None:
            self.counts[decision] += 1
            if record.reason is not None:
                self.reasons[record.reason] += 1


@contextlib.contextmanager
def count_decisions():
    """``with count_decisions() as seen:`` counts the loops staged and unrolled while
    the block runs: ``seen.counts`` (``{"staged": n, "unrolled": m}``) and
    ``seen.reasons`` (how often each reason to unroll was given)."""
    handler = _Counting()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
