"""A staged loop's one abstract probe of its body, and the start it gives the carry.

A loop's carry must have its final type on entry: JAX traces the body on the
start's types, and a body that changes them is an error. So before the real trace,
one abstract iteration of the body (``probe_body``) tells at once

- the type the body gives each variable unbound before the loop (``state.HoleProbe``:
  return values and first bindings get zeros of that type);
- what it does to each list it may grow (``lists.ListProbe``: the lists become
  buffers with room for the appends), the probe seeing each list as the buffer the
  real trace will see;
- the type it gives every variable, so that a weakly typed start that promotes
  (``p = 0`` then ``p = p + 0.5``) is promoted here, by the rule JAX's own loops
  apply (``promoted_start``), and JAX traces the body once instead of twice;
  where the iteration's output is weak (``s + w`` for ``w`` a Python float
  argument of ``jit``) the start stays weak, as Python's unrolled ``s`` is. A loop
  with no unbound variables is probed for that only where a weak tracer of a
  higher kind is near a Python-number start (``may_stay_weak``): in a closure
  cell, a global, or an attribute of one (``reached_by``).

Before: the hole probe, then a second probe for the lists, then JAX's trace and its
retrace of a promoting start (4 runs of the body). After: one probe, one trace.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax, tree_util

from autograph.runtime import returns
from autograph.runtime.abstract import placeholder
from autograph.runtime.lists import ListProbe, TensorList
from autograph.runtime.state import HoleProbe, fill_undefined, split_unbound
from autograph.runtime.trace_context import weak_cast


class BodyProbe(NamedTuple):
    """What the one probe of a loop body found: ``holes``, the ``HoleProbe`` (None
    without unbound variables); ``lists``, the ``ListProbe`` it ran with it, for
    ``lists.stage_lists`` (None where that probes the lists itself); ``outputs``,
    the types one iteration gives each variable, where the probe saw the state as
    the real trace will (else None)."""

    holes: HoleProbe | None
    lists: ListProbe | None
    outputs: tuple | None


    def filled(self, state, iteration, first):
        """``state`` with its unbound variables given the values the staged loop
        carries for them: from the probe (``HoleProbe.filled``: a return value's
        placeholder; zeros of its type for another, where the loop is known to run,
        ``first`` holding its first item); where the probe failed, its error raised
        unless a return value's read explains it, and a first item known as a value
        probed (``state.fill_undefined``)."""
        probe = self.holes
        if probe is None:
            return state
        if probe.error is None:
            return probe.filled(state, first is not None, placeholder)
        returns.check_failed_probe(probe.error, state)
        return state if first is None else fill_undefined(iteration, state, first[0])


NOTHING = BodyProbe(None, None, None)


def probe_body(iteration, state, item, names, where, *, with_lists: bool,
               weak_near=tuple, exits: bool = False, counters: bool = False) -> BodyProbe:
    """Probe ``iteration(state, item)`` (one iteration of the loop, on an abstract
    ``item``) where ``state`` has unbound variables, or a weakly typed start that a
    weakly typed tracer the body reads (``weak_near()``: what it closes over) may turn
    into a weak value of another dtype (``may_stay_weak``); with ``with_lists`` (the
    loop stages its lists) the lists it may grow are probed in the same run.

    The lists are seen as buffers in that run; where one then stays a Python list
    (the body neither grows nor writes it), the types the probe found for the
    unbound variables may differ from what a Python list gives, so they are probed
    again without buffers. A body that the run with buffers fails on (it iterates a
    list in Python, say) is probed as before: unbound variables first, the lists
    after, in ``stage_lists``.

    A loop that ``exits`` (``break``, ``return``) skips its body after the exit with
    a ``lax.cond``, which, unlike the loop, does not promote a weakly typed start to
    the type the body gives it (``lam = 0.0``, then a float16 array): such a loop is
    probed whenever its state holds a weakly typed start, and the probe's types
    promote it (where no promotion is needed, JAX's own retrace would have cost the
    same second run of the body). Not where it may grow a list, which is probed
    apart (``lists.stage_lists``): a start that changes dtype there runs unrolled.

    ``counters``: the loop holds a Python int whose values ``int_overflow`` judges
    from the probe's jaxpr (a static or traced range, no exit): it is probed too."""
    _, holes, _ = split_unbound(state)
    weak = not holes and (
        (exits and _holds_weak_start(state) and not any(type(v) is list for v in state))
        or counters or may_stay_weak(state, weak_near))
    if not holes and not weak:
        return NOTHING
    if with_lists:
        listed = ListProbe(state, names, where)
        if listed.probes and not listed.inside_outer_probe:
            with listed.recording():
                found = HoleProbe.run(iteration, listed.state, item, always=weak)
            if found.error is None and not _holds_buffer(found.shapes):
                if not listed.keeps_python_list(state):
                    return BodyProbe(found, listed, found.outputs)
                return BodyProbe(HoleProbe.run(iteration, state, item, always=weak),
                                 listed, None)
    found = HoleProbe.run(iteration, state, item, always=weak)
    return BodyProbe(found, None, found.outputs if found.error is None else None)


def may_stay_weak(state, near) -> bool:
    """Whether a weakly typed start in ``state`` (``s = 0``) may become a weak value
    of another dtype in an iteration: a weakly typed tracer of a higher kind (a
    float for an int start, a complex for a float one) is among the values the body
    closes over (``near()``: ``s + x`` for ``x``, a Python float argument of
    ``jit``), or, for a start that is a Python number, in the state. Python's
    unrolled ``s`` is then weak, where JAX's loop would promote the start to a
    strong dtype (``promoted_start`` keeps it weak, given the probe's outputs).
    ``near()`` gives what the body reaches (``reached_by``: closure cells, the
    globals it names, their attributes along the names it reads)."""
    numbers, tracers = [], []
    for leaf in tree_util.tree_leaves(state):
        if type(leaf) in _KINDS:
            numbers.append(_KINDS[type(leaf)])
        elif (kind := _weak_kind(leaf)) is not None:
            tracers.append(kind)
    if not numbers and not tracers:
        return False
    if numbers and tracers and max(tracers) > min(numbers):
        return True
    lowest = min(numbers + tracers)
    return any((kind := _weak_kind(leaf)) is not None and kind > lowest
               for leaf in tree_util.tree_leaves(near()))


def _holds_weak_start(state) -> bool:
    """Whether a leaf of ``state`` is a Python number or a weakly typed scalar tracer
    (a bool never promotes)."""
    return any(type(leaf) in _KINDS or _weak_kind(leaf) is not None
               for leaf in tree_util.tree_leaves(state))


def reached_by(fn, closed_over, depth=3) -> list:
    """The values ``fn`` (a loop body) may read besides its carry: ``closed_over``
    (its closure cells' values), the module globals its code (nested functions
    included) names, and, ``depth`` attributes deep, the attributes of those
    values that its code names (``self.scale``, ``config.model.scale``), read from
    their ``__dict__`` (no property or ``__getattr__`` runs)."""
    fn = getattr(fn, "__wrapped__", fn)
    names = _names_read(fn.__code__)
    scope = getattr(fn, "__globals__", {})
    values = list(closed_over)
    values += [scope[name] for name in names if name in scope]
    found, seen = list(values), {id(v) for v in values}
    for _ in range(depth):
        attributes = []
        for value in values:
            try:
                slots = vars(value)
            except TypeError:
                continue
            for name in names:
                item = slots.get(name)
                if item is not None and id(item) not in seen:
                    seen.add(id(item))
                    attributes.append(item)
        found += attributes
        values = attributes
    return found


def _names_read(code) -> set:
    """The global and attribute names ``code`` and the functions defined in it use."""
    names, pending = set(), [code]
    while pending:
        code = pending.pop()
        names.update(code.co_names)
        pending.extend(c for c in code.co_consts if isinstance(c, type(code)))
    return names


def _weak_kind(leaf):
    """The kind (``_KINDS``) of a weakly typed scalar tracer, else None."""
    if isinstance(leaf, jax.core.Tracer):
        aval = leaf.aval
        if getattr(aval, "weak_type", False) and aval.shape == ():
            return _KINDS.get(_SCALAR_TYPES.get(aval.dtype.kind))
    return None


_KINDS = {int: 1, float: 2, complex: 3}
_SCALAR_TYPES = {"i": int, "u": int, "f": float, "c": complex}


def _holds_buffer(tree) -> bool:
    leaves = tree_util.tree_leaves(tree, is_leaf=lambda v: isinstance(v, TensorList))
    return any(isinstance(leaf, TensorList) for leaf in leaves)


def promoted_start(state, outputs):
    """``state`` with each weakly typed leaf (a Python scalar, a weak array) that one
    iteration (``outputs``: the types it gives each variable) turns into another
    dtype of the same shape cast to ``jnp.result_type(start, output)``, as
    ``lax.while_loop`` and ``lax.scan`` promote such a start before tracing their
    body again. Given the promoted start, JAX traces the body once. A variable whose
    output type is unknown (None) or whose structure changes is left as it is: JAX
    decides, as before.

    Before: ``p = 0`` enters the loop as a weak int32 and ``p + 0.5`` gives float32,
    so JAX traces the body, promotes and traces it again. After: ``p`` enters as
    ``float32(0)``, the start JAX's retrace would have had. Where the iteration's
    output is weakly typed (``p + x`` for a weak tracer ``x``: a Python scalar
    argument of ``jit``) the start stays weak in its new dtype, as Python's unrolled
    ``p`` does (JAX's own promotion would make it strong)."""
    if outputs is None:
        return state
    promoted = list(state)
    for k, (value, out) in enumerate(zip(state, outputs, strict=True)):
        if out is None:
            continue
        leaves, treedef = tree_util.tree_flatten(value)
        out_leaves, out_treedef = tree_util.tree_flatten(out)
        if treedef != out_treedef:
            continue
        new = [_promoted_leaf(x, o) for x, o in zip(leaves, out_leaves, strict=True)]
        if any(n is not x for n, x in zip(new, leaves, strict=True)):
            promoted[k] = tree_util.tree_unflatten(treedef, new)
    return tuple(promoted)


def _promoted_leaf(value, out):
    try:
        aval = jax.typeof(value)
    except TypeError:
        return value
    if not aval.weak_type or aval.shape != out.shape:
        return value
    if aval.dtype != out.dtype:
        dtype = jnp.result_type(value, out)
        if getattr(out, "weak_type", False):
            return weak_cast(value, dtype)
        return lax.convert_element_type(value, dtype)
    if not getattr(out, "weak_type", False):
        return lax.convert_element_type(value, aval.dtype)
    return value
