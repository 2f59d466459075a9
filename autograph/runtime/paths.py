"""Which examples a staged ``print`` or ``assert`` is on the path of.

Under ``vmap`` a staged ``if`` runs both branches for every example (a select),
and a batched loop runs its body for examples that have already finished. A
``print`` or ``assert`` there must act only for the examples whose Python path
reaches it. While tracing a branch or a loop body, the operators push the
condition of being there (lazily, as a function: it is computed only if a
``print`` or ``assert`` asks); ``condition()`` gives their conjunction.

Without ``vmap`` the condition is true wherever the code runs; it then only
costs a few scalar operations next to each staged ``print``/``assert``.

A bounded loop's body is traced a second time for its derivatives (see
``bounded_loops.py``); while ``replaying()``, a ``print`` or ``assert`` stages
nothing: it acts once per iteration, when the loop runs forward.
"""

from __future__ import annotations

import contextlib

import jax.numpy as jnp

from autograph.runtime.trace_context import FRAMES, counted, pushed


@contextlib.contextmanager
def on_path(condition):
    """While tracing the block this guards, ``condition()`` says the block runs."""
    with pushed(FRAMES.path_conditions, condition):
        yield


class BranchTaken:
    """The condition of one branch of a staged ``if`` (what ``on_path`` pushes while
    the branch is traced): ``make()`` gives it, ``region`` names the ``if`` (one
    object for both branches), ``side`` says which branch (True: the ``if`` body).
    A list probe (``lists._Probe``) compares what the two branches do to a list."""

    __slots__ = ("make", "region", "side")

    def __init__(self, make, region, side: bool):
        self.make, self.region, self.side = make, region, side

    def __call__(self):
        return self.make()


def path_from(start: int) -> tuple:
    """The conditions pushed after the first ``start`` (``depth()`` when a record
    began): the path from there to the current point."""
    return tuple(FRAMES.path_conditions[start:])


def condition():
    """Whether the current point of the staged program is reached (a traced bool),
    or ``None`` outside any staged branch or loop body."""
    result = None
    for make in FRAMES.path_conditions:
        value = make()
        result = value if result is None else jnp.logical_and(result, value)
    return result


@contextlib.contextmanager
def replaying():
    """While tracing a loop body again to differentiate it, staged prints and
    asserts are left out (they acted when the loop ran forward)."""
    with counted("replaying"):
        yield


def is_replaying() -> bool:
    """Whether a loop body is being traced again to differentiate it."""
    return bool(FRAMES.replaying)


def depth() -> int:
    """How many staged branches and loop bodies the current point is inside of that
    do not always run (the conditions ``condition()`` would combine)."""
    return len(FRAMES.path_conditions)
