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

import jax
import jax.numpy as jnp
from jax import lax

from autograph.errors import ConversionError
from autograph.runtime import bounded_loops, lists, paths, returns
from autograph.runtime import state as st
from autograph.runtime.conditionals import _staged_cond, predicate
from autograph.runtime.differentiation import checkpointed, reverse_guard
from autograph.runtime.iterables import Scanned
from autograph.runtime.tracing import caller_location, has_tracer, is_tracer, param_names


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


def while_stmt(loop_test, loop_body, state, *, maximum_iterations=None, checkpoint=False):
    """``while loop_test(*state): state = loop_body(*state)``.

    Equivalent to that Python loop; from the first traced condition on, the rest of
    the loop is one ``lax.while_loop`` carrying ``state``. With
    ``maximum_iterations`` the staged part stops after that many iterations at most,
    as a bounded, masked ``scan`` that reverse-mode ``grad`` goes through (a Python
    loop ignores the bound, as the original would). Without a bound, reverse-mode
    differentiation of the staged loop raises a ``ConversionError`` naming the
    loop; ``checkpoint=True`` recomputes the body in the backward pass instead of
    storing its intermediates (see ``runtime/differentiation.py``).
    """
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
            return st.from_tuple(state)
        state = st.as_tuple(loop_body(*state), count)
    where = caller_location()
    names = param_names(loop_body)
    out = _staged_while(loop_test, loop_body, state, names, where, maximum_iterations,
                        checkpoint)
    return st.from_tuple(out)


def _closure_has_tracer(fn) -> bool:
    """Whether a variable that ``fn`` reads from an enclosing function is traced."""
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
    leaves, treedef = jax.tree_util.tree_flatten(state)
    traced = [i for i, leaf in enumerate(leaves) if is_tracer(leaf)]
    seen = []

    def probe(*traced_leaves):
        full = list(leaves)
        for i, leaf in zip(traced, traced_leaves, strict=True):
            full[i] = leaf
        seen.append(is_tracer(loop_test(*jax.tree_util.tree_unflatten(treedef, full))))

    jax.eval_shape(probe, *[leaves[i] for i in traced])
    return seen[0]


def _staged_while(loop_test, loop_body, state, names, where, maximum_iterations,
                  checkpoint=False):
    count = len(state)
    return st.through_unbound(
        lambda s: _staged_while_carried(loop_test, loop_body, s, names, where,
                                        maximum_iterations, checkpoint),
        lambda s: st.as_tuple(loop_body(*s), count), state)


def _staged_while_carried(loop_test, loop_body, state, names, where, maximum_iterations,
                          checkpoint=False):
    count = len(state)
    state = returns.fill_undefined_returns(
        lambda s: st.as_tuple(loop_body(*s), count), state)
    st.require_defined(state, names, where, "staged while loop")
    st.check_carriable(state, names, where, "while loop")
    st.check_stageable((loop_test, loop_body), where, "while loop")
    count = len(state)

    def cond_fun(carry):
        return predicate(loop_test(*carry), where, "while loop")

    def body_fun(carry):
        with paths.on_path(lambda: cond_fun(carry)):
            return st.as_tuple(loop_body(*carry), count)

    body_fun = checkpointed(body_fun, checkpoint)
    bound = None if maximum_iterations is None else _bound(maximum_iterations, where)
    state, staging = lists.stage_lists(state, names, lambda s, _: body_fun(s), bound, where,
                                       construct="while loop")
    try:
        with staging:
            if bound is None:
                out = lax.while_loop(cond_fun, body_fun, state)
                return reverse_guard(out, where, "while loop")
            return _bounded_while(cond_fun, body_fun, state, bound)
    except TypeError:
        _raise_for_carry_change(body_fun, (state,), names, where, "while loop")
        raise


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


def for_stmt(iterable, loop_body, state, *, extra_test=None, maximum_iterations=None,
             checkpoint=False):
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
    range, the ``while_loop`` stops.
    """
    state = tuple(state)
    count = len(state)
    options = {"maximum_iterations": maximum_iterations, "checkpoint": checkpoint}
    if isinstance(iterable, TracedRange):
        where = caller_location()
        return st.from_tuple(_staged_range(iterable, loop_body, state, where, extra_test,
                                           **options))
    if is_tracer(iterable) or isinstance(iterable, Scanned):
        where = caller_location()
        return st.from_tuple(_staged_scan(iterable, loop_body, state, where, extra_test,
                                          checkpoint))
    if isinstance(iterable, range):
        for k, item in enumerate(iterable):
            if count and (has_tracer(state) or k == 0 and (
                    _closure_has_tracer(loop_body) or lists.grows_traced(
                        lambda s, i: st.as_tuple(loop_body(i, *s), count), state, item))):
                where = caller_location()
                return st.from_tuple(_staged_range(iterable[k:], loop_body, state, where,
                                                   extra_test, **options))
            if extra_test is not None and not extra_test(*state):
                break
            state = st.as_tuple(loop_body(item, *state), count)
        return st.from_tuple(state)
    if extra_test is None:
        for item in iterable:
            state = st.as_tuple(loop_body(item, *state), count)
        return st.from_tuple(state)
    items = iter(iterable)
    while True:
        keep = extra_test(*state)
        if is_tracer(keep):
            where = caller_location()
            return st.from_tuple(_masked_python_for(items, loop_body, state, where,
                                                    extra_test))
        if not keep:
            break
        try:
            item = next(items)
        except StopIteration:
            break
        state = st.as_tuple(loop_body(item, *state), count)
    return st.from_tuple(state)


def _masked_python_for(items, loop_body, state, where, extra_test):
    """The rest of a Python iteration once the exit flag is traced: each iteration
    runs under ``lax.cond(keep_going, body, no-op)``, as the original unrolls."""
    names = param_names(loop_body, skip=1)
    for item in items:
        keep = extra_test(*state)
        if not is_tracer(keep):
            if not keep:
                break
            state = st.as_tuple(loop_body(item, *state), len(state))
            continue
        state = _staged_cond(keep, functools.partial(loop_body, item),
                             lambda *s: st.from_tuple(s), state, names, where, "for loop")
    return state


def _masked(loop_body, extra_test, count, where):
    """``loop_body`` that leaves the state as it is once ``extra_test`` is false."""
    if extra_test is None:
        return loop_body

    def masked_body(item, *carry):
        keep = extra_test(*carry)
        if not is_tracer(keep):
            return loop_body(item, *carry) if keep else st.from_tuple(carry)
        keep = predicate(keep, where, "for loop")

        def run(c):
            with paths.on_path(lambda: keep):
                return st.as_tuple(loop_body(item, *c), count)

        return st.from_tuple(lax.cond(keep, run, lambda c: c, carry))

    return masked_body


def _staged_range(rng, loop_body, state, where, extra_test=None, maximum_iterations=None,
                  checkpoint=False):
    count = len(state)
    index = jax.ShapeDtypeStruct((), jnp.int32)
    return st.through_unbound(
        lambda s: _staged_range_carried(rng, loop_body, s, where, extra_test,
                                        maximum_iterations, checkpoint),
        lambda s, i: st.as_tuple(loop_body(i, *s), count), state, index)


def _staged_range_carried(rng, loop_body, state, where, extra_test=None,
                          maximum_iterations=None, checkpoint=False):
    names = param_names(loop_body, skip=1)
    count = len(state)
    index = jax.ShapeDtypeStruct((), jnp.int32)
    state = returns.fill_undefined_returns(
        lambda s, i: st.as_tuple(loop_body(i, *s), count), state, index)
    if isinstance(rng, range) and len(rng):
        state = st.fill_undefined(
            lambda i, s: st.as_tuple(loop_body(i, *s), count), state, rng[0])
    st.require_defined(state, names, where, "staged for loop")
    st.check_carriable(state, names, where, "for loop")
    st.check_stageable((loop_body,), where, "for loop")
    if isinstance(rng, range) and not len(rng):
        return state
    if extra_test is not None and not isinstance(rng, range):
        return _staged_range_until(rng, loop_body, state, names, where, extra_test,
                                   maximum_iterations, checkpoint)
    body = _masked(loop_body, extra_test, count, where)

    if isinstance(rng, range):
        trip_count = len(rng)
    else:
        trip_count = None if maximum_iterations is None else _bound(maximum_iterations, where)
    if not is_tracer(rng.step) and rng.step == 1 and (
            isinstance(rng, range) or maximum_iterations is None):
        lower, upper = rng.start, rng.stop

        def body_fun(i, carry):
            with _below(i, upper):
                return st.as_tuple(body(i, *carry), count)
    else:
        lower = 0
        upper = len(rng) if isinstance(rng, range) else rng.trip_count()
        if trip_count is not None and not isinstance(rng, range):
            upper = jnp.minimum(upper, trip_count)

        def body_fun(k, carry):
            with _below(k, upper):
                return st.as_tuple(body(rng.start + k * rng.step, *carry), count)

    body_fun = checkpointed(body_fun, checkpoint)
    index = jax.ShapeDtypeStruct((), jnp.int32)
    state, staging = lists.stage_lists(state, names, lambda s, i: body_fun(i, s), trip_count,
                                       where, item=index, construct="for loop")
    try:
        with staging:
            if isinstance(rng, range):  # static trip count: fori_loop lowers to a scan
                return lax.fori_loop(lower, upper, body_fun, state)
            if trip_count is not None:  # maximum_iterations: a masked scan
                return _bounded_range(lower, upper, body_fun, state, trip_count)
            return reverse_guard(lax.fori_loop(lower, upper, body_fun, state), where,
                                 "for loop over a traced range")
    except TypeError:
        _raise_for_carry_change(lambda c, i: body_fun(i, c), (state, index), names, where,
                                "for loop")
        if isinstance(rng, range):
            return _python_for(rng, body, state)
        raise


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


def _staged_range_until(rng, loop_body, state, names, where, extra_test,
                        maximum_iterations=None, checkpoint=False):
    """A traced range with an exit: a ``while_loop`` that stops at the exit, or with
    ``maximum_iterations`` a masked scan of that length (reverse-differentiable)."""
    count = len(state)
    trips = rng.trip_count()

    def cond_fun(carry):
        k, values = carry
        keep = extra_test(*values)
        if is_tracer(keep):
            keep = predicate(keep, where, "for loop")
        return jnp.logical_and(k < trips, keep)

    def body_fun(carry):
        k, values = carry
        with paths.on_path(lambda: cond_fun(carry)):
            return k + 1, st.as_tuple(loop_body(rng.start + k * rng.step, *values), count)

    body_fun = checkpointed(body_fun, checkpoint)
    start = jnp.zeros((), jnp.result_type(trips))
    try:
        if maximum_iterations is not None:
            bound = _bound(maximum_iterations, where)
            _, out = _bounded_while(cond_fun, body_fun, (start, state), bound)
        else:
            _, out = lax.while_loop(cond_fun, body_fun, (start, state))
            out = reverse_guard(out, where, "for loop over a traced range")
    except TypeError:
        _raise_for_carry_change(lambda c: body_fun((start, c))[1], (state,), names, where,
                                "for loop")
        raise
    return out


def _staged_scan(array, loop_body, state, where, extra_test=None, checkpoint=False):
    count = len(state)
    if isinstance(array, Scanned):
        item = array.item_aval()
    elif jnp.ndim(array) == 0:
        raise TypeError("iteration over a 0-d array")
    else:
        item = jax.ShapeDtypeStruct(array.shape[1:], array.dtype)
    return st.through_unbound(
        lambda s: _staged_scan_carried(array, loop_body, s, where, extra_test, checkpoint),
        lambda s, x: st.as_tuple(loop_body(x, *s), count), state, item)


def _staged_scan_carried(array, loop_body, state, where, extra_test=None, checkpoint=False):
    names = param_names(loop_body, skip=1)
    count = len(state)
    if isinstance(array, Scanned):
        xs, length, item = array.xs, array.length, array.item_aval()
    elif jnp.ndim(array) == 0:
        raise TypeError("iteration over a 0-d array")
    else:
        xs, length = array, array.shape[0]
        item = jax.ShapeDtypeStruct(array.shape[1:], array.dtype)
    state = returns.fill_undefined_returns(
        lambda s, x: st.as_tuple(loop_body(x, *s), count), state, item)
    if length:
        state = st.fill_undefined(
            lambda x, s: st.as_tuple(loop_body(x, *s), count), state, item)
    st.require_defined(state, names, where, "staged for loop")
    st.check_carriable(state, names, where, "for loop")
    st.check_stageable((loop_body,), where, "for loop")
    body = _masked(loop_body, extra_test, count, where)

    def body_fun(carry, item):
        return st.as_tuple(body(item, *carry), count), None

    body_fun = checkpointed(body_fun, checkpoint)
    state, staging = lists.stage_lists(state, names, lambda s, x: body_fun(s, x)[0], length,
                                       where, item=item, construct="for loop")
    try:
        with staging:
            out, _ = lax.scan(body_fun, state, xs)
        return out
    except TypeError:
        _raise_for_carry_change(lambda c, x: body_fun(c, x)[0], (state, item), names, where,
                                "for loop")
        return _python_for(array, body, state)


def _python_for(iterable, loop_body, state):
    """The loop unrolled in Python, as the original runs under ``jax.jit``."""
    count = len(state)
    for item in iterable:
        state = st.as_tuple(loop_body(item, *state), count)
    return state


def _raise_for_carry_change(body_fun, args, names, where, construct):
    """Raise naming the variable whose type the loop body changes (``body_fun(*args)``
    gives the new state from the state ``args[0]``); return quietly if the body
    cannot be traced abstractly or changes nothing."""
    state = args[0]
    try:
        out = jax.eval_shape(body_fun, *args)
    except ConversionError:
        raise
    except Exception:  # the body needs concrete values; the caller decides
        return
    before = st.abstract(state)
    for name, first, second, joinable in st.mismatches(names, before, out):
        if joinable:
            continue
        raise st.mismatch_error(
            f"changes type across an iteration of this staged {construct}", name,
            first, second, where,
            "A staged loop carries each variable with one shape, dtype and pytree "
            "structure; give it its final type before the loop (e.g. jnp.zeros(shape, "
            "dtype)), or keep the change out of the loop.",
            ("before the loop", "after one iteration"))
