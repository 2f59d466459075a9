"""Integers a loop steps together: one of them carried, the others derived from it.

A staged loop often carries several integers that move in lock step: the user's
own counter (``i += 1``), the length of a list the body appends to once per
iteration, and a bounded loop's trip count (``t < N``). XLA keeps every carry of a
``while`` apart, and a loop carrying three counters where the hand-written one
carries one compiles slower (fibonacci_while: 1.15x the hand-written compile time
with three, 1.0x with one). ``find`` reads the traced body for such counters and
``Counters`` carries one per step and dtype and computes the others from it::

    # before: carry (t, fib, length, i)      after: carry (fib, length)
    while t < 1000 and i < n:                 while length - 2 < 1000 and length + 0 < n:
        ...; length += 1; i += 1; t += 1          ...; length += 1

A counter is a scalar integer leaf whose next value is ``x + k`` (or ``x - k``)
for a literal ``k``, an equation at the body's own level (not under a ``cond``:
an append in one branch only gives a ``select``, not a counter). Two counters of
one dtype and one step keep the difference of their starts in every iteration,
in the dtype's wrapping arithmetic too, so the derived one is the carried one plus
that difference: the same value, of the same type, wherever the body, the test
or the caller reads it. The trip count of a loop whose carried counter steps by
one is that counter minus its start, exactly for every count up to the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Literal, Var

from autograph.runtime.trace_context import known_value, weak_cast


def find(body, nconsts: int) -> dict[int, int]:
    """``{leaf index: step}`` of the counters of ``body`` (a jaxpr taking ``nconsts``
    constants, then the loop's leaves, giving the leaves back; module docstring)."""
    jaxpr = body.jaxpr
    leaves = jaxpr.invars[nconsts:]
    wanted = {}
    for k, (x, out) in enumerate(zip(leaves, jaxpr.outvars, strict=True)):
        aval = x.aval
        if (aval.shape == () and np.issubdtype(aval.dtype, np.integer)
                and not isinstance(out, Literal) and out.aval.dtype == aval.dtype):
            wanted[out] = (k, x)
    if not wanted:
        return {}
    steps = {}
    for eqn in jaxpr.eqns:
        if len(eqn.outvars) != 1 or eqn.outvars[0] not in wanted:
            continue
        k, x = wanted[eqn.outvars[0]]
        step = _step(eqn, x)
        if step:
            steps[k] = step
    return steps


def _step(eqn, x) -> int | None:
    """``k`` where ``eqn`` is ``x + k``, ``k + x`` or ``x - (-k)`` for a literal
    ``k``, else None."""
    name = eqn.primitive.name
    if name not in ("add", "sub") or len(eqn.invars) != 2:
        return None
    a, b = eqn.invars
    if name == "add" and b is x and isinstance(a, Literal):
        a, b = b, a
    if a is not x or not isinstance(b, Literal) or np.shape(b.val) != ():
        return None
    step = int(b.val)
    return step if name == "add" else -step


@dataclass(frozen=True)
class Counters:
    """How a loop's leaves are carried: ``carried``, the indices of the leaves the
    ``while`` carries; ``derived``, ``{index: (carried index, start difference)}``
    for the others; ``trip``, ``(carried index, its start)`` of a counter stepping
    by one that gives the trip count, or None (the loop carries its own)."""

    carried: tuple[int, ...]
    derived: dict
    trip: tuple | None

    @property
    def changes(self) -> bool:
        """Whether the loop carries anything other than its leaves and a trip count."""
        return bool(self.derived) or self.trip is not None

    def carry(self, leaves) -> list:
        """The leaves the ``while`` carries."""
        return [leaves[k] for k in self.carried]

    def expand(self, carried, types, wanted=None) -> list:
        """Every leaf (those ``wanted`` marks, where given), from the carried ones
        (``types``: each leaf's abstract value)."""
        leaves = dict(zip(self.carried, carried, strict=True))
        wanted = wanted or [True] * len(types)
        return [leaves[k] if k in leaves else _shifted(leaves[base], delta, types[k])
                for k, (base, delta) in ((k, self.derived.get(k, (None, None)))
                                         for k in range(len(types))) if wanted[k]]

    def trips(self, carried):
        """The iterations taken, from the carried leaves (``trip`` set)."""
        base, start = self.trip
        return lax.sub(carried[self.carried.index(base)], start)


def plan(steps: dict[int, int], leaves, maximum_iterations: int | None) -> Counters:
    """Which counters of ``steps`` (``find``) the loop carries, for the start values
    ``leaves``: the first of each dtype and step; the others derived from it. The
    trip count (with a ``maximum_iterations`` bound) comes from a carried int32
    counter stepping by one."""
    firsts: dict = {}
    derived = {}
    for k, step in steps.items():
        key = (jax.typeof(leaves[k]).dtype, step)
        base = firsts.setdefault(key, k)
        if base != k:
            derived[k] = (base, _difference(leaves[k], leaves[base]))
    trip = None
    if maximum_iterations is not None:
        base = firsts.get((np.dtype(np.int32), 1))
        if base is not None:
            trip = (base, _start(leaves[base]))
    carried = tuple(k for k in range(len(leaves)) if k not in derived)
    return Counters(carried, derived, trip)


def _concrete(value):
    """``value`` as a NumPy scalar where it is known now, else None."""
    known = known_value(value)
    return None if known is None else np.asarray(known, jax.typeof(value).dtype)


def _start(value):
    """A counter's start: a NumPy scalar (a literal in the loop) where it is known."""
    known = _concrete(value)
    return value if known is None else known


def _difference(value, base):
    """``value - base`` in their dtype's wrapping arithmetic: a NumPy scalar where
    both are known, else traced (outside the loop, one subtraction)."""
    a, b = _concrete(value), _concrete(base)
    if a is None or b is None:
        dtype = jax.typeof(base).dtype
        return lax.sub(lax.convert_element_type(value, dtype),
                       lax.convert_element_type(base, dtype))
    info = np.iinfo(b.dtype)
    span = 1 << info.bits
    wrapped = (int(a) - int(b) - info.min) % span + info.min
    return np.asarray(wrapped, b.dtype)


def _shifted(value, delta, aval):
    """``value + delta`` with the abstract value ``aval`` (its weak type)."""
    if not (isinstance(delta, np.ndarray) and delta == 0):
        value = lax.add(value, delta)
    if jax.typeof(value).weak_type != aval.weak_type:
        value = (weak_cast(value, aval.dtype) if aval.weak_type
                 else lax.convert_element_type(value, aval.dtype))
    return value


# -- the loop's jaxprs written out, without a second trace of the body -------------


def spliced_while(counters, cond, cond_consts, body, body_consts, leaves, types,
                  maximum_iterations, trace):
    """The ``while`` of ``counters`` (``trip`` set) bound from the traced ``cond`` and
    ``body`` (jaxprs taking their constants, then the leaves) as they are: the test
    and the body get the derived leaves and the ``trip < maximum_iterations`` stop
    from a small prelude (``trace``: ``bounded_loops._trace``) spliced in front of
    their equations, instead of a second trace of them into ``lax.while_loop`` (a
    pass over every equation: half of fibonacci_while's loop trace). Returns every
    leaf's final value; None, before binding anything, where either jaxpr has
    effects (``lax.while_loop`` checks those) or JAX lacks what this needs."""
    if cond.effects or body.effects:
        return None
    try:
        from jax._src.interpreters.partial_eval import dce_jaxpr
        carried = counters.carry(leaves)
        base, start = counters.trip

        def test_prelude(*values):
            trips = lax.sub(values[counters.carried.index(base)], start)
            return [lax.lt(trips, np.int32(maximum_iterations)),
                    *counters.expand(values, types)]

        def body_prelude(*values):
            return counters.expand(values, types)

        front, front_consts = trace(test_prelude, carried)
        stop, _ = trace(lambda a, b: [lax.bitwise_and(a, b)],
                        [np.bool_(True), np.bool_(True)])
        eqns, outs = _inlined(cond.jaxpr, [*cond.jaxpr.invars[:len(cond_consts)],
                                           *front.jaxpr.outvars[1:]])
        last, (keep_going,) = _inlined(stop.jaxpr, [front.jaxpr.outvars[0], outs[0]])
        test = cond.jaxpr.replace(
            invars=[*cond.jaxpr.invars[:len(cond_consts)], *front.jaxpr.invars],
            outvars=[keep_going], eqns=[*front.jaxpr.eqns, *eqns, *last],
            debug_info=_unnamed(cond.jaxpr.debug_info))
        test, _ = dce_jaxpr(test, [True], instantiate=True)
        front, body_front_consts = trace(body_prelude, carried)
        eqns, outs = _inlined(body.jaxpr, [*body.jaxpr.invars[:len(body_consts)],
                                           *front.jaxpr.outvars])
        step = body.jaxpr.replace(
            invars=[*body.jaxpr.invars[:len(body_consts)], *front.jaxpr.invars],
            outvars=[outs[k] for k in counters.carried], eqns=[*front.jaxpr.eqns, *eqns],
            debug_info=_unnamed(body.jaxpr.debug_info))
        step, _ = dce_jaxpr(step, [True] * len(step.outvars), instantiate=True)
    except (ImportError, TypeError, ValueError, AttributeError):  # pragma: no cover
        return None
    test_consts = [*cond_consts, *front_consts]
    step_consts = [*body_consts, *body_front_consts]
    out = lax.while_p.bind(
        *test_consts, *step_consts, *carried,
        cond_jaxpr=ClosedJaxpr(test, ()), cond_nconsts=len(test_consts),
        body_jaxpr=ClosedJaxpr(step, ()), body_nconsts=len(step_consts))
    return counters.expand(out, types)


def _inlined(jaxpr, inputs):
    """``jaxpr``'s equations and outputs with its inputs read from ``inputs``."""
    given = dict(zip(jaxpr.invars, inputs, strict=True))

    def atom(v):
        return given.get(v, v) if isinstance(v, Var) else v

    eqns = [eqn.replace(invars=[atom(v) for v in eqn.invars]) for eqn in jaxpr.eqns]
    return eqns, [atom(v) for v in jaxpr.outvars]


def _unnamed(debug):
    return None if debug is None else debug._replace(arg_names=None, result_paths=None)
