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
# How many iterations a loop run in Python may unroll once its exit depends on traced
# values (``for n in itertools.count(1): if 1 / n < eps: return n``: under jax.jit
# the original fails at once; unrolled, it would never end).
TRACED_EXIT_LIMIT = 1000


def past_traced_exit_limit(steps: int, maximum_iterations, construct, where) -> bool:
    """Whether an unrolled loop whose exit is traced stops before its ``steps``-th
    such iteration: at the user's ``maximum_iterations`` (True), or past
    ``TRACED_EXIT_LIMIT`` without one (a ``ConversionError`` at the loop's line)."""
    if maximum_iterations is not None:
        return steps > maximum_iterations
    if steps <= TRACED_EXIT_LIMIT:
        return False
    from autograph.errors import ConversionError
    raise ConversionError(
        f"this {construct} runs in Python (it goes over a Python iterator) and its exit "
        f"depends on traced values, so every iteration is unrolled into the program; "
        f"after {TRACED_EXIT_LIMIT} it has not ended, and may never end while tracing. "
        "Bound it: `autograph.set_loop_options(maximum_iterations=N)` as the first "
        "statement of its body (it then stops after N), or write it as a `while` "
        "loop, which stages.", where.filename, where.lineno)


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


class Unrolls(Exception):  # noqa: N818 - a signal, not an error
    """Raised before a loop is staged when it must run unrolled to keep Python's
    meaning; its message is the reason logged."""


def why(error: BaseException) -> str:
    """A one-line reason from the error that staging a loop raised."""
    if isinstance(error, Unrolls):
        return str(error)
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
