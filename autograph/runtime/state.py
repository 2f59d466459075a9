"""The state that staged branches and loops carry: tuples of pytrees, some unbound.

Generated functions take their state variables as parameters and return them: a
bare value for one variable, a tuple for several, nothing for none. These helpers
move between that form and a tuple, and deal with the variables that are unbound
(``Undefined``) before a staged region: split off, filled with zeros of the type
the region gives them, or carried through as ``None`` and unbound again after.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import tree_util

from autograph.runtime.undefined import is_undefined, is_undefined_return


def as_tuple(value, count: int) -> tuple:
    """The generated form of ``count`` state values, as a tuple."""
    if count == 0:
        return ()
    if count == 1:
        return (value,)
    return tuple(value)


def from_tuple(values: tuple):
    """A tuple of state values, in the generated form."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return tuple(values)


def split_unbound(state):
    """``(defined, holes, rebuild)`` for a state tuple: the values that are bound, in
    order; ``{position: marker}`` for the unbound ones (``Undefined``); and
    ``rebuild(values)``, the full state again from new values of the bound ones."""
    holes = {i: value for i, value in enumerate(state) if is_undefined(value)}
    if not holes:
        return tuple(state), holes, tuple
    defined = tuple(value for i, value in enumerate(state) if i not in holes)
    size = len(state)

    def rebuild(values):
        it = iter(values)
        return tuple(holes[i] if i in holes else next(it) for i in range(size))

    return defined, holes, rebuild


def fill_undefined(iteration, state, item):
    """Give the state variables that are unbound before a loop known to run at least
    once the zeros of the type one iteration gives them (``iteration(state, item)``
    returns the new state), so the staged loop can carry them. Variables a first
    iteration may leave unbound stay ``Undefined``. A first ``item`` known as a
    value (a range's first index) stays one: ``if i == 0: t = v`` binds ``t``."""
    defined, holes, rebuild = split_unbound(state)
    if not holes:
        return state

    def unbound_after_one(defined):
        out = iteration(rebuild(defined), item)
        return tuple(None if is_undefined(out[i]) else out[i] for i in holes)

    shapes = jax.eval_shape(unbound_after_one, defined)
    filled = list(state)
    for i, shape in zip(holes, shapes, strict=True):
        if shape is not None:
            filled[i] = tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shape)
    return tuple(filled)


class HoleProbe:
    """One abstract iteration of a loop whose state has unbound variables (holes):
    the abstract value it gives each hole (``shapes``), and the holes it leaves
    unbound (``unbound``). One probe answers what ``through_unbound``,
    ``returns.fill_undefined_returns`` and ``fill_undefined`` would each trace the
    body to find out."""

    def __init__(self, shapes: dict, unbound: set):
        self.shapes = shapes
        self.unbound = unbound

    @classmethod
    def run(cls, iteration, state, item):
        """The probe of ``iteration(state, item)`` (abstract ``item``); None when the
        state has no holes or the body cannot be traced abstractly (each question
        is then asked on its own, as before)."""
        defined, holes, rebuild = split_unbound(state)
        if not holes:
            return None
        unbound = set()

        def one(defined, item):
            out = iteration(rebuild(defined), item)
            unbound.update(i for i in holes if is_undefined(out[i]))
            return {i: None if is_undefined(out[i]) else out[i] for i in holes}

        try:
            shapes = jax.eval_shape(one, defined, item)
        except Exception:  # noqa: BLE001 - asked one at a time by the staging path
            return None
        return cls(shapes, unbound)

    def filled(self, state, known_to_run: bool, placeholder):
        """``state`` with each hole the probe binds filled, as the two fills would:
        a return value (``UndefinedReturn``) with ``placeholder`` of its type, any
        other with zeros of its type where the loop is ``known_to_run``."""
        filled = list(state)
        for i, shape in self.shapes.items():
            if i in self.unbound or not is_undefined(state[i]):
                continue
            if is_undefined_return(state[i]):
                filled[i] = placeholder(shape)
            elif known_to_run:
                filled[i] = tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shape)
        return tuple(filled)


def through_unbound(stage, iteration, state, item, probe=None):
    """``stage(state)`` (a staged loop) for a state in which the variables that are
    unbound before the loop and that one iteration (``iteration(state, item)``, on an
    abstract ``item``) leaves unbound are carried as ``None``, an empty pytree, and
    come out unbound again: a ``return`` under a branch that Python decides as not
    taken, say, never binds ``retval`` in the staged loop."""
    defined, holes, rebuild = split_unbound(state)
    if not holes:
        return stage(state)
    if probe is not None:
        return _through(stage, state, holes, {i for i in holes if i in probe.unbound})
    still_unbound = []

    def unbound_after_one(defined, item):
        out = iteration(rebuild(defined), item)
        still_unbound.append(tuple(is_undefined(out[i]) for i in holes))

    try:
        jax.eval_shape(unbound_after_one, defined, item)
    except Exception:  # the body needs concrete values: let the staging path decide
        return stage(state)
    through = {i for i, unbound in zip(holes, still_unbound[0], strict=True) if unbound}
    return _through(stage, state, holes, through)


def _through(stage, state, holes, through):
    if not through:
        return stage(state)
    out = stage(tuple(None if i in through else v for i, v in enumerate(state)))
    return tuple(holes[i] if i in through else v for i, v in enumerate(out))
