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
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps))

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
  variables hold a traced value, then the remaining ones staged. A body that needs
  the index as a Python int (to index a Python list, say) cannot be staged; it
  runs unrolled, as the original does under ``jax.jit``.
- ``for`` over anything else (lists, tuples, generators): Python iteration.
"""

from __future__ import annotations

import contextlib
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax import lax

from autograph.errors import ConversionError
from autograph.runtime import cells as carried
from autograph.runtime import lists, paths, regions, returns
from autograph.runtime.abstract import abstract, mismatch_error, mismatches
from autograph.runtime.conditionals import _staged_cond, predicate
from autograph.runtime.differentiation import checkpointed, reverse_guard
from autograph.runtime.iterables import Scanned
from autograph.runtime.objects import stateful_cells
from autograph.runtime.stageable import (
    NO_OBSTACLES,
    StagingObstacles,
    check_carriable,
    check_stageable,
    require_defined,
)
from autograph.runtime.state import as_tuple, fill_undefined, from_tuple, through_unbound
from autograph.runtime.tracing import (
    FlatTree,
    Location,
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

    def __repr__(self):
        return f"range({self.start}, {self.stop}, {self.step})"


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
    or ``return`` checks before each iteration (or None); and what the converters
    found in its code that staging cannot honour (``obstacles``)."""

    construct: str
    names: tuple
    where: Location
    maximum_iterations: int | None = None
    checkpoint: bool = False
    extra_test: Callable | None = None
    obstacles: StagingObstacles = NO_OBSTACLES


def _loop_spec(construct, loop_body, where, *, bounded, extra_test=None,
               maximum_iterations=None, checkpoint=False, **obstacles) -> LoopSpec:
    """The spec of a loop about to be staged, its state named after ``loop_body``'s
    parameters (after the item, for a ``for``). ``bounded``: its trip count is
    unknown while tracing (a ``while``, a ``for`` over a traced range), so
    ``maximum_iterations`` bounds it and is checked here; a static trip count
    ignores the option."""
    names = param_names(loop_body, skip=1 if construct == "for loop" else 0)
    bound = (_bound(maximum_iterations, where)
             if bounded and maximum_iterations is not None else None)
    return LoopSpec(construct, names, where, bound, checkpoint, extra_test,
                    StagingObstacles(**obstacles))


def while_stmt(loop_test, loop_body, state, *, maximum_iterations=None, checkpoint=False,
               in_try=None, assigns_global=None, assigns_nonlocal=None, deletes=None,
               cells=None, scoped=(), mutated=()):
    """``while loop_test(*state): state = loop_body(*state)``.

    Equivalent to that Python loop; from the first traced condition on, the rest of
    the loop is one ``lax.while_loop`` carrying ``state``. With
    ``maximum_iterations`` the staged part stops after that many iterations at most,
    as a bounded, masked ``scan`` that reverse-mode ``grad`` goes through (a Python
    loop ignores the bound, as the original would). Without a bound, reverse-mode
    differentiation of the staged loop raises a ``ConversionError`` naming the
    loop; ``checkpoint=True`` recomputes the body in the backward pass instead of
    storing its intermediates (see ``runtime/differentiation.py``). The last
    keywords, given where they hold, say what staging cannot honour
    (``StagingObstacles``): a staged loop then raises at the user's line.
    ``cells``/``scoped``: variables the body keeps in closure cells; ``mutated``:
    state variables whose objects it changes in place (``cells.py``).
    """
    hidden = stateful_cells(loop_test, loop_body)
    if cells is not None or mutated or hidden:
        return carried.carry(lambda plan, state: while_stmt(
            plan.test(loop_test), plan.body(loop_body), state,
            maximum_iterations=maximum_iterations, checkpoint=checkpoint, in_try=in_try,
            assigns_global=assigns_global, assigns_nonlocal=assigns_nonlocal,
            deletes=deletes), loop_body, state, construct="while loop", cells=cells,
            scoped=scoped, mutated=mutated, hidden=hidden)
    state = tuple(state)
    count = len(state)
    reads_traced_closure = _closure_has_tracer(loop_test)
    while True:
        if ((reads_traced_closure or has_tracer(state))
                and _test_is_traced(loop_test, state)):
            break
        cond = loop_test(*state)
        if is_tracer(cond):
            break
        if not cond:
            return from_tuple(state)
        state = as_tuple(loop_body(*state), count)
    spec = _loop_spec("while loop", loop_body, caller_location(), bounded=True,
                      maximum_iterations=maximum_iterations, checkpoint=checkpoint,
                      in_try=in_try, assigns_global=assigns_global,
                      assigns_nonlocal=assigns_nonlocal, deletes=deletes)
    return from_tuple(_staged_while(loop_test, loop_body, state, spec))


def _closure_has_tracer(fn) -> bool:
    """Whether a variable that ``fn`` reads from an enclosing function is traced."""
    fn = getattr(fn, "__wrapped__", fn)   # a body keeping cells (cells.py)
    for cell in fn.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # an unbound cell
            continue
        if has_tracer(contents):
            return True
    return False


def _test_is_traced(loop_test, state) -> bool:
    """Whether the loop condition depends on traced values, found by tracing it
    abstractly, so that no stray comparison lands in the user's program."""
    flat = FlatTree(state, is_tracer)
    seen = []

    def probe(*traced_leaves):
        seen.append(is_tracer(loop_test(*flat.rebuild(traced_leaves))))

    jax.eval_shape(probe, *flat.selected)
    return seen[0]


def for_stmt(iterable, loop_body, state, *, extra_test=None, maximum_iterations=None,
             checkpoint=False, in_try=None, assigns_global=None, assigns_nonlocal=None,
             deletes=None, cells=None, scoped=(), mutated=()):
    """``for item in iterable: state = loop_body(item, *state)``.

    Equivalent to that Python loop. A traced array is scanned over its leading axis,
    a traced range becomes a ``fori_loop``, and a Python range runs as Python until
    the loop variables hold traced values, then as one staged loop. A traced range
    with ``maximum_iterations`` becomes a masked scan of that length (reverse-mode
    differentiable); other loops have a static trip count and ignore the bound.
    ``checkpoint=True`` rematerialises the body in the backward pass.

    ``extra_test(*state)``, when given (a loop with ``break`` or ``return``), is
    checked before each iteration, before the next item is taken, and the loop stops
    when it is false. Staged, iterations after it turns false are masked no-ops
    (static trip counts: one ``scan``, reverse-differentiable) or, over a traced
    range, the ``while_loop`` stops. The last keywords are ``while_stmt``'s.
    """
    hidden = stateful_cells(loop_body, extra_test)
    if cells is not None or mutated or hidden:
        return carried.carry(lambda plan, state: for_stmt(
            iterable, plan.body(loop_body, skip=1), state,
            extra_test=plan.test(extra_test), maximum_iterations=maximum_iterations,
            checkpoint=checkpoint, in_try=in_try, assigns_global=assigns_global,
            assigns_nonlocal=assigns_nonlocal, deletes=deletes), loop_body, state, skip=1,
            construct="for loop", cells=cells, scoped=scoped, mutated=mutated,
            hidden=hidden)
    state = tuple(state)
    count = len(state)
    options = {"extra_test": extra_test, "maximum_iterations": maximum_iterations,
               "checkpoint": checkpoint, "in_try": in_try, "assigns_global": assigns_global,
               "assigns_nonlocal": assigns_nonlocal, "deletes": deletes}
    if isinstance(iterable, TracedRange):
        spec = _loop_spec("for loop", loop_body, caller_location(), bounded=True, **options)
        return from_tuple(_staged_range(iterable, loop_body, state, spec))
    if is_tracer(iterable) or isinstance(iterable, Scanned):
        spec = _loop_spec("for loop", loop_body, caller_location(), bounded=False, **options)
        return from_tuple(_staged_scan(iterable, loop_body, state, spec))
    if isinstance(iterable, range):
        for k, item in enumerate(iterable):
            if count and (has_tracer(state) or k == 0 and (
                    _closure_has_tracer(loop_body) or lists.grows_traced(
                        lambda s, i: as_tuple(loop_body(i, *s), count), state, item))):
                spec = _loop_spec("for loop", loop_body, caller_location(), bounded=False,
                                  **options)
                return from_tuple(_staged_range(iterable[k:], loop_body, state, spec))
            if extra_test is not None and not extra_test(*state):
                break
            state = as_tuple(loop_body(item, *state), count)
        return from_tuple(state)
    if extra_test is None:
        for item in iterable:
            state = as_tuple(loop_body(item, *state), count)
        return from_tuple(state)
    items = iter(iterable)
    while True:
        keep = extra_test(*state)
        if is_tracer(keep):
            spec = _loop_spec("for loop", loop_body, caller_location(), bounded=False,
                              **options)
            return from_tuple(_masked_python_for(items, loop_body, state, spec))
        if not keep:
            break
        try:
            item = next(items)
        except StopIteration:
            break
        state = as_tuple(loop_body(item, *state), count)
    return from_tuple(state)


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
    never turned into buffers."""

    run: Callable
    step: Callable
    trip_count: int | None
    unrolled: Callable | None = None
    stage_lists: bool = True


_NO_ITEM = object()


def _stage(spec, state, loop_body, item, lowering, *, first_item=_NO_ITEM):
    """The set-up every staged loop shares, then ``lowering.run``.

    ``loop_body(item, *state)`` is one iteration in the user's code (the item is None
    for a ``while``), ``item`` the loop item's abstract value, ``first_item`` the
    first item of a loop known to run at least once."""
    count = len(state)

    def iteration(values, item):
        return as_tuple(loop_body(item, *values), count)

    def prepared_and_run(state):
        state = returns.fill_undefined_returns(iteration, state, item)
        if first_item is not _NO_ITEM:
            state = fill_undefined(iteration, state, first_item)
        require_defined(state, spec.names, spec.where, f"staged {spec.construct}")
        check_carriable(state, spec.names, spec.where, spec.construct)
        check_stageable(spec.obstacles, spec.where, spec.construct)
        staging = contextlib.nullcontext()
        if lowering.stage_lists:
            state, staging = lists.stage_lists(state, spec.names, lowering.step,
                                               lowering.trip_count, spec.where, item=item,
                                               construct=spec.construct)
        try:
            with staging:
                return lowering.run(state)
        except TypeError:
            _raise_for_carry_change(lowering.step, state, item, spec)
            if lowering.unrolled is None:
                raise
            return lowering.unrolled(state)

    with regions.staged(spec.construct, spec.where):
        return through_unbound(prepared_and_run, iteration, state, item)


def _staged_while(loop_test, loop_body, state, spec):
    """The loop as one ``lax.while_loop``, or with ``maximum_iterations`` a bounded,
    masked scan."""
    count = len(state)

    def cond_fun(carry):
        return predicate(loop_test(*carry), spec.where, spec.construct)

    def body_fun(carry):
        with paths.on_path(lambda: cond_fun(carry)):
            return as_tuple(loop_body(*carry), count)

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        if spec.maximum_iterations is None:
            out = lax.while_loop(cond_fun, body_fun, state)
            return reverse_guard(out, spec.where, spec.construct)
        return _bounded_while(cond_fun, body_fun, state, spec.maximum_iterations)

    lowering = _Lowering(run, lambda s, _: body_fun(s), spec.maximum_iterations)
    return _stage(spec, state, lambda _, *s: loop_body(*s), None, lowering)


def _bounded_while(cond_fun, body_fun, state, maximum_iterations):
    """At most ``maximum_iterations`` iterations as a scan whose iterations after the
    condition fails leave the state unchanged (reverse-differentiable).

    The body sits in a ``lax.cond`` on the loop condition, so finished iterations
    cost one predicate, not a body (under ``vmap`` the cond becomes a select: each
    example keeps its own trip count). No "still running" flag is carried: once
    the condition fails the state stops changing, so the condition keeps failing.
    (A flag starting as a constant ``True`` would also change type inside
    ``shard_map``, where the condition varies per device.) Reverse mode stores the
    state per iteration, plus the body's intermediates unless it is checkpointed."""

    def step(values, _):
        return lax.cond(cond_fun(values), body_fun, lambda v: v, values), None

    if maximum_iterations == 0:
        return state
    out, _ = lax.scan(step, state, None, length=maximum_iterations)
    return out


def _staged_range(rng, loop_body, state, spec):
    """A ``for`` over a Python range (one ``fori_loop``, a scan) or a traced range
    (a ``fori_loop``; with ``maximum_iterations`` a masked scan; with an exit, a
    ``while_loop`` that stops at it)."""
    count = len(state)
    static = isinstance(rng, range)
    if spec.extra_test is not None and not static:
        lowering = _traced_range_until_exit(rng, loop_body, count, spec)
    else:
        lowering = _range_loop(rng, loop_body, count, spec)
    index = jax.ShapeDtypeStruct((), jnp.int32)
    first = rng[0] if static and len(rng) else _NO_ITEM
    return _stage(spec, state, loop_body, index, lowering, first_item=first)


def _range_loop(rng, loop_body, count, spec) -> _Lowering:
    static = isinstance(rng, range)
    body = _masked(loop_body, count, spec)
    trip_count = len(rng) if static else spec.maximum_iterations
    if not is_tracer(rng.step) and rng.step == 1 and (
            static or spec.maximum_iterations is None):
        lower, upper = rng.start, rng.stop

        def body_fun(i, carry):
            with _below(i, upper):
                return as_tuple(body(i, *carry), count)
    else:
        lower = 0
        upper = len(rng) if static else rng.trip_count()
        if trip_count is not None and not static:
            upper = jnp.minimum(upper, trip_count)

        def body_fun(k, carry):
            with _below(k, upper):
                return as_tuple(body(rng.start + k * rng.step, *carry), count)

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        if static:  # static trip count: fori_loop lowers to a scan
            return lax.fori_loop(lower, upper, body_fun, state)
        if trip_count is not None:  # maximum_iterations: a masked scan
            return _bounded_range(lower, upper, body_fun, state, trip_count)
        return reverse_guard(lax.fori_loop(lower, upper, body_fun, state), spec.where,
                             "for loop over a traced range")

    unrolled = (lambda s: _python_for(rng, body, s)) if static else None
    return _Lowering(run, lambda s, i: body_fun(i, s), trip_count, unrolled)


def _below(index, upper):
    """The path condition of a loop body whose bound is traced: per example (under
    ``vmap``) the body also runs past that example's own bound."""
    if not is_tracer(upper):
        return contextlib.nullcontext()
    return paths.on_path(lambda: index < upper)


def _bounded_range(lower, upper, body_fun, state, maximum_iterations):
    """``fori_loop(lower, upper, body_fun, state)`` for at most ``maximum_iterations``
    iterations, as a masked scan (reverse-differentiable)."""

    def step(carry, k):
        index = lower + k
        carry = lax.cond(index < upper, lambda c: body_fun(index, c), lambda c: c, carry)
        return carry, None

    if maximum_iterations == 0:
        return state
    out, _ = lax.scan(step, state, jnp.arange(maximum_iterations))
    return out


def _traced_range_until_exit(rng, loop_body, count, spec) -> _Lowering:
    """A traced range with an exit: a ``while_loop`` that stops at the exit, or with
    ``maximum_iterations`` a masked scan of that length (reverse-differentiable)."""
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
        _, out = lax.while_loop(cond_fun, body_fun, (start, state))
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
    body = _masked(loop_body, count, spec)

    def body_fun(carry, x):
        return as_tuple(body(x, *carry), count), None

    body_fun = checkpointed(body_fun, spec.checkpoint)

    def run(state):
        out, _ = lax.scan(body_fun, state, xs)
        return out

    lowering = _Lowering(run, lambda s, x: body_fun(s, x)[0], length,
                         lambda s: _python_for(array, body, s))
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

        return from_tuple(lax.cond(keep, run, lambda c: c, carry))

    return masked_body


def _masked_python_for(items, loop_body, state, spec):
    """The rest of a Python iteration once the exit flag is traced: each iteration
    runs under ``lax.cond(keep_going, body, no-op)``, as the original unrolls."""
    for item in items:
        keep = spec.extra_test(*state)
        if not is_tracer(keep):
            if not keep:
                break
            state = as_tuple(loop_body(item, *state), len(state))
            continue
        state = _staged_cond(keep, functools.partial(loop_body, item),
                             lambda *s: from_tuple(s), state, spec.names, spec.where,
                             spec.construct, spec.obstacles)
    return state


def _python_for(iterable, loop_body, state):
    """The loop unrolled in Python, as the original runs under ``jax.jit``."""
    count = len(state)
    for item in iterable:
        state = as_tuple(loop_body(item, *state), count)
    return state


def _raise_for_carry_change(step, state, item, spec):
    """Raise naming the variable whose type one iteration (``step(state, item)``)
    changes; return quietly if the body cannot be traced abstractly or changes
    nothing."""
    try:
        out = jax.eval_shape(step, state, item)
    except ConversionError:
        raise
    except Exception:  # the body needs concrete values: the caller decides
        return
    for name, first, second, joinable in mismatches(spec.names, abstract(state), out):
        if joinable:
            continue
        raise mismatch_error(
            f"changes type across an iteration of this staged {spec.construct}", name,
            first, second, spec.where,
            "A staged loop carries each variable with one shape, dtype and pytree "
            "structure; give it its final type before the loop (e.g. jnp.zeros(shape, "
            "dtype)), or keep the change out of the loop.",
            ("before the loop", "after one iteration"))


def _bound(maximum_iterations, where) -> int:
    """``maximum_iterations`` as the scan length it becomes: a Python int >= 0."""
    if is_tracer(maximum_iterations):
        raise ConversionError(
            "set_loop_options(maximum_iterations=...) must be a Python int (it is the "
            "length of the staged loop), not a traced value; use a static upper bound",
            where.filename, where.lineno)
    try:
        bound = operator.index(maximum_iterations)
    except TypeError:
        raise ConversionError(
            "set_loop_options(maximum_iterations=...) must be an int, got "
            f"{type(maximum_iterations).__name__}", where.filename, where.lineno) from None
    if bound < 0:
        raise ConversionError(
            f"set_loop_options(maximum_iterations=...) must be >= 0, got {bound}",
            where.filename, where.lineno)
    return bound
