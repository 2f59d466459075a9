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
from jax.extend.core import ClosedJaxpr

from autograph.runtime.trace_context import trace_flat
from autograph.runtime.tracing import types_of
from autograph.runtime.undefined import Undefined, is_undefined, is_undefined_return


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


class Holes:
    """The variables of ``state`` unbound before a staged region (``Undefined``):
    ``operands``, the bound ones in order, and ``rebuild(values)``, the whole state
    again from new values of those; ``positions``, ``{position: marker}``."""

    __slots__ = ("state", "operands", "positions", "rebuild")

    def __init__(self, state):
        self.state = state
        self.operands, self.positions, self.rebuild = split_unbound(state)

    def bound_names(self, names) -> list:
        """The names of the bound variables (``names`` may name more: an ``if``
        expression's one output)."""
        return [names[i] for i in range(len(self.state)) if i not in self.positions]

    def unbound_again(self, out, positions, names) -> tuple:
        """``out`` with the variables at ``positions`` unbound again: the marker each
        had before the region (a return value stays ``UndefinedReturn``), or
        ``Undefined(name)`` for one the region unbound (``del``)."""
        if not positions:
            return tuple(out)
        markers = self.positions
        return tuple((markers[i] if i in markers else Undefined(names[i]))
                     if i in positions else value for i, value in enumerate(out))


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

    # Needed where the abstract probe failed (HoleProbe): a first item known as a
    # value may bind what an abstract one cannot.
    shapes = jax.eval_shape(unbound_after_one, defined)
    filled = list(state)
    for i, shape in zip(holes, shapes, strict=True):
        if shape is not None:
            filled[i] = tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shape)
    return tuple(filled)


def _is_number(value) -> bool:
    """Whether ``value`` is a scalar JAX or Python number (a counter's type)."""
    return type(value) in (int, bool) or (hasattr(value, "aval") and jnp.ndim(value) == 0)


class HoleProbe:
    """One abstract iteration of a loop whose state has unbound variables (holes):
    the abstract value it gives each hole (``shapes``), and the holes it leaves
    unbound (``unbound``); or, where the body cannot be traced abstractly, the
    ``error`` it raised. One probe answers what ``through_unbound``,
    the fill of return values and ``fill_undefined`` would each trace the
    body to find out; a failed one answers them too (the body would fail again on
    the same abstract values), except ``fill_undefined``, whose first item is a
    value where the probe's is abstract. ``outputs``: the types the iteration gives
    every variable (``tracing.types_of``; None for one left unbound or holding what
    is no JAX type)."""

    def __init__(self, shapes: dict | None, unbound: set, error: Exception | None = None,
                 outputs: tuple | None = None, traced=None):
        self.shapes = shapes
        self.unbound = unbound
        self.error = error
        self.outputs = outputs
        self.traced = traced

    @classmethod
    def run(cls, iteration, state, item, *, always: bool = False):
        """The probe of ``iteration(state, item)`` (abstract ``item``); None when the
        state has no holes, unless ``always`` (for its ``outputs``)."""
        defined, holes, rebuild = split_unbound(state)
        if not holes and not always:
            return None
        unbound = set()
        outputs = []

        ints = [k for k, v in enumerate(state) if type(v) is int]

        def one(defined, item):
            out = iteration(rebuild(defined), item)
            unbound.update(i for i in holes if is_undefined(out[i]))
            outputs.extend(types_of(v) for v in out)
            kept = {k: out[k] for k in ints if _is_number(out[k])}
            return {i: None if is_undefined(out[i]) else out[i] for i in holes}, kept

        try:
            closed, (shapes, kept) = _traced(one, (defined, item))
        except Exception as error:  # noqa: BLE001 - the staging path decides
            return cls(None, set(), error)
        # The jaxpr, for the loop's Python-int counters (int_overflow.py): its inputs
        # are (defined, item), its outputs (holes, {position: value}).
        return cls(shapes, unbound, outputs=tuple(outputs), traced=(closed, (defined, item),
                                                                       (shapes, kept)))

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


def _traced(fn, args):
    """``jax.make_jaxpr(fn, return_shape=True)(*args)``: the closed jaxpr of ``fn`` over
    the leaves of ``args`` and the shapes of its output, traced by
    ``trace_context.trace_flat`` (JAX's own tracing, without the ``jit`` that
    ``make_jaxpr`` builds around it, reading the function's signature each time:
    a loop probed for its counters pays it once per trace)."""
    leaves, in_tree = tree_util.tree_flatten(args)
    avals = [jax.typeof(leaf) for leaf in leaves]
    out_tree = []

    def flat(*leaves):
        out_leaves, tree = tree_util.tree_flatten(fn(*tree_util.tree_unflatten(in_tree, leaves)))
        out_tree.append(tree)
        return out_leaves

    jaxpr, consts, out_avals = trace_flat(flat, avals)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in out_avals]
    return ClosedJaxpr(jaxpr, consts), tree_util.tree_unflatten(out_tree[0], shapes)


def through_unbound(stage, iteration, state, item, probe=None):
    """``stage(state)`` (a staged loop) for a state in which the variables that are
    unbound before the loop and that one iteration (``iteration(state, item)``, on an
    abstract ``item``; ``probe``, its ``HoleProbe`` where the caller ran one) leaves
    unbound are carried as ``None``, an empty pytree, and come out unbound again: a
    ``return`` under a branch that Python decides as not taken, say, never binds
    ``retval`` in the staged loop. A body that cannot be traced abstractly is staged
    as it is (the staging path decides)."""
    _, holes, _ = split_unbound(state)
    if not holes:
        return stage(state)
    if probe is None:
        probe = HoleProbe.run(iteration, state, item)
    if probe.error is not None:
        return stage(state)
    return _through(stage, state, holes, {i for i in holes if i in probe.unbound})


def _through(stage, state, holes, through):
    if not through:
        return stage(state)
    out = stage(tuple(None if i in through else v for i, v in enumerate(state)))
    return Holes(state).unbound_again(out, through, ())
