"""Whether a staged loop over a Python range (or ``enumerate`` of an array) grows a
list under conditions of its index alone: then Python's list has a length known
while tracing, and the loop runs unrolled, as ``jax.jit`` of the original runs it.

    history = []
    for step in range(100):
        w = update(w)
        if step % 10 == 0:
            history.append(w)
    return w, history

Staged, ``step`` is traced, so the append is under a staged ``if`` and the list
would be a buffer of traced length (a ``TensorList``), which ``jnp.stack`` and a
``return`` refuse; ``jax.jit`` of the original gives a Python list of ten arrays.
Before the loop is staged, one iteration is traced to a jaxpr; where the list's
length after it depends on nothing but the index, its length before and Python
counters stepped with them (``output_dependence``: no data the body reads, no
closed-over tracer), the loop is unrolled instead. A list grown under a data-dependent
condition (``if x[i] > 0``) stays a buffer: ``jax.jit`` of the original refuses
that program.
"""

from __future__ import annotations

import jax
from jax import tree_util

from autograph.runtime import unrolling
from autograph.runtime.lists import TensorList


class GrowsByIndexOnly(unrolling.Unrolls):
    """Staged, the loop would give a list of traced length that, unrolled, is a
    Python list (raised before the loop is staged; ``loops._stage`` unrolls it)."""

    def __init__(self, name):
        super().__init__(
            f"the list '{name}' grows under a condition computed from the loop index "
            "alone, not from traced data: unrolled, its length is known (a Python "
            "list, as jax.jit of the original gives)")


def lists_of_unknown_length(given, start, known) -> list[int]:
    """The positions of the loop's variables that were Python lists before the loop,
    enter it staged (``start``), and whose length after it is not known while
    tracing (not among ``known``, ``lists._Staging.lists``)."""
    return [k for k, (before, staged) in enumerate(zip(given, start, strict=True))
            if isinstance(before, list) and isinstance(staged, TensorList)
            and k not in known]


class StepTrace:
    """One iteration ``step(start, item)`` traced to a jaxpr: ``closed``, and the
    positions among its inputs and outputs of each leaf (``ins``: ``(start, item)``
    with leaves replaced by positions; ``outs``: the new state likewise)."""

    def __init__(self, step, start, item):
        self.closed, self.shapes = jax.make_jaxpr(step, return_shape=True)(start, item)
        self.ins, self.outs = _labels((start, item)), _labels(self.shapes)

    @classmethod
    def of_probe(cls, probe, size):
        """The ``StepTrace`` a loop's probe (``state.HoleProbe``, over a state of
        ``size`` variables, its unbound ones left out) already traced, where it kept
        its jaxpr: ``outs`` holds the Python ints' positions only (None elsewhere)."""
        if probe is None or probe.traced is None:
            return None
        closed, given, returned = probe.traced
        traced = cls.__new__(cls)
        traced.closed, traced.shapes = closed, None
        (defined, item), (_, kept) = _labels(given), _labels(returned)
        bound = iter(defined)
        traced.ins = ([None if k in probe.shapes else next(bound) for k in range(size)], item)
        traced.outs = [kept.get(k) for k in range(size)]
        return traced

    @property
    def index_leaf(self) -> int:
        """The input position of the index (``enumerate``'s pair: its first leaf)."""
        return self.ins[1][0] if isinstance(self.ins[1], tuple) else self.ins[1]


def python_counters(traced, given, index_leaf, also=()) -> set[int]:
    """The positions of the loop's variables that start as Python numbers (``given``)
    and that one iteration (``traced``, a ``StepTrace``) makes from the index
    (``index_leaf``; None: not an index), from such counters and from the input
    positions ``also`` alone (a counter ``c = c + 1``)."""
    ins, outs = traced.ins, traced.outs
    counters = {k for k, v in enumerate(given)
                if type(v) in (int, float, bool) and isinstance(ins[0][k], int)
                and isinstance(outs[k], int)}
    static = {ins[0][k] for k in counters} | set(also)
    if index_leaf is not None:
        static.add(index_leaf)
    changed = True
    while changed:   # drop the counters that read something else
        changed = False
        for k in sorted(counters):
            if not output_dependence(traced.closed, outs[k]) <= static:
                counters.discard(k)
                static.discard(ins[0][k])
                changed = True
    return counters


def grows_by_index_only(step, given, start, index, positions) -> list[int]:
    """Of the ``positions`` (lists of unknown length after the loop), those whose
    length after one ``step(start, index)`` depends only on the index, on their own
    length and on variables that start as Python numbers and are themselves such
    functions of the index (a counter ``c = c + 1``). ``given`` is the loop's state
    as the program gave it, ``start`` the staged loop's start (lists as buffers),
    ``index`` the abstract loop item (a range's index, or ``enumerate``'s pair)."""
    traced = StepTrace(step, start, index)
    ins, outs = traced.ins, traced.outs
    lengths = [k for k in positions
               if _traced_length(start[k]) and _traced_length(traced.shapes[k])]
    own = {ins[0][k].length for k in lengths}
    counters = python_counters(traced, given, traced.index_leaf, also=own)
    static = {traced.index_leaf} | {ins[0][k] for k in counters} | own
    return [k for k in lengths
            if output_dependence(traced.closed, outs[k].length) <= static]


def _traced_length(value) -> bool:
    """Whether ``value`` is a ``TensorList`` whose length is a leaf (not static)."""
    return isinstance(value, TensorList) and not isinstance(value.length, int)


def _labels(tree):
    """``tree`` with each leaf replaced by its position among the leaves."""
    leaves, treedef = tree_util.tree_flatten(tree)
    return tree_util.tree_unflatten(treedef, list(range(len(leaves))))


_CONST = -1
# Primitives whose outputs follow their one sub-jaxpr's, inputs matched one to one.
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vmap_call": "call",
          "remat": "jaxpr", "checkpoint": "jaxpr"}


def output_dependence(closed, out_index):
    """The positions of ``closed``'s inputs that its output ``out_index`` depends on
    (-1 for a closed-over value). An equation other than a ``cond``, a loop or a call
    is taken to make each output depend on all its inputs."""
    jaxpr = closed.jaxpr
    deps = _forward(jaxpr, [frozenset({_CONST})] * len(jaxpr.constvars)
                    + [frozenset({k}) for k in range(len(jaxpr.invars))])
    return set(deps[out_index])


def dependence(jaxpr, in_deps):
    """The dependence of each output of ``jaxpr`` (without constants) given its
    inputs' (sets of labels)."""
    return _forward(jaxpr, [frozenset()] * len(jaxpr.constvars) + list(in_deps))


def _forward(jaxpr, in_deps):
    """The dependence of each output of ``jaxpr`` given its inputs' (constants of the
    jaxpr first, as ``constvars + invars``)."""
    env = dict(zip([*jaxpr.constvars, *jaxpr.invars], in_deps, strict=True))

    def read(v):
        return env.get(v, frozenset()) if not isinstance(v, jax.extend.core.Literal) \
            else frozenset()

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        outs = _equation(eqn, ins)
        for v, d in zip(eqn.outvars, outs, strict=True):
            env[v] = d
    return [read(v) for v in jaxpr.outvars]


def _equation(eqn, ins):
    name = eqn.primitive.name
    count = len(eqn.outvars)
    if name == "cond":
        pred, ops = ins[0], ins[1:]
        outs = [pred] * count
        for branch in eqn.params["branches"]:
            found = _closed(branch, ops)
            if found is None or len(found) != count:
                return [frozenset().union(*ins)] * count
            outs = [a | b for a, b in zip(outs, found, strict=True)]
        return outs
    if name == "scan":
        return _scan(eqn, ins)
    if name == "while":
        return _while(eqn, ins)
    param = CALLS.get(name)
    sub = eqn.params.get(param) if param else None
    if sub is not None:
        found = _closed(sub, ins)
        if found is not None and len(found) == count:
            return found
    everything = frozenset().union(*ins) if ins else frozenset()
    return [everything] * count


def _scan(eqn, ins):
    """A ``scan``'s outputs: each carry depends on its start and, iteration after
    iteration, on what the body makes it from (a fixed point); each stacked output
    on what the body makes it from."""
    consts = eqn.params["num_consts"]
    carries = eqn.params["num_carry"]
    fixed, carry, xs = ins[:consts], list(ins[consts:consts + carries]), ins[consts + carries:]
    while True:
        outs = _closed(eqn.params["jaxpr"], [*fixed, *carry, *xs])
        if outs is None:
            return [frozenset().union(*ins)] * len(eqn.outvars)
        grown = [c | o for c, o in zip(carry, outs[:carries], strict=True)]
        if grown == carry:
            return [*carry, *outs[carries:]]
        carry = grown


def _while(eqn, ins):
    """A ``while``'s outputs: each carry depends on its start, on what the body makes
    it from (a fixed point) and on everything the condition reads (the trip count)."""
    cond_n, body_n = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
    cond_consts, body_consts = ins[:cond_n], ins[cond_n:cond_n + body_n]
    carry = list(ins[cond_n + body_n:])
    while True:
        test = _closed(eqn.params["cond_jaxpr"], [*cond_consts, *carry])
        outs = _closed(eqn.params["body_jaxpr"], [*body_consts, *carry])
        if test is None or outs is None:
            return [frozenset().union(*ins)] * len(eqn.outvars)
        grown = [c | o | test[0] for c, o in zip(carry, outs, strict=True)]
        if grown == carry:
            return carry
        carry = grown


def _closed(sub, ins):
    jaxpr = sub.jaxpr if hasattr(sub, "jaxpr") else sub
    if len(jaxpr.invars) != len(ins):
        return None
    return _forward(jaxpr, [frozenset()] * len(jaxpr.constvars) + list(ins))
