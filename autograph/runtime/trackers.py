"""One tracker per kind of value a staged block shares with Python by identity.

``carried_state.Carry`` coordinates a region (a branch set or a loop body); each
value it carries beside the block's own state has a tracker here, and every
tracker answers the same protocol, in the order the region asks:

- ``lift()``: the value the staging machinery carries for it, at the start;
- ``snapshot()`` / ``restore()``: what it held before the first traced run, and
  that put back (an abandoned or side-tripped trace, a scoped cell);
- ``enter(value)``: before a traced run, the incoming value stored where the
  user's code reads it (a cell, an object's attributes);
- ``read(...)`` / ``note(before, after)``: after a run, the outgoing value, and
  whether a traced run changed it;
- ``finish(value, staged)``: at the end, the result written back where Python
  keeps it (``staged``: a traced run made the result; else Python's iterations
  did, and the cell already holds it).

Kinds: ``CellValue`` (a closure cell the block rebinds), ``CellObject`` (a cell
holding an object the block changes in place, Flax NNX state included),
``View`` (a plain object carried as its array attributes, a parameter or a
cell's), ``ScopedCell`` (a cell nothing reads after the block: not carried,
restored), ``MutatedParameter`` (a parameter's object updated in place) and
``ContainerParameter`` (a parameter's list or dict, written back in place where the
block changed it in place).
Before: ``x`` in ``lambda: x`` assigned in a staged loop is a cell; after, the
loop carries ``x``'s value after its state and the cell gets the result.
"""

from __future__ import annotations

import jax
import numpy as np

from autograph.errors import ConversionError
from autograph.runtime import objects, side_effects
from autograph.runtime.lists import TensorList
from autograph.runtime.tracing import Tracer
from autograph.runtime.undefined import Undefined

EMPTY = object()   # a snapshot of an unbound cell
# Attribute values a plain object surely carries as they are (``objects.attributes``).
_LEAVES = (jax.Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


class ScopedCell:
    """A cell the block assigns that nothing reads after it (a loop index a nested
    function reads): not carried; each traced run starts from what it held before
    the region, and a staged region leaves it so."""

    def __init__(self, name, cell):
        self.name, self.cell = name, cell
        self.before = EMPTY

    def snapshot(self):
        self.before = _snapshot(self.cell)

    def restore(self):
        _restore(self.cell, self.before)


class CellValue(ScopedCell):
    """A closure cell the block rebinds, carried as its value. One unbound before
    the region is carried as ``None`` through a staged loop (``state.through_unbound``)
    and comes out unbound again."""

    view = None

    def __init__(self, name, cell):
        super().__init__(name, cell)
        self.unbound = isinstance(self.contents(), Undefined)
        self.changed = False

    def contents(self):
        return _contents(self.name, self.cell)

    def lift(self):
        return self.contents()

    def quick_read(self):
        """``read`` for a Python-mode call: the cell as the body left it."""
        return self.contents()

    def read(self, entered):
        value = self.contents()
        if entered is None and self.unbound and isinstance(value, Undefined):
            return None
        return value

    def enter(self, value):
        _store(self.cell, Undefined(self.name) if value is None and self.unbound else value)

    def note(self, before, after):
        if not same_value(before, after):
            self.changed = True

    def differs(self, before, after) -> bool:
        """Whether ``after`` (``read``) is not what was entered (``before``)."""
        return not same_value(before, after)

    def finish(self, value, staged):
        if not staged:
            return   # the cell holds what the Python code left in it
        if self.changed:
            _store(self.cell, value)
        else:   # no traced run changed it: what it held before (a Python value stays one)
            self.restore()


class CellObject(CellValue):
    """A cell holding an object the block changes in place (``mutated``, or with
    hidden state such as a Flax NNX module): carried as the object, and the result's
    leaves written back into the same object."""

    def __init__(self, name, cell):
        super().__init__(name, cell)
        self.original = self.contents()
        self.leaves = None   # the object's leaves as a traced run entered

    def enter(self, value):
        super().enter(value)
        self.leaves = objects.leaves(value)

    def note(self, before, after):
        if not same_value(before, after) or not same(self.leaves, objects.leaves(after)):
            self.changed = True

    def finish(self, value, staged):
        if staged and not self.changed:
            _store(self.cell, self.original)
        else:
            _store(self.cell, objects.write_back(self.original, value))


class View:
    """A plain object (not a pytree) carried as its array attributes
    (``objects.attributes``); ``label`` names it in messages. While staging it may
    only change the attributes it carries; at the end the attributes a traced run
    changed get the results and the others what they held before."""

    def __init__(self, label, obj):
        self.label, self.obj = label, obj
        self.before = {}
        self.leaves = {}     # each carried attribute's leaves as a traced run entered
        self.changes = set()  # the attributes a traced run changed
        self.names = (frozenset(), {})

    def lift(self):
        return objects.attributes(self.obj)

    def remember(self, obj, view):
        """Which attributes ``obj`` carries (``view``) and which others it holds,
        for ``quick_read``."""
        self.names = (frozenset(view), {
            name: value for name, value in vars(obj).items() if name not in view})

    def quick_read(self, obj) -> dict:
        """The carried attributes of ``obj``, read without asking each value what it
        is while the object has the same attributes as last time, the carried ones
        still arrays or numbers and the others the same objects; else found anew (an
        attribute added, deleted or given another kind of value: a loop staged from
        here carries what it holds)."""
        names, others = self.names
        attributes = getattr(obj, "__dict__", None)
        if attributes is not None and len(attributes) == len(names) + len(others):
            view = {}
            for name, value in attributes.items():
                if name in names:
                    if not isinstance(value, _LEAVES):
                        break
                    view[name] = value
                elif others.get(name, EMPTY) is not value:
                    break
            else:
                return view
        view = objects.attributes(obj)
        self.remember(obj, view)
        return view

    def snapshot(self):
        self.before = dict(vars(self.obj))

    def restore(self):
        vars(self.obj).clear()
        vars(self.obj).update(self.before)

    def enter(self, value):
        objects.set_attributes(self.obj, value)
        self.leaves = {name: objects.leaves(v) for name, v in value.items()}

    def check(self, carried, where, construct):
        """While staging: raise at the user's line if the block assigned an
        attribute the region does not carry."""
        for name, value in vars(self.obj).items():
            if name in carried or self.before.get(name, EMPTY) is value:
                continue
            raise ConversionError(
                f"'{self.label}.{name}' is assigned inside this {construct}, which is "
                "staged because its condition or iterable is traced, and it holds a "
                f"{type(value).__name__} ({value!r:.60}): a staged {construct} can "
                "only carry arrays, numbers and pytrees of them, and runs its code "
                "once while tracing. Keep the assignment out of the staged region, or "
                "make the attribute an array.", where.filename, where.lineno)

    def note(self, entered):
        """While staging: which carried attributes a traced run really changed."""
        for name, value in entered.items():
            now = getattr(self.obj, name, EMPTY)
            if now is not value or not same(self.leaves[name], objects.leaves(now)):
                self.changes.add(name)

    def finish(self, final, staged):
        if staged:
            self.restore()
            for name in self.changes:
                setattr(self.obj, name, final[name])


class CellView(CellValue):
    """A cell holding a plain object the block changes (``View``), carried as the
    object's attributes."""

    def __init__(self, name, cell):
        super().__init__(name, cell)
        self.view = View(name, self.contents())

    def lift(self):
        return objects.attributes(self.contents())

    def quick_read(self):
        return self.view.quick_read(self.contents())

    def read(self, entered):
        return objects.attributes(self.contents())

    def differs(self, before, after) -> bool:
        # (by name: ``before`` went through a pytree, which sorts a dict's keys, and
        # ``after`` is in the object's own order)
        return before.keys() != after.keys() or not all(
            same_value(value, after[name]) for name, value in before.items())

    def enter(self, value):
        self.view.enter(value)

    def finish(self, value, staged):
        pass   # the object itself is written back as a view


class MutatedParameter:
    """A state parameter whose object the block changes in place: the result's
    leaves written back into the caller's object."""

    def __init__(self, index, original):
        self.index, self.original = index, original

    def finish(self, value, staged):
        return objects.write_back(self.original, value)


class ContainerParameter:
    """A state parameter holding a Python list or dict. Python changes it in place
    (``a[0] = v``, ``a.append(v)``), and every other name holding the object sees the
    change (``b = a`` before the region); staged, the block gets a copy rebuilt from
    the carried leaves. Where every traced run gave back the very object it was given
    (the block changed it in place rather than rebinding it), the result is written
    back into the caller's object; else the variable is rebound, as Python's
    rebinding would. A staged ``if`` that changes it in place in one branch and
    rebinds it in the other, where something else may hold it (``held``: the
    converter's ``shared=``), is refused at its line: after it, Python's variable is
    the caller's object or a new one depending on the traced condition, and a
    staged ``if`` gives one object for both.

    Before: ``b = a; if x > 0: a[1] = 5`` left ``b`` the old values; after, ``b``
    and ``a`` are one list again, holding the staged values."""

    def __init__(self, index, original, held=False):
        self.index, self.original = index, original
        self.held = held   # something else may hold it too (analysis/sharing.py)
        self.kept = None   # whether every traced run gave back the object it got
        self.changed = False   # a traced run changed it in place
        self.rebound = False   # a traced run gave back another object
        self.returned = False   # a traced run gave back the object it got
        self.either = None   # (name, where, construct) where Python's is either object

    def reset(self):
        """Forget what the traced runs did (a side trip, an unrolled loop)."""
        self.kept, self.changed, self.rebound, self.returned = None, False, False, False

    def note(self, given, entered, returned):
        """After a traced run given ``given`` (with pytree leaves ``entered``): did it
        give back that object, and had it changed it in place?"""
        # A staged list's changes are new TensorLists naming the one they change.
        if isinstance(returned, TensorList) and returned.root is given:
            self.changed = self.returned = True
        elif returned is given:
            self.changed = self.changed or not same(entered, objects.leaves(returned))
            self.returned = True
        else:
            self.rebound = True
        self.kept = not self.rebound

    def check(self, name, where, construct, may_skip=True):
        """Raise at the user's line if one traced run changed the object in place and
        another rebound the variable (an ``if``'s two branches). Where one run kept
        the object and another rebound it (a loop: every run rebound it, but the loop
        may run zero times, ``may_skip``) and something else may hold it, note that Python's
        variable is either object afterwards (``finish``)."""
        if self.held and self.rebound and (self.returned or construct != "if" and may_skip):
            self.either = (name, where, construct)
        if not (self.changed and self.rebound and self.held):
            return   # held by nothing else: the staged values are Python's
        kind = type(self.original).__name__
        raise ConversionError(
            f"'{name}' is changed in place in one branch of this {construct} and "
            f"rebound to a new {kind} in the other, and the {construct} is staged "
            f"because its condition is traced: afterwards Python's '{name}' is the "
            f"{kind} it held before or a new one depending on the condition (another "
            f"name holding the old {kind} sees the change or not), which a staged "
            f"{construct} cannot give. Change it the same way in both branches: "
            f"rebind it in both (copy it first: {name} = {kind}({name})), or change it "
            f"in place in both ({name}[:] = ... for a list, {name}.clear(); "
            f"{name}.update(...) for a dict).", where.filename, where.lineno)

    def finish(self, value, staged):
        if staged and self.either is not None:
            return side_effects.either_object(value, self.original, *self.either)
        if not staged or not self.kept or value is self.original:
            return value
        if self.changed and side_effects.REPLACED:   # one a region before left ambiguous
            side_effects.refuse_if_replaced(self.original)
        if type(value) is type(self.original) is list:
            out = objects.write_back(self.original, value)
            if out is not self.original:   # another length: Python's list grew too
                self.original[:] = value
            return self.original
        return objects.write_back(self.original, value)


def containers(state, skip=frozenset(), held=frozenset()) -> list:
    """The ``ContainerParameter`` of each position of ``state`` (but ``skip``) that
    holds a Python list or dict; ``held``: the positions whose object something else
    may hold too."""
    return [ContainerParameter(i, v, i in held) for i, v in enumerate(state)
            if type(v) in CONTAINER_TYPES and i not in skip]


CONTAINER_TYPES = (list, dict)


def cell_tracker(name, cell, *, in_place: bool):
    """The tracker of a carried cell: ``in_place`` when the block changes the object
    it holds (``mutated``, or with hidden state)."""
    if not in_place:
        return CellValue(name, cell)
    if objects.is_plain_object(_contents(name, cell)):
        return CellView(name, cell)
    return CellObject(name, cell)


def same(a, b) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))


def same_value(a, b) -> bool:
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
        return EMPTY


def _restore(cell, value):
    _set_cell(cell, value, unbind=value is EMPTY)


def _set_cell(cell, value, *, unbind):
    """``cell`` holding ``value``, or unbound (``unbind``), as ``del x`` leaves it."""
    if not unbind:
        cell.cell_contents = value
        return
    try:
        del cell.cell_contents
    except ValueError:
        pass
