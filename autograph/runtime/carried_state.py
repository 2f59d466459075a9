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
"""

from __future__ import annotations

import contextlib

import jax
import numpy as np

from autograph.errors import ConversionError
from autograph.runtime import objects
from autograph.runtime.state import as_tuple, from_tuple
from autograph.runtime.tracing import Tracer, caller_location, param_names
from autograph.runtime.undefined import Undefined

_EMPTY = object()   # a snapshot of an unbound cell
_VALUE, _OBJECT, _VIEW = "value", "object", "view"
# Attribute values a plain object surely carries as they are (``objects.attributes``).
_LEAVES = (jax.Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def carry(run, fn, state, *, construct, skip=0, cells=None, scoped=(), mutated=(), hidden=()):
    """``run(carry, state)`` for a statement whose block function ``fn`` (its first
    ``skip`` parameters are loop items) writes ``cells`` or mutates the parameters
    named in ``mutated``; ``hidden`` are further ``(name, cell)`` pairs of objects
    with state of their own (``objects.stateful_cells``). ``run(plan, state)`` runs
    the statement (its operator's inner path, never the operator again) with
    ``plan``'s wrapped functions (``plan.body``, ``plan.test``) on the carried
    state; the result comes back in the statement's own form, cells and objects
    updated."""
    state = tuple(state)
    plan = Carry(fn, skip, state, cells, scoped, mutated, hidden)
    plan.where, plan.construct = caller_location(), construct
    try:
        return plan.finish(run(plan, plan.start(state)))
    except BaseException:
        plan.abandon()
        raise


class Carry:
    """The extra state of one branch or loop statement: ``start(state)`` gives the
    state the staging machinery carries, ``body(fn)`` and ``test(fn)`` wrap the
    block's functions to take and give it, ``finish(result)`` puts the results
    where they belong, ``abandon()`` undoes what tracing left after a failure.

    A wrapped function only stores values into cells and objects when they are
    not the ones those already hold (``last``): in Python mode that never happens,
    so the user's code sees its state exactly as it left it (a loop condition that
    changes a variable through a closure included)."""

    def __init__(self, fn, skip, state, cells, scoped, mutated, hidden):
        self.where = None       # the statement's line and kind, for messages
        self.construct = None
        self.count = len(state)
        self.names = param_names(fn, skip)
        mutated = frozenset(mutated)
        # The parameters that are objects mutated in place: position -> original.
        self.objects = {i: state[i] for i, name in enumerate(self.names)
                        if name in mutated and not objects.is_immutable(state[i])}
        self.views = {i for i, value in self.objects.items() if objects.is_plain_object(value)}
        pairs = []
        if cells is not None:
            pairs = list(zip(cells.__code__.co_freevars, cells.__closure__, strict=True))
        known = {id(cell) for _, cell in pairs}
        pairs += [(name, cell) for name, cell in hidden if id(cell) not in known]
        hidden_names = {name for name, _ in hidden}
        scoped = frozenset(scoped)
        self.cells = [(n, c) for n, c in pairs if n not in scoped]
        self.scoped = [(n, c) for n, c in pairs if n in scoped]
        self.unbound = [isinstance(_contents(n, c), Undefined) for n, c in self.cells]
        self.kinds = []
        for name, cell in self.cells:
            value = _contents(name, cell)
            if name in mutated or name in hidden_names:
                kind = _VIEW if objects.is_plain_object(value) else _OBJECT
            else:
                kind = _VALUE
            self.kinds.append(kind)
        # The objects held by cells in object or view form, as they were at the start.
        self.cell_objects = [_contents(n, c) if kind != _VALUE else None
                             for (n, c), kind in zip(self.cells, self.kinds, strict=True)]
        self.entered = [None] * len(self.cells)   # an object cell's leaves when stored
        self.view_changes = {}  # viewed object's label -> attributes a traced call changed
        self.view_leaves = []   # each viewed object's attributes' leaves when stored
        self.last = None        # the extra values as the block functions last left them
        self.saved = None       # what cells and viewed objects held before tracing
        self.changed = [False] * len(self.cells)

    @property
    def wraps(self) -> bool:
        """Whether the block functions need wrapping (else only ``finish`` works)."""
        return bool(self.cells or self.views) or bool(self.scoped) and self.construct == "if"

    # -- the carried values ------------------------------------------------------------

    def _read(self, entered=None) -> tuple:
        """The cells' values; one still unbound that came in as ``None`` (carried
        unbound through a staged loop) goes out as ``None`` again."""
        values = []
        for k, ((name, cell), kind) in enumerate(zip(self.cells, self.kinds, strict=True)):
            value = _contents(name, cell)
            if kind == _VIEW:
                value = objects.attributes(value)
            elif (entered is not None and entered[k] is None and self.unbound[k]
                  and isinstance(value, Undefined)):
                value = None
            values.append(value)
        return tuple(values)

    def start(self, state) -> tuple:
        state = tuple(objects.attributes(v) if i in self.views else v
                      for i, v in enumerate(state))
        values = self._read()
        # The attributes each viewed object carries (a Python-mode iteration reads
        # just those back; staging checks the rest).
        self.view_order = sorted(self.views)
        self.view_names = {}
        for i in self.view_order:
            self._remember_view(i, self.objects[i], state[i])
        for (name, _), kind, obj, value in zip(self.cells, self.kinds, self.cell_objects,
                                               values, strict=True):
            if kind == _VIEW:
                self._remember_view(name, obj, value)
        self.last = self.first = (tuple(state[i] for i in sorted(self.views)), values)
        return (*state, *values)

    def _save(self):
        if self.saved is None:
            cells = [_snapshot(c) for _, c in self.cells + self.scoped]
            viewed = [dict(vars(self.objects[i])) for i in sorted(self.views)]
            viewed += [dict(vars(obj)) for obj, kind in zip(self.cell_objects, self.kinds,
                                                             strict=True) if kind == _VIEW]
            self.saved = (cells, viewed)

    def _enter(self, params, values, traced=False) -> bool:
        """Store the incoming carried values where the block's code reads them;
        whether they were new (a traced call, not Python's own iteration; ``traced``:
        known to be one)."""
        views = tuple(params[i] for i in sorted(self.views))
        last = self.last
        if (not traced and last is not None and _same(views, last[0])
                and _same(values, last[1])):
            return False
        self._save()
        # Each traced run (a branch, a loop body, a probe of one) starts from what the
        # scoped cells held before the statement, not from what another run left.
        for (_, cell), before in zip(self.scoped, self.saved[0][len(self.cells):],
                                     strict=True):
            _restore(cell, before)
        for i, view in zip(sorted(self.views), views, strict=True):
            objects.set_attributes(self.objects[i], view)
        for (name, cell), kind, obj, value, unbound in zip(
                self.cells, self.kinds, self.cell_objects, values, self.unbound, strict=True):
            if kind == _VIEW:
                objects.set_attributes(obj, value)
            elif value is None and unbound:   # carried unbound (state.through_unbound)
                _store(cell, Undefined(name))
            else:
                _store(cell, value)
        self.entered = [objects.leaves(v) if kind == _OBJECT else None
                        for kind, v in zip(self.kinds, values, strict=True)]
        viewed = list(views) + [v for v, kind in zip(values, self.kinds, strict=True)
                                if kind == _VIEW]
        self.view_leaves = [{name: objects.leaves(v) for name, v in view.items()}
                            for view in viewed]
        self.last = (views, values)
        return True

    def _viewed(self):
        """``(label, object)`` of each plain object carried as its attributes."""
        found = [(self.names[i], self.objects[i]) for i in sorted(self.views)]
        found += [(name, obj) for (name, _), obj, kind in zip(
            self.cells, self.cell_objects, self.kinds, strict=True) if kind == _VIEW]
        return found

    def _check_attributes(self, entered_views):
        """While staging, a plain object may only change the attributes it carries."""
        if self.saved is None:
            return
        for (label, obj), before, carried_values in zip(self._viewed(), self.saved[1],
                                                        entered_views, strict=True):
            for name, value in vars(obj).items():
                if name in carried_values or before.get(name, _EMPTY) is value:
                    continue
                where = self.where
                raise ConversionError(
                    f"'{label}.{name}' is assigned inside this {self.construct}, which is "
                    "staged because its condition or iterable is traced, and it holds a "
                    f"{type(value).__name__} ({value!r:.60}): a staged {self.construct} can "
                    "only carry arrays, numbers and pytrees of them, and runs its code "
                    "once while tracing. Keep the assignment out of the staged region, or "
                    "make the attribute an array.", where.filename, where.lineno)

    def _leave(self, entered, out):
        """The block's results: its own, each viewed object's attributes, the cells."""
        out = list(out)
        entered_views = [self.last[0][k] for k in range(len(self.views))]
        entered_views += [v for v, kind in zip(entered, self.kinds, strict=True)
                          if kind == _VIEW]
        self._check_attributes(entered_views)
        if self.saved is not None:   # while staging: which attributes really change
            for (label, obj), before, leaves in zip(self._viewed(), entered_views,
                                                    self.view_leaves, strict=True):
                changes = self.view_changes.setdefault(label, set())
                for name, value in before.items():
                    now = getattr(obj, name, _EMPTY)
                    if now is not value or not _same(leaves[name], objects.leaves(now)):
                        changes.add(name)
        for i in sorted(self.views):
            out[i] = objects.attributes(self.objects[i])
        values = self._read(entered)
        for k, (before, after) in enumerate(zip(entered, values, strict=True)):
            leaves = self.entered[k]
            if not _same_value(before, after) or (leaves is not None
                                       and not _same(leaves, objects.leaves(after))):
                self.changed[k] = True
        self.last = (tuple(out[i] for i in sorted(self.views)), values)
        return (*out, *values)

    def _unchanged(self, params, values) -> bool:
        """Whether the incoming values are those the block functions last left."""
        last_views, last_values = self.last
        for a, b in zip(values, last_values, strict=True):
            if a is not b and not (isinstance(a, Undefined) and isinstance(b, Undefined)):
                return False
        views = self.views
        return not views or all(params[i] is v
                                for i, v in zip(self.view_order, last_views, strict=True))

    def _quick_leave(self, out):
        """``_leave`` for a Python-mode call: the results as the body left them."""
        out = list(out)
        for i in self.view_order:
            out[i] = self._view(i, self.objects[i])
        values = []
        for (name, cell), kind in zip(self.cells, self.kinds, strict=True):
            value = _contents(name, cell)
            if kind == _VIEW:
                value = self._view(name, value)
            values.append(value)
        values = tuple(values)
        self.last = (tuple(out[i] for i in self.view_order), values)
        return (*out, *values)

    def _view(self, key, obj) -> dict:
        """The carried attributes of the plain object ``obj`` (``objects.attributes``),
        read without asking each value what it is while the object has the same
        attributes as last time, the carried ones still arrays or numbers and the
        others the same objects; else found anew (an attribute added, deleted or
        given another kind of value: a loop staged from here carries what it holds)."""
        names, others = self.view_names[key]
        attributes = getattr(obj, "__dict__", None)
        if attributes is not None and len(attributes) == len(names) + len(others):
            view = {}
            for name, value in attributes.items():
                if name in names:
                    if not isinstance(value, _LEAVES):
                        break
                    view[name] = value
                elif others.get(name, _EMPTY) is not value:
                    break
            else:
                return view
        view = objects.attributes(obj)
        self._remember_view(key, obj, view)
        return view

    def _remember_view(self, key, obj, view):
        self.view_names[key] = (frozenset(view), {
            name: value for name, value in vars(obj).items() if name not in view})

    def _params(self, args):
        if not self.views:
            return args
        return tuple(self.objects[i] if i in self.views else a for i, a in enumerate(args))

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
            self._enter(params, entered, traced=branch)
            out = as_tuple(fn(*args[:skip], *self._params(params)), count)
            return from_tuple(self._leave(entered, out))

        with_state.state_names = self.names + tuple(n for n, _ in self.cells)
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
                for (name, _), before, after in zip(self.cells, entered,
                                                     self._read(entered), strict=True):
                    if not _same_value(before, after):
                        where = self.where
                        raise ConversionError(
                            f"this loop's condition assigns '{name}' (through a nested "
                            "function), and the loop is staged: a staged condition can "
                            f"only compute a value. Assign '{name}' in the loop body "
                            "instead.", where.filename, where.lineno)
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
        saved = self.saved
        if saved is not None:   # the attributes tracing changed get the results
            for (label, obj), before, final in zip(
                    self._viewed(), saved[1],
                    [out[i] for i in sorted(self.views)]
                    + [v for v, kind in zip(values[self.count:], self.kinds, strict=True)
                       if kind == _VIEW], strict=True):
                vars(obj).clear()
                vars(obj).update(before)
                for name in self.view_changes.get(label, ()):
                    setattr(obj, name, final[name])
        for i, original in self.objects.items():
            out[i] = original if i in self.views else objects.write_back(original, out[i])
        for k, ((_, cell), kind, obj, value) in enumerate(zip(
                self.cells, self.kinds, self.cell_objects, values[self.count:], strict=True)):
            if kind == _VIEW:
                pass
            elif kind == _OBJECT and saved is not None and not self.changed[k]:
                _store(cell, obj)
            elif kind == _OBJECT:
                _store(cell, objects.write_back(obj, value))
            elif saved is None:
                pass   # never staged: the cell holds what the Python code left in it
            elif not self.changed[k]:
                _restore(cell, saved[0][k])
            else:
                _store(cell, value)
        if saved is not None:
            for (_, cell), before in zip(self.scoped, saved[0][len(self.cells):],
                                         strict=True):
                _restore(cell, before)
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
            self.view_changes.clear()
            self.changed = [False] * len(self.cells)

    def on_unroll(self):
        """The loop's staging failed and it runs unrolled instead, as Python from the
        state it was given: cells and objects as they were before tracing, and from
        here on Python's (an escaping closure reads the cells the iterations left)."""
        self.abandon()
        self.saved = None
        self.last = self.first
        self.view_changes.clear()

    def abandon(self):
        """After an error while staging: cells and objects as they were before."""
        if self.saved is None:
            return
        cells, viewed = self.saved
        for (_, cell), before in zip(self.cells + self.scoped, cells, strict=True):
            _restore(cell, before)
        targets = [self.objects[i] for i in sorted(self.views)]
        targets += [obj for obj, kind in zip(self.cell_objects, self.kinds, strict=True)
                    if kind == _VIEW]
        for obj, before in zip(targets, viewed, strict=True):
            vars(obj).clear()
            vars(obj).update(before)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))


def _same_value(a, b) -> bool:
    """The same object, or both unbound."""
    return a is b or (isinstance(a, Undefined) and isinstance(b, Undefined))


def _contents(name, cell):
    try:
        return cell.cell_contents
    except ValueError:
        return Undefined(name)


def _store(cell, value):
    _set_cell(cell, value, unbind=isinstance(value, Undefined))


def _snapshot(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


def _restore(cell, value):
    _set_cell(cell, value, unbind=value is _EMPTY)


def _set_cell(cell, value, *, unbind):
    """``cell`` holding ``value``, or unbound (``unbind``), as ``del x`` leaves it."""
    if not unbind:
        cell.cell_contents = value
        return
    try:
        del cell.cell_contents
    except ValueError:
        pass


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
