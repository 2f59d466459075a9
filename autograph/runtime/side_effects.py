"""Python state a staged body changes without carrying it.

A staged loop or branch runs its body once (or a few times, with the abstract
probes) while tracing, not once per iteration when the program runs. A body that
changes Python state that the loop does not carry (a list a helper appends to, a
stack it pops from inside an expression, an iterator it advances with ``next``)
would change it once, with the values of the trace:

    stack = [1, 2, 3]
    for i in range(3):
        total += x * stack.pop()      # Python pops 3, 2, 1; one trace pops 3 only

Detection is cheap and general: before the region is traced, ``watch(fns,
carried)`` takes a signature of the mutable Python objects the body can reach
(what its closure cells and the globals its code names hold, and, through the
user's functions found there, theirs: ``list``/``dict``/``set``/``deque``/
``bytearray`` by length and the identity of their items, iterators by position,
writeable NumPy arrays of up to 64 KiB by their bytes, the plain objects such a
list or dict holds by their attributes (``for p in ps: p.x = ...``), and what those
hold in turn, three levels deep (``p.stats.n += 1``, ``p.hist.append(v)``); plain
objects the body reaches directly are carried instead (``carried_state.py``), and
what they hold besides their array attributes is watched: a helper's ``a[i] = 1``
in a staged branch writes whatever the condition; random number generators by their
state, ``random``'s and ``np.random``'s own included: a draw happens once while
tracing, not once per iteration; and the closure cells of the user's functions the
body reaches, other than the region's own, by the identity of what they hold: a
counter another function made, whose ``nonlocal count`` a call assigns),
leaving out what the region carries as state. After tracing, ``changed()`` lists
those whose signature moved. The caller then restores them (``restore()``: the
containers' items as they were; an iterator that cannot be rewound is not
restorable) and runs the loop unrolled, as ``jax.jit`` of the original does, where
its trip count is static; elsewhere it raises ``error(...)``, a ``ConversionError``
at the user's line that made the change (found by tracing once more under a
profile hook, only then) or at the region's line.
"""

from __future__ import annotations

import collections
import itertools
import random
import sys
import types
import weakref
from dataclasses import dataclass

import numpy as np

from autograph.call_policy import is_library_file
from autograph.errors import ConversionError
from autograph.runtime.objects import is_plain_object, is_users_class
from autograph.runtime.trace_context import current_trace
from autograph.runtime.tracing import Location, caller_location, frame_location

_CONTAINERS = (list, dict, set, collections.deque, bytearray)   # and their subclasses
_SMALL = 256         # items whose identities a signature records
_COPY_LIMIT = 100_000   # larger containers are watched, but cannot be restored
_MAX_FUNCTIONS = 64
_ARRAY_BYTES = 1 << 16   # NumPy arrays watched by their bytes (larger: not watched)
_GENERATORS = (types.GeneratorType,)
# Python's and NumPy's random number generators: a draw in a staged body happens once,
# while tracing, where Python draws once per iteration (or only on the branch taken).
_RANDOM = (random.Random, np.random.RandomState, np.random.Generator)


@dataclass
class Change:
    """A watched object the body changed: ``name`` (how the body reaches it) and
    ``what`` it is (``"list 'stack'"``)."""

    name: str
    obj: object
    kind: str
    by_attributes: bool = False   # a plain object, watched by its attributes

    def __str__(self):
        return f"{self.kind} '{self.name}'"


class Watch:
    """The signatures of the objects a region's body can reach, taken on creation."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = entries  # (name, obj, signature, saved copy or None)

    def changed(self) -> list:
        """The watched objects whose signature differs from the one taken."""
        return [Change(name, obj, _kind(obj), type(copy) is _ObjectState)
                for name, obj, sig, copy in self.entries
                if (copy.moved(obj) if type(copy) is _CellState
                    else (_ObjectState.signature(obj) if type(copy) is _ObjectState
                          else _signature(obj)) != sig)]

    def holds_generator(self) -> bool:
        """Whether a watched object is a generator or another iterator (``zip``,
        ``itertools.cycle``...): a step of it cannot be undone (nor, for some, seen:
        a ``cycle``'s position after its first pass is not in its ``__reduce__``),
        so a body that takes one (``next(g)``) cannot be probed or traced and then
        run again."""
        return any(_is_iterator(obj) for _, obj, _, _ in self.entries)

    def restore(self, changes) -> bool:
        """Put the ``changes``' objects back as they were; whether all could be."""
        saved = {id(obj): copy for _, obj, _, copy in self.entries}
        ok = True
        for change in changes:
            copy = saved.get(id(change.obj))
            if not _put_back(change.obj, copy):
                ok = False
        return ok


def watch(fns, carried=()) -> Watch:
    """Start watching what the functions ``fns`` (a region's body, test...) can
    reach, except the objects in ``carried`` (the region's state)."""
    excluded = _ids_in(carried)
    entries = []
    seen = set(excluded)
    pending = [fn for fn in fns if fn is not None]
    held = _Held(seen)
    reached = []          # the objects the body reaches, for their classes
    own_cells = set()     # the region's own cells (its functions' closures, what it carries)
    for fn in pending:   # plain objects the region carries as their attributes
        for label, obj in getattr(fn, "viewed", tuple)():
            entries.extend(held.uncarried(label, obj))
            reached.append(obj)
        own_cells.update(id(cell) for cell in getattr(fn, "carried_cells", tuple)())
        own_cells.update(id(cell) for cell in getattr(
            getattr(fn, "__wrapped__", fn), "__closure__", None) or ())
    # The region's own code: its blocks, and every helper generated in the same
    # user's definition (anchored at its first line, ``guarded_lines``), whose cells
    # are that function's variables: the region carries what it assigns.
    anchors = {_anchor(getattr(fn, "__wrapped__", fn)) for fn in pending}
    visited = set()
    by_class = False      # whether a body names `type` or `__class__`
    while pending and len(visited) < _MAX_FUNCTIONS:
        fn = pending.pop()
        fn = getattr(fn, "__wrapped__", fn)
        if type(fn) is types.MethodType:
            fn = fn.__func__
        if type(fn) is not types.FunctionType or id(fn) in visited:
            continue
        visited.add(id(fn))
        by_class = by_class or not _CLASS_NAMES.isdisjoint(_global_names(fn.__code__))
        if _anchor(fn) not in anchors:
            entries.extend(_foreign_cells(fn, own_cells, seen))
        for name, value in _reachable(fn):
            reached.append(value)
            if type(value) is types.ModuleType:   # `random.random()`: the module's generator
                value = _module_generator(value, fn)
                if value is None:
                    continue
            if id(value) in seen:
                continue
            if type(value) is types.FunctionType or type(value) is types.MethodType:
                target = getattr(value, "__func__", value)
                # A block wrapped to carry cells (carried_state.py) is the user's block.
                target = getattr(target, "__wrapped__", target)
                if type(target) is types.FunctionType and not is_library_file(
                        target.__code__.co_filename):
                    pending.append(target)
                continue
            if isinstance(value, _CONTAINERS) or _is_iterator(
                    value) or _is_watched_array(value) or isinstance(value, _RANDOM):
                seen.add(id(value))
                entries.append((name, value, _signature(value), _copy(value)))
                if isinstance(value, (list, dict, collections.deque)):
                    entries.extend(held.items(name, value, _HELD_DEPTH))
            elif isinstance(value, type):
                if is_users_class(value):   # `M.count += 1`: its class attributes
                    seen.add(id(value))
                    entries.append((name, value, _ObjectState.signature(value),
                                    _ObjectState(value)))
            elif type(value) not in _NOT_OBJECTS or type(value) is tuple:
                # an object the region does not carry, or a tuple of such objects
                entries.extend(held.held(name, value, _HELD_DEPTH))
    if by_class:
        entries.extend(_classes(reached, entries, seen))
    return Watch(entries)


def _anchor(fn):
    code = getattr(fn, "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno)


def _foreign_cells(fn, own_cells, seen) -> list:
    """Entries for the closure cells of ``fn``, a function of the user's that the
    region's code may call, other than the region's own: a ``nonlocal`` the helper
    assigns (``count += 1`` in a counter made by another function) would be
    assigned once while tracing, not once per iteration or only where the branch
    is taken. Watched by the identity of what they hold, restored by putting it back."""
    found = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        if id(cell) in own_cells or id(cell) in seen:
            continue
        seen.add(id(cell))
        state = _CellState(cell)
        found.append((f"{fn.__name__}.{name}", cell, None, state))
    return found


class _CellState:
    """What a closure cell held when the watch began (``_EMPTY`` where unbound)."""

    __slots__ = ("value",)

    def __init__(self, cell):
        self.value = _cell_value(cell)

    def moved(self, cell) -> bool:
        return _cell_value(cell) is not self.value

    def put_back(self, cell):
        if self.value is _EMPTY:
            del cell.cell_contents
        else:
            cell.cell_contents = self.value


_EMPTY = object()


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


# `type(self).calls += 1`, `self.__class__.n += 1`: a class reached through an object
# (`type` is `ag__.type_` in converted code).
_CLASS_NAMES = frozenset({"type", "type_", "__class__"})


def _classes(reached, entries, seen) -> list:
    """Entries for the user's classes of the objects the body reaches (``reached``,
    those it carries included) and of the objects among ``entries``, by their class
    attributes, where a body names ``type`` or ``__class__``."""
    found = []
    for obj in [*reached, *(obj for _, obj, _, _ in entries)]:
        kind = type(obj)
        if id(kind) in seen or kind in _NOT_OBJECTS or isinstance(obj, type) \
                or not is_users_class(kind) or not is_plain_object(obj):
            continue
        seen.add(id(kind))
        found.append((kind.__qualname__, kind, _ObjectState.signature(kind),
                      _ObjectState(kind)))
    return found


# How deep ``watch`` follows what watched containers and objects hold: ``ps[0]``, its
# ``ps[0].stats``, and what that holds (``for p in ps: p.stats.n += 1``); and how many
# such entries one region's watch may hold.
_HELD_DEPTH = 3
_HELD_LIMIT = 1024


class _Held:
    """The walk through what watched containers and objects hold (``seen``: the ids
    already watched or carried), ``_HELD_LIMIT`` entries at most."""

    __slots__ = ("seen", "left", "viewed", "kinds")

    def __init__(self, seen):
        self.seen, self.left = seen, _HELD_LIMIT
        self.viewed = set()   # plain objects the region carries as their attributes
        self.kinds = {}       # type -> _NOT_PLAIN, _LIBRARY or _USERS (one per walk)

    def items(self, name, container, depth) -> list:
        """Entries for the plain objects (a dataclass instance, say) and containers a
        watched list, dict or tuple holds, and for what those hold in turn, ``depth``
        levels deep: a body that sets their attributes (``for p in ps: p.x = ...``,
        ``p.stats.n += 1``) or grows a list one holds (``p.hist.append(v)``)
        changes state the region does not carry, as an ``append`` would."""
        items = container.items() if isinstance(container, dict) else enumerate(container)
        entries = []
        for key, item in itertools.islice(items, _SMALL):
            entries.extend(self.held(f"{name}[{key!r}]", item, depth, item_of=True))
        return entries

    def attributes(self, name, obj, depth, carried=()) -> list:
        """``held`` of each of ``obj``'s attributes but those ``carried``."""
        entries = []
        for attribute, value in itertools.islice(vars(obj).items(), _SMALL):
            if attribute not in carried:
                entries.extend(self.held(f"{name}.{attribute}", value, depth))
        return entries

    def uncarried(self, name, obj) -> list:
        """Entries for the containers and plain objects among ``obj``'s attributes
        that a region carrying ``obj`` as its array attributes
        (``objects.attributes``) does not carry: ``p.stats`` of ``p.stats.n += 1``."""
        from autograph.runtime.objects import attributes

        self.viewed.add(id(obj))
        return self.attributes(name, obj, _HELD_DEPTH, attributes(obj))

    def held(self, name, item, depth, *, item_of=False) -> list:
        """Entries for ``item`` (reached as ``name``), where it is a plain object or
        a container, and for what it holds, ``depth - 1`` levels further. An object
        of a library's class (a logger filling its cache) is the library's: watched
        by its attributes only as an item of a watched container (``item_of``), as a
        ``SimpleNamespace`` may be, and not followed further."""
        kind = type(item)
        if isinstance(item, tuple) and id(item) not in self.seen and depth > 0:
            self.seen.add(id(item))   # no entry (it cannot change), but what it holds
            return self.items(name, item, depth - 1)
        if kind in _NOT_OBJECTS or id(item) in self.seen or depth <= 0 or self.left <= 0:
            return []
        if isinstance(item, _CONTAINERS):
            self.seen.add(id(item))
            self.left -= 1
            entries = [(name, item, _signature(item), _copy(item))]
            if isinstance(item, (list, dict, collections.deque)):
                entries.extend(self.items(name, item, depth - 1))
            return entries
        found = self.kinds.get(kind)
        if found is None:
            found = self.kinds[kind] = _object_kind(item)
        if found is _NOT_PLAIN or found is _LIBRARY and not item_of \
                or id(item) in self.viewed:
            return []
        self.seen.add(id(item))
        self.left -= 1
        entry = (name, item, _ObjectState.signature(item), _ObjectState(item))
        return [entry, *self.attributes(name, item, depth - 1)] if found is _USERS \
            else [entry]


_NOT_PLAIN, _LIBRARY, _USERS = "not plain", "library", "users"


def _object_kind(obj) -> str:
    """What ``obj``'s type is to the watch (the same for every instance): not a plain
    object (``objects.is_plain_object``: a pytree, an array, a function...), one of a
    class a library defines (``is_library_file``), or one of the user's (a module
    with no file, a program ``exec``'d, counts as the user's; so does a
    ``types.SimpleNamespace``, which holds only what the user put in it)."""
    if not hasattr(obj, "__dict__") or not is_plain_object(obj):
        return _NOT_PLAIN
    return _USERS if is_users_class(type(obj)) else _LIBRARY


_NOT_OBJECTS = frozenset({int, float, bool, complex, str, bytes, type(None), tuple})


class _ObjectState:
    """A plain object's attributes (or a class's), as they were when its region
    started."""

    __slots__ = ("attributes",)

    def __init__(self, obj):
        self.attributes = dict(vars(obj))

    @staticmethod
    def signature(obj):
        attributes = vars(obj)
        return ("object", tuple(attributes), tuple(map(id, attributes.values())))

    def put_back(self, obj):
        attributes = vars(obj)
        if isinstance(obj, type):   # (a class's namespace changes through setattr only)
            for name in [name for name in attributes if name not in self.attributes]:
                delattr(obj, name)
            for name, value in self.attributes.items():
                if attributes.get(name, _ABSENT) is not value:
                    setattr(obj, name, value)
            return
        attributes.clear()
        attributes.update(self.attributes)


_ABSENT = object()


def _reachable(fn):
    """``(name, value)`` of what ``fn`` reads from outside: its closure cells, the
    globals its code (and the code nested in it) names, its defaults."""
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
        try:
            yield name, cell.cell_contents
        except ValueError:   # an unbound cell
            continue
    module = fn.__globals__
    for name in _global_names(code):
        if name in module:
            yield name, module[name]
    for value in fn.__defaults__ or ():
        yield f"{fn.__name__}'s default", value


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if type(const) is types.CodeType:
            names |= _global_names(const)
    return names


def _is_iterator(value) -> bool:
    if isinstance(value, _GENERATORS):
        return True
    kind = type(value)
    return (kind.__module__ in ("builtins", "itertools") and hasattr(kind, "__next__")
            and hasattr(kind, "__iter__"))


def _ids_in(tree) -> set:
    """The ids of the containers in ``tree`` (nested lists, tuples, dicts)."""
    ids = set()
    pending = [tree]
    while pending and len(ids) < 10_000:
        node = pending.pop()
        if id(node) in ids:
            continue
        ids.add(id(node))
        if isinstance(node, (list, tuple, set, collections.deque)):
            pending.extend(node)
        elif isinstance(node, dict):
            pending.extend(node.values())
    return ids


def _module_generator(module, fn):
    """The hidden generator behind ``random.random()`` or ``np.random.rand()`` where
    ``module`` is ``random``, ``numpy`` or ``numpy.random`` and ``fn``'s code names
    ``random`` (as a module or an attribute), else None."""
    name = module.__name__
    if name == "random":
        return getattr(module, "_inst", None)
    if name in ("numpy", "numpy.random") and "random" in _global_names(fn.__code__):
        return np.random.mtrand._rand
    return None


def _is_watched_array(value) -> bool:
    return (type(value) is np.ndarray and value.flags.writeable
            and value.nbytes <= _ARRAY_BYTES)


def _random_state(value):
    """The state of a random number generator, comparable with ``!=``."""
    if isinstance(value, random.Random):
        return value.getstate()
    if isinstance(value, np.random.RandomState):
        kind, keys, position, has_gauss, gauss = value.get_state()
        return kind, keys.tobytes(), position, has_gauss, gauss
    return value.bit_generator.state


def _signature(value):
    if type(value) is np.ndarray:
        return value.tobytes()
    if isinstance(value, _RANDOM):
        return _random_state(value)
    if isinstance(value, dict):
        return (len(value), tuple(map(id, value.values())) if len(value) <= _SMALL else None,
                tuple(map(id, value)) if len(value) <= _SMALL else None)
    if isinstance(value, bytearray):
        return bytes(value) if len(value) <= _SMALL else len(value)
    if isinstance(value, _CONTAINERS):
        return (len(value), tuple(map(id, value)) if len(value) <= _SMALL else None)
    if isinstance(value, _GENERATORS):
        frame = value.gi_frame
        if frame is None:
            return None
        return (frame.f_lasti, tuple(map(id, frame.f_locals.values())))
    return _iterator_signature(value, 3)


def _iterator_signature(value, depth):
    """An iterator's position as its ``__reduce__`` tells it, the iterators it reads
    from (a ``zip``'s, a ``chain``'s) signed in turn; an ``itertools.cycle``, whose
    position after its first pass nothing tells, signs as changed every time."""
    if isinstance(value, itertools.cycle):
        return object()
    try:
        reduced = value.__reduce__()
    except Exception:  # noqa: BLE001 - an iterator that says nothing of its position
        return id(value)
    return tuple(x if type(x) is int else
                 _iterator_signature(x, depth - 1) if depth and _is_iterator(x) else id(x)
                 for x in _flat(reduced[1:]))


def _flat(items):
    for item in items:
        if type(item) is tuple:
            yield from _flat(item)
        else:
            yield item


def _copy(value):
    if type(value) is np.ndarray:
        return value.copy()
    if isinstance(value, np.random.RandomState):
        return value.get_state()
    if isinstance(value, _RANDOM):
        return _random_state(value)
    if isinstance(value, _CONTAINERS):
        if len(value) > _COPY_LIMIT:
            return None
        # The items, copied and put back with the base type's own methods: a subclass
        # (Counter, defaultdict, the user's) may override them.
        return next(base for base in _CONTAINERS if isinstance(value, base))(value)
    if not isinstance(value, _GENERATORS):
        try:
            return value.__reduce__()
        except Exception:  # noqa: BLE001
            return None
    return None


def _put_back(obj, copy) -> bool:
    if copy is None:
        return False
    if type(copy) in (_ObjectState, _CellState):
        copy.put_back(obj)
    elif type(obj) is np.ndarray:
        obj[...] = copy
    elif isinstance(obj, random.Random):
        obj.setstate(copy)
    elif isinstance(obj, np.random.RandomState):
        obj.set_state(copy)
    elif isinstance(obj, np.random.Generator):
        obj.bit_generator.state = copy
    elif isinstance(obj, dict):
        dict.clear(obj)
        dict.update(obj, copy)
    elif isinstance(obj, set):
        set.clear(obj)
        set.update(obj, copy)
    elif isinstance(obj, collections.deque):
        collections.deque.clear(obj)
        collections.deque.extend(obj, copy)
    elif isinstance(obj, list):
        list.__setitem__(obj, slice(None), copy)
    elif isinstance(obj, bytearray):
        bytearray.__setitem__(obj, slice(None), copy)
    else:   # a builtin iterator: its position, where it can be set
        if len(copy) < 3 or not hasattr(obj, "__setstate__"):
            return False
        try:
            obj.__setstate__(copy[2])
        except Exception:  # noqa: BLE001
            return False
    return True


def _kind(obj) -> str:
    if type(obj) is types.CellType:
        return "closure variable"
    if isinstance(obj, type):
        return "class"
    if type(obj) is np.ndarray:
        return "NumPy array"
    if isinstance(obj, _RANDOM):
        return "random number generator"
    if isinstance(obj, _GENERATORS):
        return "generator"
    if isinstance(obj, _CONTAINERS):
        return type(obj).__name__
    if _is_iterator(obj):
        return "iterator"
    return f"{type(obj).__name__} object"


def describe(changes) -> str:
    """The changes, for a log line or a message: "list 'out' and iterator 'it'"."""
    return " and ".join(str(c) for c in changes[:3]) + (
        f" (and {len(changes) - 3} more)" if len(changes) > 3 else "")


def where_changed(retrace, changes):
    """The user's line (``Location``) where ``retrace()`` (one more abstract run of
    the body: a fresh function, which no JAX cache answers) first changes one of
    ``changes``' objects through a builtin call (``append``, ``pop``, ``next``...),
    resumes a generator among them, or sets an attribute of a plain object among
    them (``p.x = ...``: found by a line trace of the user's frames, the line after
    which the object's attributes differ), or None. Only asked on the way to an
    error; the objects are as they were before the region when it is asked."""

    targets = {id(c.obj) for c in changes}
    found = []
    old_trace = sys.gettrace()
    attribute_trace = _attribute_trace(changes, found)

    def profile(frame, event, arg):
        if found:
            return
        if event == "c_call" and id(getattr(arg, "__self__", None)) in targets:
            at = frame
        elif event == "call" and any(c.obj.gi_code is frame.f_code for c in changes
                                     if isinstance(c.obj, _GENERATORS)):
            at = frame.f_back
        else:
            return
        if at is not None:   # where it is now: the frame runs on
            found.append(frame_location(at))

    old = sys.getprofile()
    sys.setprofile(profile)
    if attribute_trace is not None:
        sys.settrace(attribute_trace)
    try:
        retrace()
    except Exception:  # noqa: BLE001 - the first trace passed; this one only looks
        pass
    finally:
        sys.setprofile(old)
        if attribute_trace is not None:
            sys.settrace(old_trace)
    return found[0] if found else None


def _attribute_trace(changes, found):
    """A ``sys.settrace`` function that appends to ``found`` the user's line after
    which a plain object among ``changes`` first has other attributes than now (set
    there, or in a library call made there: ``setattr``, the runtime's operators),
    or None where no change is one of a plain object."""
    objects = [(c.obj, _ObjectState.signature(c.obj)) for c in changes if c.by_attributes]
    if not objects:
        return None
    last = {}

    def moved() -> bool:
        return any(_ObjectState.signature(obj) != sig for obj, sig in objects)

    def local(frame, event, arg):
        if found:
            return None
        if event in ("line", "return") and moved():
            line = last.get(frame) if event == "line" else frame.f_lineno
            if line is not None:
                found.append(Location(frame.f_code.co_filename, line))
            return None
        last[frame] = frame.f_lineno
        return local

    def call(frame, event, arg):
        if found or is_library_file(frame.f_code.co_filename):
            return None
        return local

    return call


def error(changes, construct: str, where, at=None) -> ConversionError:
    """The error for a staged ``construct`` at ``where`` whose body changed the
    Python objects ``changes`` (at the user's line ``at`` where known)."""
    place = at or where
    loop = construct.endswith("loop")
    operator = construct in ("and", "or")
    name = f"`{construct}`" if construct == "if" or operator else construct
    article = "an" if construct == "if" or operator else "a"
    line = "" if at is None or at == where else f" (the {name} is at line {where.lineno})"
    if loop:
        why = "its condition or iterable is traced"
        how = ("runs its body (and its condition) once while tracing, not once per "
               "iteration, so the change would happen once, with the traced values")
        fix = ("Make it state the loop carries (`x = stack.pop()` or `out.append(v)` as "
               "a statement of the loop itself), use arrays (jnp.where, .at[i].set)")
    elif operator:
        why = "its left operand is traced"
        how = ("computes its right operand once while tracing, whatever the left one "
               "turns out to be, so the change would happen for every input")
        fix = ("Call the function that makes the change in a statement of its own, "
               "compute the operand without changing Python state")
    else:
        why = "its condition is traced"
        how = ("traces both branches once, whatever the condition, so the change would "
               "happen for every input")
        fix = "Return the new values from the branches instead, use arrays (jnp.where)"
    if loop and any(c.by_attributes for c in changes):
        fix = ("Keep the attribute in a variable the loop carries (`x = p.x` before the "
               "loop, `x = x - g` in it, `p.x = x` after it), use arrays")
    if any(type(c.obj) is types.CellType for c in changes):
        fix = ("Keep the value in an attribute of an object the function holds "
               "(`self.count += 1`, which staging carries) or return it from the "
               "function that changes it")
    if any(isinstance(c.obj, _RANDOM) for c in changes):
        fix = ("For random numbers in staged code, draw them with jax.random from a key "
               "the code passes along")
    return ConversionError(
        f"this changes the Python {describe(changes)} inside {article} {name} that is staged "
        f"because {why}{line}, which does not carry it: a staged {name} {how}. {fix}, or "
        f"move the change out of the staged {name}.", place.filename, place.lineno)


def settle(effects: Watch, can_unroll: bool, construct: str, where, retrace):
    """After a region was traced (or failed to be): None if its body changed none
    of the objects ``effects`` watches; else they are put back, and the reason to
    run it unrolled is returned where ``can_unroll`` (and all could be put back),
    or the ``ConversionError`` at the line of the change is raised
    (``retrace()`` traces the body once more to find that line). A staged ``if``
    that grows a list by Python values is no exception: both branches are traced,
    so the list would grow whatever the condition (issue 26.6)."""
    changes = effects.changed()
    if not changes:
        return None
    if effects.restore(changes) and can_unroll:
        return (f"its body changes the Python {describe(changes)}, which the loop does "
                "not carry (a staged body runs once while tracing)")
    at = where_changed(retrace, changes)
    effects.restore(changes)
    raise error(changes, construct, where, at)


def closure_containers(fns) -> dict:
    """The lists and dicts the functions ``fns`` (a staged ``if``'s branches, a conditional
    expression's operands) read from their closure cells, by id: a branch that gives
    one of them gives, in Python, that existing object itself."""
    ids = {}
    for fn in fns:
        fn = getattr(fn, "__wrapped__", fn)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if type(value) in (list, dict):
                ids[id(value)] = value
    return ids


# id(an object) -> (the object, a weak reference to the trace it was noted in, the
# message): a list or dict whose changes in place a staged region's result cannot
# follow (``either_object``, ``as_copies``). Its changes are refused while that trace
# lives (afterwards nothing staged can tell); the entry goes with the trace.
REPLACED: dict = {}


def _refuse_changes(obj, reason):
    """Refuse changes in place to ``obj`` made through the runtime's operators (an
    item write, ``append``, ``pop``, a method that changes it) while the current
    trace lives: a ``ConversionError`` with ``reason`` at the user's line."""
    trace = current_trace()
    if trace is None:   # pragma: no cover - a JAX without trace_ctx
        return
    key = id(obj)

    def forget(ref, key=key):
        if REPLACED.get(key, (None, None))[1] is ref:
            del REPLACED[key]

    REPLACED[key] = (obj, weakref.ref(trace, forget), reason)


def either_object(value, original, name, where, construct):
    """The value of a variable that, after a staged ``construct`` at ``where``, is in
    Python either the list or dict ``original`` it held before or a new one, depending
    on the traced condition (an ``if`` that rebinds it in one branch only, a loop that
    rebinds it but may run zero times), while something else may hold ``original``
    too. A staged region gives one object for both, so a change in place to either
    is one Python makes to ``original`` on one path and not on the other: while the
    trace lives, changes in place to both ``value`` and ``original`` are refused
    (``refuse_if_replaced``). ``value`` stays a plain list or dict (the same pytree)."""
    kind = type(original).__name__
    if type(value) is not type(original):
        return value
    statement = construct.split()[0]
    fix = (f"{name}[:] = ..." if kind == "list" else f"{name}.clear(); {name}.update(...)")
    reason = (
        f"this changes a {kind} that '{name}' holds before or after the staged "
        f"{construct} at line {where.lineno}. Afterwards Python's '{name}' is the {kind} "
        f"it held before or a new one, depending on the traced condition, and another "
        f"holder of the old {kind} (another name, the caller, a container) sees this "
        f"change only in the first case; a staged {statement} gives one {kind} for both, "
        f"so the change cannot be made as Python makes it. Give '{name}' a new {kind} on "
        f"every path ({name} = {kind}({name}) before the {statement}), or change it in "
        f"place on every path ({fix}).")
    _refuse_changes(original, reason)
    _refuse_changes(value, reason)
    return value


def refuse_if_replaced(target):
    """Raise at the user's line if changes in place to ``target`` are refused
    (``REPLACED``)."""
    entry = REPLACED.get(id(target))
    if entry is not None and entry[0] is target and entry[1]() is not None:
        at = caller_location()
        raise ConversionError(entry[2], at.filename, at.lineno)


def as_copies(out, picked, where) -> tuple:
    """``out``, where a branch gave an existing list or dict (``picked``: position ->
    the existing objects a branch gave there): a staged conditional chooses values,
    not objects, so Python's result is one of those objects on one path and the
    staged one a copy; while the trace lives, changes in place to the copy and to
    those objects are refused (``refuse_if_replaced``)."""
    for k, originals in picked.items():
        kind = type(out[k]).__name__
        if kind not in ("list", "dict"):
            continue
        reason = (
            f"this changes a {kind} that the staged conditional at line {where.lineno} "
            f"gives (or may give) on one path: there Python's result is the existing "
            f"{kind} itself, so the result and that {kind} both see the change; a staged "
            "conditional (its condition is traced) chooses values, not objects, so its "
            f"result is a copy, and the change would reach only one of them. Change the "
            f"{kind}s inside the branches of an `if`, or decide which one with a Python "
            "condition.")
        _refuse_changes(out[k], reason)
        for original in originals:
            _refuse_changes(original, reason)
    return tuple(out)
