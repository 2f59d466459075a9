"""``while`` and ``for`` loops: Python loops, or ``lax.while_loop`` / ``fori_loop`` / ``scan``.

The generated code for

    while n != 1:
        n = n // 2
        steps += 1

is

    def loop_test(n, steps):
        return n != 1

    def loop_body(n, steps):
        n = n // 2
        steps += 1
        return (n, steps)
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps),
                               literal_steps={'steps': (1, 0)})

and a ``for`` loop passes the iterable and a body taking the item first:
``s = ag__.for_stmt(ag__.range_(500), loop_body, (s,))``.

How each loop runs:
- ``while``: a Python loop while its condition is a Python value; from the first
  traced condition on, ``lax.while_loop`` (``maximum_iterations`` bounds it and
  makes it reverse-differentiable).
- ``for`` over a traced array: ``lax.scan`` over its leading axis.
- ``for`` over a ``range`` with a traced bound: ``lax.fori_loop``.
- ``for`` over a Python ``range``: one ``fori_loop``/``scan``, compiled once whatever
  the trip count, when the loop variables hold traced values or the body reads a
  traced variable of the function; otherwise Python iterations until the loop
  variables hold a traced value, then the remaining ones staged.
- ``for`` over anything else (lists, tuples, generators): Python iteration.

Staging is an optimisation. A loop of static trip count (a Python range, an
array's leading axis) whose staging fails for any reason (a carry that changes
shape, a body that needs the index as a Python int, a stateful library object
that cannot cross a ``scan`` boundary) runs unrolled instead, from the state it
was given, as the original runs under ``jax.jit``; ``runtime/unrolling.py`` logs
each decision. Outside any JAX trace a loop is Python's own loop, and its cost
per iteration does not depend on what its state holds.
"""

from __future__ import annotations

import contextlib
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax, tree_util

from autograph.directives import loop_option_error
from autograph.errors import ConversionError, StagingTypeError
from autograph.runtime import (
    bounded_loops,
    checks,
    index_growth,
    int_overflow,
    intervals,
    lists,
    loop_probe,
    paths,
    python_ints,
    side_effects,  # (issue 26.6)
    unrolling,
)
from autograph.runtime import carried_state as carried
from autograph.runtime.abstract import (
    abstract,
    mismatch_error,
    mismatches,
    run_or_keep,
    unfit_python_scalar,
)
from autograph.runtime.conditionals import _staged_cond, predicate
from autograph.runtime.differentiation import checkpointed, guarded_body, reverse_guard
from autograph.runtime.iterables import Scanned
from autograph.runtime.objects import stateful_cells
from autograph.runtime.stageable import NO_OBSTACLES, StagingObstacles, check_carriable
from autograph.runtime.staged_region import StagedRegion
from autograph.runtime.state import (
    as_tuple,
    from_tuple,
    through_unbound,
)
from autograph.runtime.trace_context import trace_active, trace_flat, weak_cast
from autograph.runtime.tracing import (
    FlatTree,
    Location,
    Tracer,
    caller_location,
    has_tracer,
    is_tracer,
    param_names,
)


class TracedRange:
    """``range(start, stop, step)`` where some bound is traced."""

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        if not is_tracer(step) and operator.index(step) == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step

    def trip_count(self):
        """The number of iterations, traced: ``len(range(start, stop, step))``."""
        span = self.stop - self.start
        if not is_tracer(self.step) and self.step == 1:
            return jnp.maximum(span, 0)
        step_sign = jnp.sign(self.step)
        return jnp.maximum((span + self.step - step_sign) // self.step, 0)

    def reversed(self):
        """``reversed(range(...))``: the same items, last first."""
        last = self.start + (self.trip_count() - 1) * self.step
        return TracedRange(last, self.start - self.step, -self.step)

    def __repr__(self):
        return f"range({self.start}, {self.stop}, {self.step})"

    def __iter__(self):   # Python iteration (a comprehension, list(), unpacking)
        where = caller_location()
        raise StagingTypeError(
            "range() with a traced bound has no length while tracing, so only a `for` "
            "statement (a staged loop) or sum/min/max/any/all can go over it. Write a "
            "for loop, or give the range a static bound (a Python int).",
            where.filename, where.lineno)


def range_(*args):
    """``range(*args)``; a traced bound gives a ``TracedRange`` that ``for_stmt`` stages."""
    if any(is_tracer(a) for a in args):
        return TracedRange(*args)
    return range(*args)


@dataclass(frozen=True)
class LoopSpec:
    """What a staged loop is, besides its body and state: the ``construct``
    (``"while loop"``, ``"for loop"``), the state variables' ``names`` and the
    user's line ``where``, for messages; its options, ``maximum_iterations`` (a
    checked int, or None, always None where the trip count is static) and
    ``checkpoint``; ``extra_test(*state)``, the condition a ``for`` with ``break``
    or ``return`` checks before each iteration (or None); what the converters
    found in its code that staging cannot honour (``obstacles``); the static
    bounds of its index (``index_bounds``); and ``on_unroll()``, called when
    staging fails and the loop runs unrolled (its body carries cells or objects:
    carried_state.py), or None."""

    construct: str
    names: tuple
    where: Location
    maximum_iterations: int | None = None
    checkpoint: bool = False
    extra_test: Callable | None = None
    obstacles: StagingObstacles = NO_OBSTACLES
    index_bounds: tuple | None = None
    on_unroll: Callable | None = None
    steps: dict | None = None


class LoopOptions(NamedTuple):
    """The keywords of a loop operator besides its functions and state, packed once
    where the operator is called: the loop options (``maximum_iterations`` as
    given, unchecked; ``checkpoint``), the exit test of a ``for`` with ``break`` or
    ``return``, a derived trip ``bound`` and what staging cannot honour."""

    maximum_iterations: object = None
    checkpoint: bool = False
    extra_test: Callable | None = None
    bound: object = None
    obstacles: StagingObstacles = NO_OBSTACLES
    steps: dict | None = None


def _loop_spec(construct, loop_body, where, options: LoopOptions, *, bounded) -> LoopSpec:
    """The spec of a loop about to be staged, its state named after ``loop_body``'s
    parameters (after the item, for a ``for``). ``bounded``: its trip count is
    unknown while tracing (a ``while``, a ``for`` over a traced range), so
    ``maximum_iterations`` bounds it and is checked here; a static trip count
    ignores the option."""
    names = param_names(loop_body, skip=1 if construct == "for loop" else 0)
    maximum_iterations, bound = options.maximum_iterations, options.bound
    limit = (_bound(maximum_iterations, where)
             if bounded and maximum_iterations is not None else None)
    index_bounds = None
    if bounded and bound is not None:
        # A trip bound derived from the enclosing loops' ranges (a triangular loop).
        limit = bound.trips if limit is None else min(limit, bound.trips)
        index_bounds = (bound.low, bound.high) if bound.low is not None else None
    return LoopSpec(construct, names, where, limit, options.checkpoint, options.extra_test,
                    options.obstacles, index_bounds, getattr(loop_body, "on_unroll", None),
                    options.steps)


def while_stmt(loop_test, loop_body, state, *, maximum_iterations=None, checkpoint=False,
               in_try=None, assigns_global=None, assigns_nonlocal=None, deletes=None,
               cells=None, scoped=(), mutated=(), shared=(), item_writes=(),
               literal_steps=None, compares=None):
    """``while loop_test(*state): state = loop_body(*state)``.

    Equivalent to that Python loop; from the first traced condition on, the rest of
    the loop is one ``lax.while_loop`` carrying ``state``. With
    ``maximum_iterations`` the staged part stops after that many iterations at most,
    as a bounded loop that reverse-mode ``grad`` goes through
    (``runtime/bounded_loops.py``; a Python loop ignores the bound, as the original
    would). Without a bound, reverse-mode
    differentiation of the staged loop raises a ``ConversionError`` naming the
    loop; ``checkpoint=True`` recomputes the body in the backward pass instead of
    storing its intermediates (see ``runtime/differentiation.py``). The last
    keywords, given where they hold, say what staging cannot honour
    (``StagingObstacles``): a staged loop then raises at the user's line.

    Outside any JAX trace nothing can be traced, so the loop is Python's own and
    costs what it costs; under a trace only the condition's value decides each
    iteration (the state is looked into once, on entry).

    ``cells``/``scoped``: variables the body keeps in closure cells; ``mutated``:
    state variables whose objects it changes in place; ``shared``: state variables
    whose object something else may hold too (``carried_state.py``), and
    ``item_writes`` those of them whose items the body assigns
    (``stageable.check_item_writes``); ``literal_steps``: the state variables the body only
    steps by literals (``analysis/literal_steps.py``), judged by ``int_overflow``
    without a probe; ``compares``: the operands of a test that is one comparison of
    names and number literals (``analysis/compared_test.py``), from whose values
    alone the loop may be found to stage (``_compares_traced``).
    """
    hidden = stateful_cells(loop_test, loop_body, plain_objects=True)
    if (cells is None and not mutated and not hidden
            and not (_tracing() and carried.holds_containers(state))):
        return _while(loop_test, loop_body, tuple(state), maximum_iterations, checkpoint,
                      in_try, assigns_global, assigns_nonlocal, deletes, item_writes,
                      literal_steps, compares)
    return carried.carry(lambda plan, state: _while(
        plan.test(loop_test), plan.body(loop_body), state, maximum_iterations, checkpoint,
        in_try, assigns_global, assigns_nonlocal, deletes, item_writes, literal_steps,
        compares),
        loop_body, state,
        construct="while loop", cells=cells, scoped=scoped, mutated=mutated, hidden=hidden,
        shared=shared)


def _while(loop_test, loop_body, state, maximum_iterations, checkpoint, in_try,
           assigns_global, assigns_nonlocal, deletes, item_writes=(), steps=None,
           compares=None):
    """``while_stmt`` once its cells and objects are carried (``carried_state.carry``)."""
    count = len(state)
    if not _tracing():
        while loop_test(*state):
            state = as_tuple(loop_body(*state), count)
        return from_tuple(state)
    entry = True
    while True:
        if ((entry and (_closure_has_tracer(loop_test) or _holds_tracer(state))
             or not entry and _top_level_tracer(state))
                and (_compares_traced(compares, loop_test, state)
                     or _test_is_traced(loop_test, state))):
            break
        entry = False
        cond = loop_test(*state)
        if is_tracer(cond):
            break
        if not cond:
            return from_tuple(state)
        state = as_tuple(loop_body(*state), count)
    obstacles = StagingObstacles(in_try, assigns_global, assigns_nonlocal, deletes,
                                 item_writes)
    options = LoopOptions(maximum_iterations, checkpoint, obstacles=obstacles, steps=steps)
    spec = _loop_spec("while loop", loop_body, caller_location(), options, bounded=True)
    return from_tuple(_staged_while(loop_test, loop_body, state, spec))


def _tracing() -> bool:
    """Whether a JAX trace is active (``jit``, ``grad``, ``vmap``...): only then can a
    loop's condition, iterable or state be traced. (It cannot change while a loop
    runs: a trace begun in its body ends there.)"""
    return trace_active()


def _holds_tracer(tree) -> bool:
    """Whether any leaf of ``tree`` is a tracer; False for what is no pytree JAX can
    flatten (dict keys that do not sort, lists nested past the recursion limit):
    such a value cannot be staged, so its loop runs as Python."""
    if not _flattenable(tree):
        return False
    try:
        return has_tracer(tree)
    except Exception:  # noqa: BLE001 - any failure to flatten: not stageable
        return False


_MAX_NESTING = 256
_CONTAINERS = (list, tuple, dict)


def _flattenable(tree) -> bool:
    """Whether JAX's pytree flattening would take the built-in containers of ``tree``:
    every dict's keys sort, and they nest less than ``_MAX_NESTING`` deep. Asked in
    Python first because jaxlib's flattening, failing inside a container, leaves the
    thread's recursion count one level higher each time (found by the fuzzer: a
    long-running process lost its usable recursion depth, and conversions then
    failed as nesting too deeply)."""
    pending = [(tree, 0)] if isinstance(tree, _CONTAINERS) else []
    while pending:
        node, depth = pending.pop()
        if depth >= _MAX_NESTING:
            return False
        if isinstance(node, dict):
            try:
                sorted(node)
            except TypeError:
                return False
            children = node.values()
        else:
            children = node
        pending.extend((child, depth + 1) for child in children
                       if isinstance(child, _CONTAINERS))
    return True


def _top_level_tracer(state) -> bool:
    """Whether a state variable itself holds a tracer (not looking inside
    containers): what a loop checks after each Python iteration, at a cost that
    does not grow with what the variables hold."""
    return any(isinstance(value, Tracer) for value in state)


def _closed_over(fn) -> list:
    """The values of the bound variables that ``fn`` reads from an enclosing function."""
    fn = getattr(fn, "__wrapped__", fn)   # a body keeping cells (carried_state.py)
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an unbound cell
            continue
    return values


def _closure_has_tracer(fn) -> bool:
    """Whether a variable that ``fn`` reads from an enclosing function is traced."""
    return any(_holds_tracer(value) for value in _closed_over(fn))


# What a comparison with a Python number takes without error, and gives a tracer.
_COMPARABLE = frozenset(map(jnp.dtype, ("bool", "int32", "int64", "float16", "bfloat16",
                                         "float32", "float64")))


def _compares_traced(compares, loop_test, state) -> bool:
    """Whether ``loop_test``, one comparison of ``compares`` (the converter's
    ``compares=``: the names it reads, number literals), is traced for ``state``
    without tracing it: one operand a scalar tracer of a dtype in ``_COMPARABLE``,
    the others such tracers or Python numbers within int32 (a comparison that
    cannot fail). The test is then evaluated once, by the staged loop, as
    ``_test_is_traced`` would have found; anything else asks it."""
    if compares is None:
        return False
    # A test taking carried values (carried_state.py) takes the state first.
    fn = getattr(loop_test, "__wrapped__", loop_test)
    params = dict(zip(param_names(loop_test), state, strict=False))
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    traced = False
    for operand in compares:
        if type(operand) is str:
            if operand in params:
                value = params[operand]
            elif operand in cells:
                try:
                    value = cells[operand].cell_contents
                except ValueError:   # unbound: Python raises NameError
                    return False
            else:
                return False
        else:
            value = operand
        if isinstance(value, Tracer):
            aval = jax.typeof(value)
            if aval.shape != () or aval.dtype not in _COMPARABLE:
                return False
            traced = True
        elif not (type(value) in (bool, float)
                  or type(value) is int and _INT32_MIN <= value <= _INT32_MAX):
            return False
    return traced


def _test_is_traced(loop_test, state) -> bool:
    """Whether the loop condition depends on traced values, found by tracing it
    abstractly, so that no stray comparison lands in the user's program."""
    flat = FlatTree(state, is_tracer)
    seen = []

    def probe(*traced_leaves):
        seen.append(is_tracer(loop_test(*flat.rebuild(traced_leaves))))
        return []

    # An abstract probe: the loops it traces are not the program's, nor the cells and
    # objects it changes (carried_state.py), nor the Python state it changes: Python
    # evaluates the condition once per iteration, and that evaluation comes after.
    effects = side_effects.watch((loop_test,), state)
    with unrolling.held(), _side_trip(loop_test):
        trace_flat(probe, [jax.typeof(leaf) for leaf in flat.selected])
    side_effects.settle(effects, True, "while loop", caller_location(), lambda: None)
    return seen[0]


def for_stmt(iterable, loop_body, state, *, extra_test=None, maximum_iterations=None,
             checkpoint=False, bound=None, in_try=None, assigns_global=None,
             assigns_nonlocal=None, deletes=None, cells=None, scoped=(), mutated=(),
             shared=(), item_writes=(), literal_steps=None):
    """``for item in iterable: state = loop_body(item, *state)``.

    Equivalent to that Python loop. A traced array is scanned over its leading axis,
    a traced range becomes a ``fori_loop``, and a Python range runs as Python until
    the loop variables hold traced values, then as one staged loop. A traced range
    with ``maximum_iterations`` becomes a bounded loop (``runtime/bounded_loops.py``:
    reverse-mode differentiable, costing the iterations taken); other loops have a
    static trip count and ignore the bound.
    ``checkpoint=True`` rematerialises the body in the backward pass.

    ``bound``, where the converters derived one (``intervals.loop_bound``: a range
    that depends on the index of an enclosing staged loop, as in ``for j in
    range(i)``), bounds a traced range as ``maximum_iterations`` would, so that
    the loop is reverse-differentiable.

    ``extra_test(*state)``, when given (a loop with ``break`` or ``return``), is
    checked before each iteration, before the next item is taken, and the loop stops
    when it is false. Staged, iterations after it turns false are masked no-ops
    (static trip counts: one ``scan``, reverse-differentiable) or, over a traced
    range, the ``while_loop`` stops. The last keywords are ``while_stmt``'s.

    Outside any JAX trace the loop is Python's own. Under a trace, a Python range
    decides on its first iteration from the whole state, and after each later one
    from whether a state variable itself became traced.
    """
    hidden = stateful_cells(loop_body, extra_test, plain_objects=True)
    if (cells is None and not mutated and not hidden
            and not (_tracing() and carried.holds_containers(state))):
        return _for(iterable, loop_body, tuple(state), extra_test, maximum_iterations,
                    checkpoint, bound, in_try, assigns_global, assigns_nonlocal, deletes,
                    item_writes, literal_steps)
    return carried.carry(lambda plan, state: _for(
        iterable, plan.body(loop_body, skip=1), state, plan.test(extra_test),
        maximum_iterations, checkpoint, bound, in_try, assigns_global, assigns_nonlocal,
        deletes, item_writes, literal_steps), loop_body, state, skip=1, construct="for loop",
        cells=cells, scoped=scoped, mutated=mutated, hidden=hidden, shared=shared,
        may_skip=_may_be_empty(iterable))


def _may_be_empty(iterable) -> bool:
    """Whether a ``for`` over ``iterable`` may run zero times: not where its length
    is known without tracing and positive (an array's leading axis, a sequence)."""
    try:
        return len(iterable) == 0
    except Exception:  # noqa: BLE001 - no length known now: a traced range, an iterator
        return True


def _for(iterable, loop_body, state, extra_test, maximum_iterations, checkpoint, bound,
         in_try, assigns_global, assigns_nonlocal, deletes, item_writes=(), steps=None):
    """``for_stmt`` once its cells and objects are carried (``carried_state.carry``)."""
    count = len(state)
    if not _tracing():
        return from_tuple(_python_loop(iterable, loop_body, state, extra_test))
    options = LoopOptions(maximum_iterations, checkpoint, extra_test, bound,
                          StagingObstacles(in_try, assigns_global, assigns_nonlocal, deletes,
                                           item_writes), steps)
    if isinstance(iterable, TracedRange):
        spec = _loop_spec("for loop", loop_body, caller_location(), options, bounded=True)
        return from_tuple(_staged_range(iterable, loop_body, state, spec))
    if is_tracer(iterable) or isinstance(iterable, Scanned):
        spec = _loop_spec("for loop", loop_body, caller_location(), options, bounded=False)
        return from_tuple(_staged_scan(iterable, loop_body, state, spec))
    if type(iterable) is _RANGE_ITERATOR and extra_test is None:
        # `reversed(range(n))`, `iter(range(n))`: the rest of a range, which can stage;
        # Python's loop leaves the iterator exhausted.
        iterable = _rest_of_range(iterable)
    if isinstance(iterable, range):
        for k, item in enumerate(iterable):
            if count and (_top_level_tracer(state) if k else (
                    _holds_tracer(state) or _closure_has_tracer(loop_body)
                    or _grows_traced(loop_body, state, item))):
                spec = _loop_spec("for loop", loop_body, caller_location(), options,
                                  bounded=False)
                return from_tuple(_staged_range(iterable[k:], loop_body, state, spec))
            if extra_test is not None and not extra_test(*state):
                break
            state = as_tuple(loop_body(item, *state), count)
        return from_tuple(state)
    if extra_test is None:
        return from_tuple(_python_loop(iterable, loop_body, state, None))
    items = iter(iterable)
    while True:
        keep = extra_test(*state)
        if is_tracer(keep):   # (bounded: maximum_iterations ends the unrolling)
            spec = _loop_spec("for loop", loop_body, caller_location(), options,
                              bounded=True)
            return from_tuple(_masked_python_for(items, loop_body, state, spec))
        if not keep:
            break
        try:
            item = next(items)
        except StopIteration:
            break
        state = as_tuple(loop_body(item, *state), count)
    return from_tuple(state)


def _grows_traced(loop_body, state, item) -> bool:
    """``lists.grows_traced`` of the loop (an abstract probe of one iteration, whose
    nested loops are not the program's)."""
    count = len(state)
    effects = side_effects.watch((loop_body,), state)
    with unrolling.held(), _side_trip(loop_body):
        grows = lists.grows_traced(lambda s, i: as_tuple(loop_body(i, *s), count), state,
                                   item)
    # The probe's own changes put back (side_effects.py); an iterator it advanced
    # cannot be: refused at the line.
    side_effects.settle(effects, True, "for loop", caller_location(), lambda: None)
    return grows


def _side_trip(block):
    """The context of an abstract probe of ``block``: where the block carries cells or
    objects (carried_state.py), what the probe leaves in them is undone afterwards."""
    side_trip = getattr(block, "side_trip", None)
    return contextlib.nullcontext() if side_trip is None else side_trip()


_RANGE_ITERATOR = type(iter(range(0)))


def _rest_of_range(iterator) -> range:
    """The items a range iterator has left, as a range; the iterator is exhausted."""
    _, (rng,), position = iterator.__reduce__()
    iterator.__setstate__(len(rng))
    return rng[position:]


def _python_loop(iterable, loop_body, state, extra_test):
    """The ``for`` loop as Python runs it (``extra_test`` checked before each item)."""
    count = len(state)
    if extra_test is None:
        for item in iterable:
            state = as_tuple(loop_body(item, *state), count)
        return state
    items = iter(iterable)
    while extra_test(*state):
        try:
            item = next(items)
        except StopIteration:
            break
        state = as_tuple(loop_body(item, *state), count)
    return state


# -- the staged loops ------------------------------------------------------------------
#
# Each kind of staged loop (while, for over a range, for over an array) says how it
# lowers to ``lax`` (a ``_Lowering``) and hands it to ``_stage``, which does what they
# all share: variables unbound before the loop, the checks that name the user's
# variable and line, lists the body grows, and JAX's type errors on the carry.


@dataclass(frozen=True)
class _Lowering:
    """How a staged loop becomes ``lax``: ``run(state)`` traces the whole loop, and
    ``step(state, item)`` is one traced iteration (for lists and for errors);
    ``trip_count`` is the number of iterations (None when unknown while tracing);
    ``unrolled(state)``, when given, runs the loop as Python instead where JAX
    rejects its carry (as the original runs under ``jax.jit``). With
    ``stage_lists`` false the Python lists in the state are carried as they are,
    never turned into buffers. ``exact``: the loop runs exactly ``trip_count``
    iterations (lists it grows unconditionally come out as Python lists)."""

    run: Callable
    step: Callable
    trip_count: int | None
    unrolled: Callable | None = None
    stage_lists: bool = True
    exact: bool = False
    by_index: bool = False   # the item is a range's index, or enumerate's (index, x)
    indices: range | None = None   # the values the user's index takes (first ones, traced)
    trips: Callable | None = None  # the traced trip count of a range with a static start
    guards: list | None = None   # checks a staged while's body runs first (_keep_python_ints)
    step_checks: _StepChecks | None = None   # armed for the real trace


_NO_ITEM = object()


def _stage(spec, state, loop_body, item, lowering, *, first_item=_NO_ITEM, loop_test=None):
    """The set-up every staged loop shares, then ``lowering.run``.

    ``loop_body(item, *state)`` is one iteration in the user's code (the item is None
    for a ``while``), ``item`` the loop item's abstract value, ``first_item`` the
    first item of a loop known to run at least once. A loop that can run unrolled
    (``lowering.unrolled``: a static trip count) does so, from the state it was
    given, when staging it fails for any reason: staging is an optimisation, and
    ``jax.jit`` of the original runs it unrolled (the decision is logged, see
    ``runtime/unrolling.py``). Inside a ``try`` with ``except`` clauses it is refused
    instead: unrolled, its traced operations would not raise what the ``except``
    expects either. A ``while`` loop's ``loop_test`` is watched with its body: Python
    evaluates it once per iteration, staged code while tracing."""
    count = len(state)
    changed = []
    traced = []  # the decisions of the loops nested in this one, as staged

    def iteration(values, item):
        return as_tuple(loop_body(item, *values), count)

    body = loop_probe.NOTHING   # the one abstract iteration (loop_probe.py)

    def prepared_and_run(state):
        given = state
        state = body.filled(state, iteration,
                            None if first_item is _NO_ITEM else (first_item,))
        region.check(state, defined=True)
        staging = None
        if lowering.stage_lists:
            state, staging = lists.stage_lists(state, spec.names, lowering.step,
                                               lowering.trip_count, spec.where, item=item,
                                               construct=spec.construct,
                                               exact=lowering.exact, probed=body.lists)
        start = state
        outputs = body.outputs if staging is None or staging.outputs is None \
            else staging.outputs
        state = loop_probe.promoted_start(state, outputs)
        if lowering.by_index and lowering.unrolled is not None and staging is not None:
            _unroll_index_only_growth(given, state, lowering, item, spec, staging)
        if stepped is not None:   # stepped by literals alone: no probe for them
            final = stepped if lowering.unrolled is not None else None
        elif (lowering.unrolled is not None or lowering.trips is not None
                or lowering.guards is not None) and int_overflow.has_python_ints(given):
            final = _keep_python_ints(given, lowering, spec, outputs, body.holes)
        else:
            final = None
        if lowering.step_checks is not None:
            lowering.step_checks.arm(final or ())
        region.unchanged_by_probes()   # the probes' tracers must not reach the trace
        try:
            with staging or contextlib.nullcontext(), unrolling.held() as inner:
                out = lowering.run(state)
        except TypeError as e:
            # JAX's error names an output position: one abstract iteration names the
            # variable (traced only on this error path).
            once = _IterationOutputs.of(lowering.step, start, item)
            if lowering.unrolled is not None:
                changed.extend(_carry_mismatch(once, start, spec))
                raise
            if isinstance(e, lists.ElementTypeError) and e.where is not None:
                raise ConversionError(
                    f"{e} Python's list would hold each value as it is; this loop "
                    "cannot run as Python (its trip count is traced): append values "
                    "of one dtype (e.g. convert them with jnp.asarray(v, dtype)).",
                    e.where.filename, e.where.lineno) from None
            _raise_for_carry_change(once, start, spec)
            _raise_for_uncarriable(once, spec)
            raise
        traced[:] = inner
        if final:   # Python-int counters leave the loop as Python ints
            out = tuple(final.get(k, v) for k, v in enumerate(out))
        if not lowering.exact:
            _check_starts_fit(given, out, spec)
        return out if staging is None else staging.as_lists(out)

    # The order every staged region follows (staged_region.py): watch, open, lift
    # (one abstract probe for the variables unbound before the loop, then lists),
    # check, trace and bind, settle, write back (unbound again: through_unbound).
    reason = None
    region = StagedRegion(spec.construct, spec.where, spec.names, spec.obstacles,
                          (loop_body, spec.extra_test, loop_test), state)
    stepped = _literally_stepped(spec, lowering, state)
    if lowering.unrolled is not None and spec.obstacles.in_try is None \
            and region.effects.holds_generator():
        return _unrolled_for(
            spec, lowering, state, "its body reaches a Python generator, whose steps "
            "(next(g)) a staged loop could neither take once per iteration nor undo")
    with unrolling.held():  # the probes' decisions are dropped, the real trace's kept
        try:
            with region.opened():
                body = loop_probe.probe_body(
                    iteration, state, item, spec.names, spec.where,
                    with_lists=lowering.stage_lists and spec.extra_test is None,
                    weak_near=lambda: loop_probe.reached_by(
                        loop_body, _closed_over(loop_body)),
                    exits=spec.extra_test is not None,
                    counters=stepped is None and _judges_counters(spec, lowering, state,
                                                                  region))
                out = through_unbound(prepared_and_run, iteration, state, item, body.holes)
        except Exception as error:
            failure = error
        else:
            failure = None
        # Python state the body changes but the loop does not carry (side_effects.py);
        # settled once a failure is caught, since the loop may then run unrolled. The
        # body is traced again only to name the line of a change it refuses.
        reason = region.settle(
            lowering.unrolled is not None and spec.obstacles.in_try is None,
            lambda: jax.eval_shape(lambda it: iteration(state, it), item))
        if failure is not None and reason is None:
            if lowering.unrolled is None or spec.obstacles.in_try is not None:
                raise failure  # unrolled, the `except` would not see run-time errors either
            # Any failure: run it as jit of the original would.
            reason = (f"'{changed[0]}' changes from {changed[1]} to {changed[2]} across "
                      "an iteration" if changed
                      else unrolling.why(failure))
        del failure
    if reason is not None:
        return _unrolled_for(spec, lowering, state, reason)
    unrolling.staged(spec.construct, spec.where)
    unrolling.release(traced)
    python_ints.note(state, out)
    return out


def _unrolled_for(spec, lowering, state, reason):
    """The loop run unrolled from ``state``, the decision logged with ``reason``."""
    unrolling.unrolled(spec.construct, spec.where, reason)
    if spec.on_unroll is not None:   # cells and objects carried (carried_state.py)
        spec.on_unroll()
    if lowering.step_checks is not None:   # ints a staged `if` in it may make int32
        lowering.step_checks.arm(())
    return lowering.unrolled(state)


def _unroll_index_only_growth(given, start, lowering, index, spec, staging):
    """Raise ``GrowsByIndexOnly`` (the loop then runs unrolled) where a list the loop
    will leave with a traced length grows under conditions of the index alone
    (``index_growth.py``). Checked before the loop is staged: a staged loop left
    behind would keep its effects (a ``print``) in the trace."""
    positions = index_growth.lists_of_unknown_length(given, start, staging.lists)
    if positions:
        with staging, unrolling.held():
            found = index_growth.grows_by_index_only(lowering.step, given, start, index,
                                                     positions)
        if found:
            raise index_growth.GrowsByIndexOnly(spec.names[found[0]])


def _check_starts_fit(given, out, spec):
    """Refuse a Python number start that the staged loop holds in a strong dtype out
    of its range (``y = -1``, then ``y = x_uint8 + i``): where the loop runs no
    iteration, Python keeps -1, the staged loop's promoted start is 255."""
    scalars, dtypes = [], []
    for value, leaf in zip(given, out, strict=True):
        if type(value) in (int, float) and is_tracer(leaf) and jnp.ndim(leaf) == 0:
            aval = jax.typeof(leaf)
            scalars.append((tree_util.tree_structure(0), {0: value}))
            dtypes.append(jax.ShapeDtypeStruct((), aval.dtype, weak_type=aval.weak_type))
        else:
            scalars.append((tree_util.tree_structure(0), {}))
            dtypes.append(None)
    unfit = unfit_python_scalar(scalars, dtypes)
    if unfit is None:
        return
    k, value, dtype = unfit
    kind = jnp.dtype(dtype).name
    error = mismatch_error(
        f"changes type across this staged {spec.construct}", spec.names[k],
        f"the Python {type(value).__name__} {value!r}", f"a {kind} array", spec.where,
        f"The loop may run no iteration (its trip count is traced), and then Python's "
        f"'{spec.names[k]}' is {value!r}, which a {kind} start cannot hold; start it as "
        f"an array of that dtype, or with a value in its range.",
        ("before the loop", "after an iteration"))
    raise error


def _literally_stepped(spec, lowering, state):
    """For a ``for`` loop over a range (no exit) whose Python ints are all only
    stepped by literals, once an iteration (``spec.steps``, from
    ``analysis/literal_steps.py``): ``{position: value after it}``, judged with no
    probe; None otherwise."""
    if spec.extra_test is not None or lowering.guards is not None or not spec.steps \
            or not int_overflow.has_python_ints(state):
        return None
    if lowering.unrolled is not None:
        trips = lowering.trip_count
    elif lowering.trips is not None:
        trips = int_overflow.TRACED_RANGE_PREFIX
    else:
        return None
    final = {}
    for k, (name, value) in enumerate(zip(spec.names, state, strict=True)):
        step = spec.steps.get(name)
        if type(value) is bool or (type(value) is int and type(step) is not int):
            return None   # (a tuple: bounds of steps under conditions)
        if type(value) is int:
            if abs(value) + trips * abs(step) > _INT32_MAX:
                return None
            final[k] = value + trips * step
    return final


_INT32_MAX = 2 ** 31 - 1
_INT32_MIN = -2 ** 31


class _StepChecks:
    """Checks a staged loop's body runs after each iteration: that the Python ints
    it only steps by literals (``spec.steps``) did not wrap around 32 bits, where
    within ``iterations`` of them they could (a start near 2**31). Stepped under a
    traced condition (``if x > 3: n += 1``) such an int reads traced data, and no
    value of it is worked out while tracing (``int_overflow``): staged, it is an
    int32, which wraps where Python's int does not. The check raises Python's
    ``OverflowError`` at the loop's line. Armed for the real trace only (not the
    probes, whose jaxpr ``int_overflow`` reads), and not for the ints judged there.
    An int an enclosing region made traced (``python_ints.py``) has no value known
    here: it is always checked; the body notes the carried ints as such for the
    regions inside it."""

    def __init__(self, spec, state, iterations):
        self.where, self.count, self.armed = spec.where, len(state), ()
        self.candidates = []
        self.ints = [k for k, value in enumerate(state) if python_ints.stands_for_int(value)]
        for k in self.ints:
            step = (spec.steps or {}).get(spec.names[k])
            if step is None:
                continue
            rise, fall = (max(step, 0), max(-step, 0)) if type(step) is int else step
            value = state[k]
            if rise + fall <= _INT32_MAX and not (
                    type(value) is int and value - iterations * fall >= _INT32_MIN
                    and value + iterations * rise <= _INT32_MAX):
                self.candidates.append((k, spec.names[k], rise, fall))

    def arm(self, judged):
        """Check the candidates but those at the positions ``judged``."""
        self.armed = [c for c in self.candidates if c[0] not in judged]

    def body(self, loop_body, skip=0):
        """``loop_body`` with the checks; ``skip``: the parameters before the state
        (a ``for`` body's item)."""
        if not self.ints:
            return loop_body

        def checked(*args):
            before = args[skip:]
            for k in self.ints:
                python_ints.mark(before[k])
            out = loop_body(*args)
            after = as_tuple(out, self.count)
            for k, name, rise, fall in self.armed:
                old, new = before[k], after[k]
                if not is_tracer(new):
                    continue   # a Python int (unrolled, or the test was Python's)
                wrapped = (((old > _INT32_MAX - rise) & (new < old - fall))
                           | ((old < _INT32_MIN + fall) & (new > old + rise)))
                checks.check_value(
                    jnp.logical_not(wrapped), OverflowError,
                    f"{self.where.filename}:{self.where.lineno}: the Python int "
                    f"'{name}' this loop steps goes outside 32-bit integers: Python's "
                    "int would not wrap, the staged loop's would. Start it lower, or "
                    "keep it in range (e.g. % 2**31).")
            return out
        return checked


_SMALL = 127   # 0..127: what every integer dtype holds


def _steps_are_small(spec, state) -> bool:
    """Whether every Python int (or bool) a staged ``while`` carries is only stepped
    by literals and compared in its test (``spec.steps``) and stays within
    0..``_SMALL`` over the iterations ``int_overflow`` judges: then the loop takes no
    probe for them (collatz's ``steps += 1``)."""
    steps = spec.steps or {}
    iterations = int_overflow.TRACED_RANGE_PREFIX
    for name, value in zip(spec.names, state, strict=True):
        if type(value) not in (int, bool):
            continue
        step = steps.get(name) if type(value) is int else None
        if step is None or value - iterations * step[1] < 0 \
                or value + iterations * step[0] > _SMALL:
            return False
    return True


def _judges_counters(spec, lowering, state, region) -> bool:
    """Whether the loop's probe runs for ``int_overflow`` (``_keep_python_ints``):
    it holds a Python int, runs over a range (static, or traced from a static
    start) or is a staged ``while``, has no exit, and its body reaches no Python
    object the probe could change (a list a helper appends to: the probe's tracers
    would be left in it)."""
    return (spec.extra_test is None
            and (lowering.unrolled is not None or lowering.trips is not None
                 or lowering.guards is not None)
            and int_overflow.has_python_ints(state) and not region.effects.entries)


def _keep_python_ints(given, lowering, spec, outputs, probe):
    """The values of the loop's Python-int counters after it, where it has a static
    trip count and they were evaluated (``int_overflow.py``): they leave the loop as
    Python ints, as under ``jax.jit`` of the original. Raise ``LeavesInt32`` (the
    loop then runs unrolled) where a Python int the loop computes from its index and
    counters alone would leave int32 staged; for a traced trip count, stage a
    run-time check that the loop stops before that iteration (judged over its first
    ``TRACED_RANGE_PREFIX`` iterations; in a ``while``, a check its body runs first,
    ``_entering_check``). Judged on the jaxpr of the loop's probe
    (``probe``, a ``HoleProbe``; ``outputs``, the types it found), which such a loop
    takes (``loop_probe.probe_body(counters=True)``): no run of the body of its
    own. Not for a loop with an exit (the probe's iteration does not stop at it)."""
    static = lowering.unrolled is not None
    trips = lowering.trip_count if static else int_overflow.TRACED_RANGE_PREFIX
    traced = index_growth.StepTrace.of_probe(probe, len(given))
    if outputs is None or traced is None or spec.extra_test is not None:
        return None
    try:
        found = int_overflow.count(traced, given, lowering.indices, trips)
    except Exception:  # noqa: BLE001 - staging the loop meets it again, and says so
        return None
    if found.overflow is None:
        return found.final if static else None
    if static:
        raise int_overflow.LeavesInt32(found.overflow)
    where = spec.where
    if lowering.guards is not None:
        lowering.guards[:] = [_entering_check(found.overflow, where)]
        return None
    checks.check_value(
        lowering.trips() <= found.overflow.iteration, OverflowError,
        f"{where.filename}:{where.lineno}: a Python int this loop computes from its "
        f"index and counters alone reaches {found.overflow.value} in iteration "
        f"{found.overflow.iteration}, outside 32-bit integers: Python's "
        "int would not wrap, the staged loop's would. Make the trip count static "
        "(static_argnums: the loop then runs as Python) or keep the value in range "
        "(e.g. % 2**31).")
    return None


def _entering_check(overflow, where):
    """A check a staged ``while`` body runs first: it fails (Python's
    ``OverflowError``, at the loop's line) when the loop's Python-int counters are
    those entering the iteration in which a value made from them leaves int32. They
    read nothing but themselves, so they take each state once before that iteration
    and name it."""
    def check(carry):
        entering = [carry[k] == value for k, value in overflow.entering.items()]
        checks.check_value(
            jnp.logical_not(jnp.all(jnp.stack(entering))), OverflowError,
            f"{where.filename}:{where.lineno}: a Python int this loop computes from its "
            f"counters alone reaches {overflow.value} in iteration {overflow.iteration}, "
            "outside 32-bit integers: Python's int would not wrap, the staged loop's "
            "would. Keep the value in range (e.g. % 2**31), or stop the loop earlier.")
    return check


def _staged_while(loop_test, loop_body, state, spec):
    """The loop as one ``lax.while_loop``, or with ``maximum_iterations`` a bounded
    loop (``runtime/bounded_loops.py``). Its Python-int counters are judged on its
    probe (a check its body runs first, ``_entering_check``), unless they are only
    stepped by small literals (``_steps_are_small``)."""
    count = len(state)
    guards = []
    step_checks = _StepChecks(spec, state, int_overflow.TRACED_RANGE_PREFIX)
    checked_body = step_checks.body(loop_body)

    def cond_fun(carry):
        return predicate(loop_test(*carry), spec.where, spec.construct)

    def body_fun(carry):
        with paths.on_path(lambda: cond_fun(carry)):
            for guard in guards:
                guard(carry)
            return as_tuple(checked_body(*carry), count)

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        if spec.maximum_iterations is None:
            out = lax.while_loop(cond_fun, guarded_body(body_fun), state)
            return reverse_guard(out, spec.where, spec.construct)
        return _bounded_while(cond_fun, body_fun, state, spec.maximum_iterations)

    lowering = _Lowering(run, lambda s, _: body_fun(s), spec.maximum_iterations,
                         guards=None if _steps_are_small(spec, state) else guards,
                         step_checks=step_checks)
    return _stage(spec, state, lambda _, *s: loop_body(*s), None, lowering,
                  loop_test=loop_test)


def _bounded_while(cond_fun, body_fun, state, maximum_iterations):
    """At most ``maximum_iterations`` iterations of ``lax.while_loop(cond_fun,
    body_fun, state)``, reverse-differentiable, costing the iterations it takes
    (``runtime/bounded_loops.py``: a ``while_loop`` when evaluated, replayed as
    nested skippable scans in reverse mode).

    Under ``vmap`` each example keeps its own trip count (the loop stops when every
    example has stopped; the replay masks each step per example). No "still
    running" flag is carried: once the condition fails the state stops changing
    (a flag starting as a constant ``True`` would also change type inside
    ``shard_map``, where the condition varies per device)."""
    return bounded_loops.bounded_while(cond_fun, body_fun, state, maximum_iterations)


def _staged_range(rng, loop_body, state, spec):
    """A ``for`` over a Python range (one ``fori_loop``, a scan) or a traced range
    (a ``fori_loop``; with ``maximum_iterations`` a bounded loop; with an exit, a
    ``while_loop`` that stops at it)."""
    count = len(state)
    static = isinstance(rng, range)
    step_checks = _StepChecks(spec, state,
                              len(rng) if static else int_overflow.TRACED_RANGE_PREFIX)
    lowered_body = _python_int_index(step_checks.body(loop_body, skip=1))
    if spec.extra_test is not None and not static:
        lowering = _traced_range_until_exit(rng, lowered_body, count, spec)
    else:
        lowering = _range_loop(rng, lowered_body, count, spec)
    lowering = replace(lowering, step_checks=step_checks)
    index = jax.ShapeDtypeStruct((), jnp.int32, weak_type=True)
    first = rng[0] if static and len(rng) else _NO_ITEM
    return _stage(spec, state, loop_body, index, lowering, first_item=first)


def _python_int_index(loop_body):
    """``loop_body`` given its index weakly typed, as the Python int ``range`` gives
    is under ``jax.jit`` of the original (``0.5 * i`` a weak float), whichever
    lowering counts it (a bounded loop's counter is a strong int32). The loop's
    probe sees the same index."""
    def body(index, *state):
        if is_tracer(index) and not jax.typeof(index).weak_type:
            index = weak_cast(index, index.dtype)
        return loop_body(index, *state)
    return body


def _range_loop(rng, loop_body, count, spec) -> _Lowering:
    static = isinstance(rng, range)
    body = _masked(loop_body, count, spec)
    trip_count = len(rng) if static else spec.maximum_iterations
    known = _index_bounds(rng, spec)
    if not is_tracer(rng.step) and rng.step == 1 and (
            static or spec.maximum_iterations is None):
        lower, upper = rng.start, rng.stop

        def body_fun(i, carry):
            with _below(i, upper), _within(i, known):
                return as_tuple(body(i, *carry), count)
    else:
        lower = 0
        upper = len(rng) if static else rng.trip_count()
        if trip_count is not None and not static:
            upper = jnp.minimum(upper, trip_count)

        def body_fun(k, carry):
            index = rng.start + k * rng.step
            with _below(k, upper), _within(index, known):
                return as_tuple(body(index, *carry), count)

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        if static:  # static trip count: fori_loop lowers to a scan
            return lax.fori_loop(lower, upper, body_fun, state)
        if trip_count is not None:  # maximum_iterations: a bounded loop
            return _bounded_range(lower, upper, body_fun, state, trip_count)
        out = lax.fori_loop(lower, upper, guarded_body(body_fun), state)
        return reverse_guard(out, spec.where, "for loop over a traced range")

    unrolled = _unrolled(rng, loop_body, spec) if static else None
    if static or is_tracer(rng.start) or is_tracer(rng.step):
        indices = rng if static else None
    else:   # a traced stop: the index's first values
        indices = range(rng.start, rng.start + rng.step * int_overflow.MAXIMUM_EVALUATIONS,
                        rng.step)
    counted = not static and not is_tracer(lower)   # (its counters are judged)
    return _Lowering(run, lambda s, i: body_fun(i, s), trip_count, unrolled, exact=static,
                     by_index=static, indices=indices,
                     trips=(lambda: _trips(upper, lower, trip_count)) if counted else None)


def _trips(upper, lower, maximum):
    """The number of iterations of a ``fori_loop(lower, upper)`` run at most
    ``maximum`` times (None: no maximum)."""
    trips = jnp.maximum(upper - lower, 0)
    return trips if maximum is None else jnp.minimum(trips, maximum)


def _index_bounds(rng, spec):
    """``(low, high)`` of the index of a loop over ``rng``: a Python range's own, or
    those derived for a traced range (``spec.index_bounds``); None if unknown."""
    if isinstance(rng, range):
        return (min(rng[0], rng[-1]), max(rng[0], rng[-1])) if len(rng) else None
    return spec.index_bounds


def _within(index, known):
    """While the body is traced, ``index`` lies in ``known`` (``intervals``)."""
    if known is None:
        return contextlib.nullcontext()
    return intervals.bounded(index, *known)


def _below(index, upper):
    """The path condition of a loop body whose bound is traced: per example (under
    ``vmap``) the body also runs past that example's own bound."""
    if not is_tracer(upper):
        return contextlib.nullcontext()
    return paths.on_path(lambda: index < upper)


def _bounded_range(lower, upper, body_fun, state, maximum_iterations):
    """``fori_loop(lower, upper, body_fun, state)`` for at most ``maximum_iterations``
    iterations, reverse-differentiable, costing the iterations it takes."""
    return bounded_loops.bounded_range(lower, upper, body_fun, state, maximum_iterations)


def _traced_range_until_exit(rng, loop_body, count, spec) -> _Lowering:
    """A traced range with an exit: a ``while_loop`` that stops at the exit, or with
    ``maximum_iterations`` a bounded loop (reverse-differentiable)."""
    trips = rng.trip_count()

    def cond_fun(carry):
        k, values = carry
        keep = spec.extra_test(*values)
        if is_tracer(keep):
            keep = predicate(keep, spec.where, spec.construct)
        return jnp.logical_and(k < trips, keep)

    def body_fun(carry):
        k, values = carry
        with paths.on_path(lambda: cond_fun(carry)):
            return k + 1, as_tuple(loop_body(rng.start + k * rng.step, *values), count)

    body_fun = checkpointed(body_fun, spec.checkpoint)
    start = jnp.zeros((), jnp.result_type(trips))

    def run(state):
        if spec.maximum_iterations is not None:
            _, out = _bounded_while(cond_fun, body_fun, (start, state),
                                    spec.maximum_iterations)
            return out
        _, out = lax.while_loop(cond_fun, guarded_body(body_fun), (start, state))
        return reverse_guard(out, spec.where, "for loop over a traced range")

    # Its lists stay Python lists (a list it grows fails as a carry change).
    return _Lowering(run, lambda s, _: body_fun((start, s))[1], spec.maximum_iterations,
                     stage_lists=False)


def _staged_scan(array, loop_body, state, spec):
    """A ``for`` over a traced array (or arrays ``enumerate_``/``zip_`` scan together):
    one ``lax.scan`` over the leading axis."""
    if isinstance(array, Scanned):
        xs, length, item = array.xs, array.length, array.item_aval()
    elif jnp.ndim(array) == 0:
        raise TypeError("iteration over a 0-d array")
    else:
        xs, length = array, array.shape[0]
        item = jax.ShapeDtypeStruct(array.shape[1:], array.dtype)
    count = len(state)
    step_checks = _StepChecks(spec, state, length)
    checked_body = step_checks.body(loop_body, skip=1)
    body = _masked(checked_body, count, spec)

    def body_fun(carry, x):
        return as_tuple(body(x, *carry), count), None

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        out, _ = lax.scan(body_fun, state, xs)
        return out

    items = array.items() if isinstance(array, Scanned) else _rows(array, length)
    counted = isinstance(array, Scanned) and array.counted and type(array.start) is int
    lowering = _Lowering(run, lambda s, x: body_fun(s, x)[0], length,
                         _unrolled(items, checked_body, spec), exact=True,
                         by_index=isinstance(array, Scanned) and array.counted,
                         indices=range(array.start, array.start + length) if counted else None,
                         step_checks=step_checks)
    return _stage(spec, state, loop_body, item, lowering,
                  first_item=item if length else _NO_ITEM)


def _masked(loop_body, count, spec):
    """``loop_body`` that leaves the state as it is once ``spec.extra_test`` is false."""
    extra_test = spec.extra_test
    if extra_test is None:
        return loop_body

    def masked_body(item, *carry):
        keep = extra_test(*carry)
        if not is_tracer(keep):
            return loop_body(item, *carry) if keep else from_tuple(carry)
        keep = predicate(keep, spec.where, spec.construct)

        def run(c):
            with paths.on_path(lambda: keep):
                return as_tuple(loop_body(item, *c), count)

        return from_tuple(run_or_keep(keep, run, carry))

    return masked_body


def _unrolled(items, loop_body, spec):
    """The loop over ``items`` run in Python, as the original runs under ``jax.jit``
    (an exit checked before each item, staged per iteration where it is traced)."""
    if spec.extra_test is None:
        return lambda state: _python_loop(items, loop_body, state, None)
    return lambda state: _masked_python_for(iter(items), loop_body, state, spec)


def _rows(array, length):
    """The rows of ``array``, taken only as the loop asks for them."""
    for k in range(length):
        yield array[k]


def _masked_python_for(items, loop_body, state, spec):
    """The rest of a Python iteration once the exit flag is traced: each iteration
    runs under ``lax.cond(keep_going, body, no-op)``, as the original unrolls. It
    stops after ``spec.maximum_iterations`` such iterations, or refuses after
    ``unrolling.TRACED_EXIT_LIMIT`` (an endless iterator would unroll forever)."""
    traced_steps = 0
    for item in items:
        keep = spec.extra_test(*state)
        if not is_tracer(keep):
            if not keep:
                break
            state = as_tuple(loop_body(item, *state), len(state))
            continue
        traced_steps += 1
        if unrolling.past_traced_exit_limit(traced_steps, spec.maximum_iterations,
                                            spec.construct, spec.where):
            break
        state = _staged_cond(keep, functools.partial(loop_body, item),
                             lambda *s: from_tuple(s), state, spec.names, spec.where,
                             spec.construct, spec.obstacles)
    return state


class _IterationOutputs(NamedTuple):
    """What one iteration gives, traced abstractly once for the errors that name a
    variable: ``values``, the outputs as the body left them (a string, a function
    appended to a list...), and ``shapes``, their abstract values (None where some
    output is no JAX type)."""

    values: tuple
    shapes: tuple | None

    @classmethod
    def of(cls, step, state, item):
        """The outputs of ``step(state, item)`` on abstract values; None if the body
        cannot be traced abstractly (it needs concrete values: the caller decides).
        A ``ConversionError`` the body raises passes through."""
        found = []

        def probe(values, it):
            out = step(values, it)
            found.append(cls(out, _abstract_or_none(out)))
            return ()

        try:
            jax.eval_shape(probe, state, item)
        except ConversionError:
            raise
        except Exception:  # noqa: BLE001 - the body needs concrete values
            return None
        return found[0]


def _abstract_or_none(tree):
    """``abstract(tree)``, or None where a leaf is no JAX type (a string, a function)."""
    for leaf in tree_util.tree_leaves(tree):
        try:
            jax.typeof(leaf)
        except TypeError:
            return None
    return abstract(tree)


def _raise_for_uncarriable(once, spec):
    """Raise naming the variable one iteration (``once``: ``_IterationOutputs``)
    leaves holding what no staged loop can carry (a function appended to a list, a
    string), where JAX's own error would name only an output position; return
    quietly if the body cannot be traced abstractly."""
    if once is not None:
        check_carriable(once.values, spec.names, spec.where, spec.construct)


def _raise_for_carry_change(once, state, spec):
    """Raise naming the variable whose type one iteration (``once``) changes, a
    dtype change from a strongly typed start included (JAX's loop only promotes a
    weakly typed one); return quietly if the body cannot be traced abstractly or
    changes nothing."""
    found = _carry_mismatch(once, state, spec, joins=False)
    if found:
        name, first, second = found
        raise mismatch_error(
            f"changes type across an iteration of this staged {spec.construct}", name,
            first, second, spec.where,
            "A staged loop carries each variable with one shape, dtype and pytree "
            "structure; give it its final type before the loop (e.g. jnp.zeros(shape, "
            "dtype)), or keep the change out of the loop.",
            ("before the loop", "after one iteration"))


def _carry_mismatch(once, state, spec, *, joins=True) -> tuple:
    """``(name, type before, type after)`` of the first variable whose type one
    iteration (``once``) changes (beyond what promotion joins, with ``joins``;
    beyond what JAX's loop promotes, without); ``()`` when none does or the body
    cannot be traced abstractly."""
    if once is None or once.shapes is None:
        return ()
    for name, before, after in zip(spec.names, abstract(state), once.shapes, strict=True):
        found = mismatches([name], [before], [after])
        if not found or _start_promotes(before, after) or (joins and found[0][3]):
            continue
        (name, first, second, _), = found
        return name, first, second
    return ()


def _start_promotes(before, after) -> bool:
    """Whether JAX's loop takes a carry whose abstract value is ``before`` and becomes
    ``after`` in an iteration: every leaf that changes dtype starts weakly typed (a
    Python scalar) and promotes to the dtype it becomes, so the loop starts it there
    (``x = 0`` then ``x = x + 0.5``). A strongly typed start (``jnp.int32(0)``) does
    not promote, nor does a Python bool (``True + 0.5``: JAX's bool is never weak)."""
    before_leaves, before_tree = tree_util.tree_flatten(before)
    after_leaves, after_tree = tree_util.tree_flatten(after)
    if before_tree != after_tree:
        return False
    for x, y in zip(before_leaves, after_leaves, strict=True):
        if x.shape != y.shape:
            return False
        if x.dtype != y.dtype and not (x.weak_type and x.dtype != jnp.bool_
                                       and jnp.result_type(x, y) == y.dtype):
            return False
    return True


def _bound(maximum_iterations, where) -> int:
    """``maximum_iterations`` as the scan length it becomes: a Python int >= 0
    (``directives.loop_option_error`` says why a value is not; the converter asks
    it too, for a constant it sees in the code)."""
    if is_tracer(maximum_iterations):
        raise ConversionError(
            "set_loop_options(maximum_iterations=...) must be a Python int (it is the "
            "length of the staged loop), not a traced value; use a static upper bound",
            where.filename, where.lineno)
    message = loop_option_error("maximum_iterations", maximum_iterations)
    if message is not None:
        raise ConversionError(message, where.filename, where.lineno)
    return operator.index(maximum_iterations)
