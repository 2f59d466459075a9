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

Each such value has a tracker (``trackers.py``) answering one protocol; ``Carry``
asks them in one order: lift at ``start``, snapshot before the first traced run,
enter / read / note around each run, finish (or restore, on ``abandon`` and after
an abstract probe's ``side_trip``) at the end.
"""

from __future__ import annotations

import contextlib

from autograph.errors import ConversionError
from autograph.runtime import objects
from autograph.runtime.state import as_tuple, from_tuple
from autograph.runtime.tracing import caller_location, param_names
from autograph.runtime.trackers import (
    CONTAINER_TYPES,
    MutatedParameter,
    ScopedCell,
    View,
    cell_tracker,
    containers,
    same,
    same_value,
)
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
    (``trackers.py``): ``start(state)`` gives the state the staging machinery
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
        self.count = len(state)
        self.names = param_names(fn, skip)
        mutated = frozenset(mutated)
        # The parameters that are objects mutated in place; plain ones are views.
        self.mutated = [MutatedParameter(i, state[i]) for i, name in enumerate(self.names)
                        if name in mutated and not objects.is_immutable(state[i])]
        self.param_views = {p.index: View(self.names[p.index], p.original)
                            for p in self.mutated if objects.is_plain_object(p.original)}
        self.view_order = sorted(self.param_views)
        held = {i for i, name in enumerate(self.names) if name in shared}
        self.containers = containers(state, {p.index for p in self.mutated}, held)
        # The parameters whose objects tell a traced run from Python's own iteration.
        self.watched = self.view_order + [c.index for c in self.containers]
        pairs = []
        if cells is not None:
            pairs = list(zip(cells.__code__.co_freevars, cells.__closure__, strict=True))
        known = {id(cell) for _, cell in pairs}
        pairs += [(name, cell) for name, cell in hidden if id(cell) not in known]
        in_place = mutated | {name for name, _ in hidden}
        scoped = frozenset(scoped)
        self.cells = [cell_tracker(n, c, in_place=n in in_place)
                      for n, c in pairs if n not in scoped]
        self.scoped = [ScopedCell(n, c) for n, c in pairs if n in scoped]
        # Every plain object carried as its attributes: the parameters', the cells'.
        self.views = [self.param_views[i] for i in self.view_order]
        self.views += [t.view for t in self.cells if t.view is not None]
        self.last = None        # the extra values as the block functions last left them
        self.saved = None       # True once cells and viewed objects are snapshot

    @property
    def wraps(self) -> bool:
        """Whether the block functions need wrapping (else only ``finish`` works)."""
        return (bool(self.cells or self.views or self.containers)
                or bool(self.scoped) and self.construct == "if")

    # -- the carried values ------------------------------------------------------------

    def _read(self, entered) -> tuple:
        """The cells' values after a run that ``entered`` them."""
        return tuple(t.read(e) for t, e in zip(self.cells, entered, strict=True))

    def _watched(self, params) -> tuple:
        return tuple(params[i] for i in self.watched)

    def start(self, state) -> tuple:
        state = tuple(self.param_views[i].lift() if i in self.param_views else v
                      for i, v in enumerate(state))
        values = tuple(t.lift() for t in self.cells)
        # The attributes each viewed object carries (a Python-mode iteration reads
        # just those back; staging checks the rest).
        for i in self.view_order:
            self.param_views[i].remember(self.param_views[i].obj, state[i])
        for tracker, value in zip(self.cells, values, strict=True):
            if tracker.view is not None:
                tracker.view.remember(tracker.view.obj, value)
        self.last = self.first = (self._watched(state), values)
        return (*state, *values)

    def _save(self):
        if self.saved is None:
            for tracker in (*self.cells, *self.scoped, *self.views):
                tracker.snapshot()
            self.saved = True

    def _enter(self, params, values, traced=False) -> bool:
        """Store the incoming carried values where the block's code reads them;
        whether they were new (a traced call, not Python's own iteration; ``traced``:
        known to be one)."""
        watched = self._watched(params)
        last = self.last
        if (not traced and last is not None and same(watched, last[0])
                and same(values, last[1])):
            return False
        self._save()
        # Each traced run (a branch, a loop body, a probe of one) starts from what the
        # scoped cells held before the statement, not from what another run left.
        for tracker in self.scoped:
            tracker.restore()
        for i in self.view_order:
            self.param_views[i].enter(params[i])
        for tracker, value in zip(self.cells, values, strict=True):
            tracker.enter(value)
        self.last = (watched, values)
        return True

    def _entered_views(self, entered) -> list:
        """The attributes each viewed object entered the last run with."""
        return [*self.last[0][:len(self.view_order)],
                *(v for t, v in zip(self.cells, entered, strict=True) if t.view is not None)]

    def _leave(self, entered, out):
        """The block's results: its own, each viewed object's attributes, the cells."""
        out = list(out)
        entered_views = self._entered_views(entered)
        if self.saved is not None:   # while staging: which attributes really change
            for view, carried in zip(self.views, entered_views, strict=True):
                view.check(carried, self.where, self.construct)
            for view, carried in zip(self.views, entered_views, strict=True):
                view.note(carried)
        for i in self.view_order:
            out[i] = objects.attributes(self.param_views[i].obj)
        values = self._read(entered)
        for tracker, before, after in zip(self.cells, entered, values, strict=True):
            tracker.note(before, after)
        self.last = (self._watched(out), values)
        return (*out, *values)

    def _unchanged(self, params, values) -> bool:
        """Whether the incoming values are those the block functions last left."""
        last_watched, last_values = self.last
        for a, b in zip(values, last_values, strict=True):
            if a is not b and not (isinstance(a, Undefined) and isinstance(b, Undefined)):
                return False
        return all(params[i] is v for i, v in zip(self.watched, last_watched, strict=True))

    def _quick_leave(self, out):
        """``_leave`` for a Python-mode call: the results as the body left them."""
        out = list(out)
        for i in self.view_order:
            view = self.param_views[i]
            out[i] = view.quick_read(view.obj)
        values = tuple(t.quick_read() for t in self.cells)
        self.last = (self._watched(out), values)
        return (*out, *values)

    def _params(self, args):
        if not self.param_views:
            return args
        return tuple(self.param_views[i].obj if i in self.param_views else a
                     for i, a in enumerate(args))

    # -- the wrapped functions ---------------------------------------------------------

    def body(self, fn, skip: int = 0):
        """``fn`` (a branch, or a loop body taking ``skip`` items first) taking and
        giving the carried values after its own state."""
        if not self.wraps:
            return fn
        count = self.count
        start = skip + count
        branch = self.construct == "if"   # a branch is only carried when staged

        def with_state(*args):
            entered = args[start:]
            params = args[skip:start]
            if not branch and self.saved is None and self._unchanged(params, entered):
                # Python mode: cells and objects hold what the body left; read them
                # back without the bookkeeping that staging needs.
                out = as_tuple(fn(*args[:skip], *self._params(params)), count)
                return from_tuple(self._quick_leave(out))
            traced = self._enter(params, entered, traced=branch)
            leaves = [objects.leaves(params[c.index]) for c in self.containers] if traced \
                else None
            out = as_tuple(fn(*args[:skip], *self._params(params)), count)
            if traced:
                for container, before in zip(self.containers, leaves, strict=True):
                    container.note(params[container.index], before, out[container.index])
            return from_tuple(self._leave(entered, out))

        with_state.state_names = self.names + tuple(t.name for t in self.cells)
        with_state.__wrapped__ = fn
        with_state.on_unroll = self.on_unroll
        with_state.side_trip = self.side_trip
        return with_state

    def test(self, fn):
        """A loop condition ``fn`` taking the carried values after its own state. A
        staged condition cannot change them: that raises at the user's line."""
        if fn is None or not self.wraps:
            return fn
        count = self.count

        def with_state(*args):
            params, entered = args[:count], args[count:]
            if self.saved is None and self._unchanged(params, entered):
                return fn(*self._params(params))    # Python mode
            traced = self._enter(params, entered)
            result = fn(*self._params(params))
            if traced:
                for tracker, before, after in zip(self.cells, entered, self._read(entered),
                                                  strict=True):
                    if not same_value(before, after):
                        where = self.where
                        raise ConversionError(
                            f"this loop's condition assigns '{tracker.name}' (through a "
                            "nested function), and the loop is staged: a staged condition "
                            f"can only compute a value. Assign '{tracker.name}' in the "
                            "loop body instead.", where.filename, where.lineno)
            return result

        with_state.state_names = self.names
        with_state.__wrapped__ = fn
        with_state.side_trip = self.side_trip
        return with_state

    # -- the end -----------------------------------------------------------------------

    def finish(self, result):
        """The statement's own result from the staging machinery's ``result``: the
        mutated objects written back into in place, the cells given their values
        (where no traced call changed one, what it held before: a Python value stays
        one), the scoped cells what they held before."""
        values = as_tuple(result, self.count + len(self.cells))
        out = list(values[:self.count])
        staged = self.saved is not None
        finals = [out[i] for i in self.view_order]
        finals += [v for t, v in zip(self.cells, values[self.count:], strict=True)
                   if t.view is not None]
        for view, final in zip(self.views, finals, strict=True):
            view.finish(final, staged)
        for parameter in self.mutated:
            i = parameter.index
            out[i] = parameter.original if i in self.param_views else parameter.finish(
                out[i], staged)
        for container in self.containers:
            if staged:
                container.check(self.names[container.index], self.where, self.construct,
                                self.may_skip)
            out[container.index] = container.finish(out[container.index], staged)
        for tracker, value in zip(self.cells, values[self.count:], strict=True):
            tracker.finish(value, staged)
        if staged:
            for tracker in self.scoped:
                tracker.restore()
        return from_tuple(tuple(out))

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
            for view in self.views:
                view.changes.clear()
            for tracker in self.cells:
                tracker.changed = False
            for container in self.containers:
                container.reset()

    def on_unroll(self):
        """The loop's staging failed and it runs unrolled instead, as Python from the
        state it was given: cells and objects as they were before tracing, and from
        here on Python's (an escaping closure reads the cells the iterations left)."""
        self.abandon()
        self.saved = None
        self.last = self.first
        for view in self.views:
            view.changes.clear()
        for container in self.containers:
            container.reset()

    def abandon(self):
        """After an error while staging: cells and objects as they were before."""
        if self.saved is None:
            return
        for tracker in (*self.cells, *self.scoped, *self.views):
            tracker.restore()


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
