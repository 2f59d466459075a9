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
import threading

import jax.numpy as jnp

_LOCAL = threading.local()


@contextlib.contextmanager
def on_path(condition):
    """While tracing the block this guards, ``condition()`` says the block runs."""
    stack = _stack()
    stack.append(condition)
    try:
        yield
    finally:
        stack.pop()


def condition():
    """Whether the current point of the staged program is reached (a traced bool),
    or ``None`` outside any staged branch or loop body."""
    stack = _stack()
    if not stack:
        return None
    result = None
    for make in stack:
        value = make()
        result = value if result is None else jnp.logical_and(result, value)
    return result


@contextlib.contextmanager
def replaying():
    """While tracing a loop body again to differentiate it, staged prints and
    asserts are left out (they acted when the loop ran forward)."""
    depth = getattr(_LOCAL, "replay", 0)
    _LOCAL.replay = depth + 1
    try:
        yield
    finally:
        _LOCAL.replay = depth


def is_replaying() -> bool:
    """Whether a loop body is being traced again to differentiate it."""
    return bool(getattr(_LOCAL, "replay", 0))


def depth() -> int:
    """How many staged branches and loop bodies the current point is inside of that
    do not always run (the conditions ``condition()`` would combine)."""
    return len(_stack())


def _stack() -> list:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack
