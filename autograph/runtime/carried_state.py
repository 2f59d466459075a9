"""State that a converted block shares by identity: closure cells and mutated objects.

A branch or loop body is a function whose state arrives as parameters and leaves
as return values. Python's meaning survives that for ordinary variables, but not
for two kinds of state whose *identity* matters:

- A name that closures share with the function (a lambda reading it, a nested
  ``def`` assigning it through ``nonlocal``) lives in a *cell*. The control-flow
  converter keeps such names in cell form: the block's function declares them
  ``nonlocal`` and assigns the one cell, and the runtime call gets
  ``cells=lambda: (x, y)``, a function whose closure holds those cells.
- An object the block mutates in place (``self.count[...] += 1``,
  ``stats[k] = v``, ``obj.total = obj.total + x``) must still be the caller's
  object afterwards. The call names such parameters: ``mutated=('self',)``.
- A Python list or dict in the state that a staged block changes in place
  (``a[0] = v``, ``a.append(v)``) must too, for another name holding it (``b = a``).

In Python mode nothing of this matters: the block's code runs as it is, writes
its cells and mutates its objects. Staged, ``lax`` carries values, so ``Carry``
turns the cells into extra state after the parameters and wraps the block's
functions: before a function runs on traced values they are stored in the cells
(a plain object, which is not a pytree, gets them as its attributes), afterwards
they are read back as extra results. When the region is done the cells get its
results and the mutated objects get theirs written back in place
(``objects.write_back``). Objects with hidden state that the block reaches
through its closure (Flax NNX modules) are carried the same way. The staging
machinery (``loops._stage``, ``lax.cond``) only ever sees the parameter form.

``scoped`` names are cells the block assigns that nothing reads after it (a loop
index that a nested function in the body reads, say): they are not carried, and
after staging get back what they held before, so a variable bound only inside a
staged loop does not have to exist before it.

Each such value has a tracker (``trackers.py``) answering one protocol, grouped by
kind in ``carried_trackers.CarriedTrackers``; ``Carry`` keeps the bookkeeping of
the runs and asks them in one order: lift at ``start``, snapshot before the first traced run,
enter / read / note around each run, finish (or restore, on ``abandon`` and after
an abstract probe's ``side_trip``) at the end.
"""

from __future__ import annotations

import contextlib
import functools

from autograph.errors import ConversionError
from autograph.runtime import objects
from autograph.runtime.carried_trackers import CarriedTrackers
from autograph.runtime.state import as_tuple, from_tuple
from autograph.runtime.tracing import caller_location
from autograph.runtime.trackers import CONTAINER_TYPES, same
from autograph.runtime.undefined import Undefined


def carry(run, fn, state, *, construct, skip=0, cells=None, scoped=(), mutated=(), hidden=(),
          shared=(), may_skip=True):
    """``run(carry, state)`` for a statement whose block function ``fn`` (its first
    ``skip`` parameters are loop items) writes ``cells`` or mutates the parameters
    named in ``mutated``; ``hidden`` are further ``(name, cell)`` pairs of objects
    with state of their own (``objects.stateful_cells``); ``shared``: the state
    variables whose object something else may hold too; ``may_skip``: whether a loop
    may run zero times. ``run(plan, state)`` runs
    the statement (its operator's inner path, never the operator again) with
    ``plan``'s wrapped functions (``plan.body``, ``plan.test``) on the carried
    state; the result comes back in the statement's own form, cells and objects
    updated."""
    state = tuple(state)
    plan = Carry(fn, skip, state, cells, scoped, mutated, hidden, shared)
    plan.where, plan.construct = caller_location(), construct
    plan.may_skip = may_skip
    try:
        return plan.finish(run(plan, plan.start(state)))
    except BaseException:
        plan.abandon()
        raise


def holds_containers(state) -> bool:
    """Whether a state variable holds a Python list or dict, which a staged region
    carries as a copy (``trackers.ContainerParameter`` writes it back in place)."""
    return any(type(v) in CONTAINER_TYPES for v in state)


class Carry:
    """The extra state of one branch or loop statement, one tracker per carried value
    (``CarriedTrackers``): ``start(state)`` gives the state the staging machinery
    carries, ``body(fn)`` and ``test(fn)`` wrap the block's functions to take and
    give it, ``finish(result)`` puts the results where they belong, ``abandon()``
    undoes what tracing left after a failure.

    A wrapped function only stores values into cells and objects when they are
    not the ones those already hold (``last``): in Python mode that never happens,
    so the user's code sees its state exactly as it left it (a loop condition that
    changes a variable through a closure included)."""

    def __init__(self, fn, skip, state, cells, scoped, mutated, hidden, shared=()):
        self.where = None       # the statement's line and kind, for messages
        self.construct = None
        self.may_skip = True    # a loop that may run zero times
        self.trackers = CarriedTrackers(fn, skip, state, cells, scoped, mutated, hidden,
                                        shared)
        self.count = len(state)
        self.names = self.trackers.names
        self.last = None        # the extra values as the block functions last left them
        self.saved = None       # True once cells and viewed objects are snapshot

    @property
    def wraps(self) -> bool:
        """Whether the block functions need wrapping (else only ``finish`` works)."""
        return self.trackers.any or bool(self.trackers.scoped) and self.construct == "if"

    # -- one run of a block function ---------------------------------------------------

    def start(self, state) -> tuple:
        state, values = self.trackers.lift(state)
        self.last = self.first = (self.trackers.watched_of(state), values)
        return (*state, *values)

    def _save(self):
        if self.saved is None:
            self.trackers.snapshot()
            self.saved = True

    def _enter(self, params, values, traced=False) -> bool:
        """Store the incoming carried values where the block's code reads them;
        whether they were new (a traced call, not Python's own iteration; ``traced``:
        known to be one)."""
        watched = self.trackers.watched_of(params)
        last = self.last
        if (not traced and last is not None and same(watched, last[0])
                and same(values, last[1])):
            return False
        self._save()
        self.trackers.enter(params, values)
        self.last = (watched, values)
        return True

    def _leave(self, entered, out):
        """The block's results: its own, each viewed object's attributes, the cells."""
        views = len(self.trackers.view_order)
        out, values = self.trackers.leave(entered, self.last[0][:views], out,
                                          self.saved is not None, self.where,
                                          self.construct)
        self.last = (self.trackers.watched_of(out), values)
        return (*out, *values)

    def _unchanged(self, params, values) -> bool:
        """Whether the incoming values are those the block functions last left."""
        last_watched, last_values = self.last
        for a, b in zip(values, last_values, strict=True):
            if a is not b and not (isinstance(a, Undefined) and isinstance(b, Undefined)):
                return False
        return all(params[i] is v
                   for i, v in zip(self.trackers.watched, last_watched, strict=True))

    def _quick_leave(self, out):
        """``_leave`` for a Python-mode call: the results as the body left them."""
        out, values = self.trackers.quick_leave(out)
        self.last = (self.trackers.watched_of(out), values)
        return (*out, *values)

    # -- the wrapped functions ---------------------------------------------------------

    def body(self, fn, skip: int = 0):
        """``fn`` (a branch, or a loop body taking ``skip`` items first) taking and
        giving the carried values after its own state."""
        return _body_with_state(self, fn, skip) if self.wraps else fn

    def test(self, fn):
        """A loop condition ``fn`` taking the carried values after its own state. A
        staged condition cannot change them: that raises at the user's line."""
        return fn if fn is None or not self.wraps else _test_with_state(self, fn)

    # -- the end -----------------------------------------------------------------------

    def finish(self, result):
        """The statement's own result from the staging machinery's ``result``: the
        mutated objects written back into in place, the cells given their values
        (where no traced call changed one, what it held before: a Python value stays
        one), the scoped cells what they held before."""
        values = as_tuple(result, self.count + len(self.trackers.cells))
        return from_tuple(tuple(self.trackers.finish(
            values, self.saved is not None, self.where, self.construct, self.may_skip)))

    @contextlib.contextmanager
    def side_trip(self):
        """``with plan.side_trip():`` an abstract probe of the block (is its condition
        traced? does it grow a list with traced values?) that is not the region's own
        run: afterwards cells, objects and the bookkeeping are as before it, so that a
        loop the probe lets run as Python is Python's throughout (its closures read
        the cells its iterations leave), and one staged after it starts afresh."""
        if self.saved is not None:   # already tracing the region: part of that
            yield
            return
        last = self.last
        self._save()
        try:
            yield
        finally:
            self.abandon()
            self.saved = None
            self.last = last
            self.trackers.forget_changes(cells=True)

    def on_unroll(self):
        """The loop's staging failed and it runs unrolled instead, as Python from the
        state it was given: cells and objects as they were before tracing, and from
        here on Python's (an escaping closure reads the cells the iterations left)."""
        self.abandon()
        self.saved = None
        self.last = self.first
        self.trackers.forget_changes(cells=False)

    def abandon(self):
        """After an error while staging: cells and objects as they were before."""
        if self.saved is not None:
            self.trackers.restore()


def _body_with_state(plan: Carry, fn, skip):
    """``plan.body(fn, skip)``: ``fn`` taking and giving the carried values."""
    trackers, count = plan.trackers, plan.count
    start = skip + count
    branch = plan.construct == "if"   # a branch is only carried when staged

    def with_state(*args):
        entered = args[start:]
        params = args[skip:start]
        if not branch and plan.saved is None and plan._unchanged(params, entered):
            # Python mode: cells and objects hold what the body left; read them
            # back without the bookkeeping that staging needs.
            out = as_tuple(fn(*args[:skip], *trackers.params(params)), count)
            return from_tuple(plan._quick_leave(out))
        traced = plan._enter(params, entered, traced=branch)
        leaves = [objects.leaves(params[c.index]) for c in trackers.containers] if traced \
            else None
        out = as_tuple(fn(*args[:skip], *trackers.params(params)), count)
        if traced:
            for container, before in zip(trackers.containers, leaves, strict=True):
                container.note(params[container.index], before, out[container.index])
        return from_tuple(plan._leave(entered, out))

    with_state.state_names = plan.names + tuple(t.name for t in trackers.cells)
    with_state.__wrapped__ = fn
    with_state.viewed = functools.partial(_viewed, trackers)
    with_state.carried_cells = functools.partial(_carried_cells, trackers)
    with_state.on_unroll = plan.on_unroll
    with_state.side_trip = plan.side_trip
    return with_state


def _carried_cells(trackers) -> list:
    """The closure cells the region carries or scopes (``side_effects.watch`` leaves
    them out: a helper that writes one writes the region's own state)."""
    return [tracker.cell for tracker in (*trackers.cells, *trackers.scoped)]


def _viewed(trackers) -> list:
    """``(name, object)`` of the plain objects the block's state carries as their
    attributes (``trackers.View``): ``side_effects.watch`` watches what else they
    hold (``p.stats`` of ``p.stats.n += 1``), which the region does not carry."""
    return [(view.label, view.obj) for view in trackers.views]


def _test_with_state(plan: Carry, fn):
    """``plan.test(fn)``: the loop condition ``fn`` taking the carried values."""
    trackers, count = plan.trackers, plan.count

    def with_state(*args):
        params, entered = args[:count], args[count:]
        if plan.saved is None and plan._unchanged(params, entered):
            return fn(*trackers.params(params))    # Python mode
        traced = plan._enter(params, entered)
        result = fn(*trackers.params(params))
        if traced:
            for tracker, before, after in zip(trackers.cells, entered,
                                              trackers.read(entered), strict=True):
                if tracker.differs(before, after):
                    where = plan.where
                    raise ConversionError(
                        f"this loop's condition assigns '{tracker.name}' (through a "
                        "nested function), and the loop is staged: a staged condition "
                        f"can only compute a value. Assign '{tracker.name}' in the "
                        "loop body instead.", where.filename, where.lineno)
        return result

    with_state.state_names = plan.names
    with_state.__wrapped__ = fn
    with_state.viewed = functools.partial(_viewed, trackers)
    with_state.carried_cells = functools.partial(_carried_cells, trackers)
    with_state.side_trip = plan.side_trip
    return with_state


def locals_(names) -> dict:
    """``locals()`` of the user's function: the variables ``names`` (a lambda
    naming them, ``lambda: (n, total)``, whose closure holds them) that are bound,
    by name, in alphabetical order."""
    out = {}
    for name, cell in zip(names.__code__.co_freevars, names.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if not isinstance(value, Undefined):
            out[name] = value
    return out


def dir_(names) -> list:
    """``dir()`` of the user's function: the sorted names of its bound variables."""
    return sorted(locals_(names))
