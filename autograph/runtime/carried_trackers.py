"""The values one branch or loop statement carries by identity, as one group.

``CarriedTrackers`` is built from what the statement's call says (``cells=``,
``scoped=``, ``mutated=``, hidden objects, ``shared=``): one tracker per value
(``trackers.py``), each kind in its list, and the steps of the trackers' protocol
done for all of them at once, in the order ``carried_state.Carry`` asks.

Before: ``while ...: t = t + 1`` with ``g = lambda: t`` and ``box.total += 1``
(``box`` a plain object). After: ``cells``, one ``CellValue`` for ``t``;
``param_views``, one ``View`` of ``box``'s array attributes; ``lift`` gives the
state with ``box`` as its attributes and ``t``'s value after it.
"""

from __future__ import annotations

from autograph.runtime import objects
from autograph.runtime.tracing import param_names
from autograph.runtime.trackers import (
    MutatedParameter,
    ScopedCell,
    View,
    cell_tracker,
    containers,
)


class CarriedTrackers:
    """The trackers of one statement: ``mutated`` (parameters whose objects change in
    place), ``param_views`` (those that are plain objects, carried as attributes,
    by position; ``view_order``, their positions), ``containers`` (parameters'
    lists and dicts), ``cells`` (carried after the state), ``scoped`` (cells not
    carried), and ``views``, every plain object carried as attributes.
    ``watched``: the parameters whose objects tell a traced run from Python's own
    iteration."""

    def __init__(self, fn, skip, state, cells, scoped, mutated, hidden, shared=()):
        self.count = len(state)
        self.names = param_names(fn, skip)
        mutated = frozenset(mutated)
        self.mutated = [MutatedParameter(i, state[i]) for i, name in enumerate(self.names)
                        if name in mutated and not objects.is_immutable(state[i])]
        self.param_views = {p.index: View(self.names[p.index], p.original)
                            for p in self.mutated if objects.is_plain_object(p.original)}
        self.view_order = sorted(self.param_views)
        held = {i for i, name in enumerate(self.names) if name in shared}
        self.containers = containers(state, {p.index for p in self.mutated}, held)
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
        self.views = [self.param_views[i] for i in self.view_order]
        self.views += [t.view for t in self.cells if t.view is not None]

    @property
    def any(self) -> bool:
        """Whether anything is carried beside the state (cells, views, containers)."""
        return bool(self.cells or self.views or self.containers)

    def watched_of(self, params) -> tuple:
        return tuple(params[i] for i in self.watched)

    def lift(self, state) -> tuple:
        """``(state, values)`` at the start: the viewed parameters as their
        attributes, and the cells' values. Each viewed object remembers the
        attributes it carries (a Python-mode iteration reads just those back;
        staging checks the rest)."""
        state = tuple(self.param_views[i].lift() if i in self.param_views else v
                      for i, v in enumerate(state))
        values = tuple(t.lift() for t in self.cells)
        for i in self.view_order:
            self.param_views[i].remember(self.param_views[i].obj, state[i])
        for tracker, value in zip(self.cells, values, strict=True):
            if tracker.view is not None:
                tracker.view.remember(tracker.view.obj, value)
        return state, values

    def snapshot(self):
        for tracker in (*self.cells, *self.scoped, *self.views):
            tracker.snapshot()

    def restore(self):
        for tracker in (*self.cells, *self.scoped, *self.views):
            tracker.restore()

    def enter(self, params, values):
        """Before a traced run: the scoped cells as before the statement (each run
        starts from there, not from what another run left), the incoming values
        stored where the block's code reads them."""
        for tracker in self.scoped:
            tracker.restore()
        for i in self.view_order:
            self.param_views[i].enter(params[i])
        for tracker, value in zip(self.cells, values, strict=True):
            tracker.enter(value)

    def read(self, entered) -> tuple:
        """The cells' values after a run that ``entered`` them."""
        return tuple(t.read(e) for t, e in zip(self.cells, entered, strict=True))

    def leave(self, entered, entered_params, out, staging, where, construct) -> tuple:
        """``(out, values)`` after a run: the block's own results with each viewed
        parameter's attributes, and the cells' values; while ``staging``, each
        viewed object checks and notes which attributes really change."""
        entered_views = [*entered_params,
                         *(v for t, v in zip(self.cells, entered, strict=True)
                           if t.view is not None)]
        if staging:
            for view, carried in zip(self.views, entered_views, strict=True):
                view.check(carried, where, construct)
            for view, carried in zip(self.views, entered_views, strict=True):
                view.note(carried)
        out = list(out)
        for i in self.view_order:
            out[i] = objects.attributes(self.param_views[i].obj)
        values = self.read(entered)
        for tracker, before, after in zip(self.cells, entered, values, strict=True):
            tracker.note(before, after)
        return out, values

    def quick_leave(self, out) -> tuple:
        """``leave`` for a Python-mode call: the results as the body left them."""
        out = list(out)
        for i in self.view_order:
            view = self.param_views[i]
            out[i] = view.quick_read(view.obj)
        return out, tuple(t.quick_read() for t in self.cells)

    def params(self, args):
        """The block's arguments, each viewed parameter its object again."""
        if not self.param_views:
            return args
        return tuple(self.param_views[i].obj if i in self.param_views else a
                     for i, a in enumerate(args))

    def finish(self, values, staged, where, construct, may_skip) -> list:
        """The statement's own results from ``values`` (its state, then the cells'):
        the objects written back into in place, the cells given their values, the
        scoped cells what they held before (where ``staged``)."""
        out = list(values[:self.count])
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
                container.check(self.names[container.index], where, construct, may_skip)
            out[container.index] = container.finish(out[container.index], staged)
        for tracker, value in zip(self.cells, values[self.count:], strict=True):
            tracker.finish(value, staged)
        if staged:
            for tracker in self.scoped:
                tracker.restore()
        return out

    def forget_changes(self, *, cells: bool):
        """What traced runs noted as changed, forgotten (the views' and containers';
        with ``cells``, the cells' too)."""
        for view in self.views:
            view.changes.clear()
        if cells:
            for tracker in self.cells:
                tracker.changed = False
        for container in self.containers:
            container.reset()
