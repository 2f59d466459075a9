"""Lists in staged code: a Python list, or a preallocated buffer plus a traced length.

The list converter turns ``z.append(x)`` into ``z = ag__.list_append(z, x)`` and
``x = z.pop()`` into ``z, x = ag__.list_pop(z)``; ``len(z)`` is ``ag__.len_(z)``
(the builtins converter's), which asks ``list_len`` here. On a Python list these
do exactly what the original does (the same list object, mutated in place). A
list stays a Python list unless a staged loop (``lax`` loop over a traced
condition or iterable) grows, shrinks or writes it: when the loop starts,
``stage_lists`` turns such a list into a ``TensorList``, a pytree holding

- ``buffer``: an array of shape ``(capacity, *element_shape)``, and
- ``length``: the number of elements in use (a traced int32 scalar, or a Python
  int where it is known while tracing).

The capacity is the list's length before the loop plus, per iteration, the
number of appends the loop body makes (found by tracing the body once
abstractly), times the trip count: ``len(range(...))`` or the scanned array's
length for a ``for`` loop (the stacked per-iteration outputs, as ``lax.scan``
builds them), ``set_loop_options(maximum_iterations=N)`` for a ``while`` loop
or a ``for`` over a traced range. Appends in both branches of a staged ``if``
are both counted, so such a buffer may be larger than the list ever gets.

``autograph.stack(lst)`` returns the whole buffer: entries at and after
``len(lst)`` are padding, filled with zeros. A list appended once per iteration
of a ``for`` loop fills its buffer exactly.

Lists come out as lists: after a loop of exact trip count (a Python range, an
array's leading axis) whose appends and pops change its length by the same amount
on every path (unconditional, or as many in both branches of a staged ``if``), the
length is known, and the list is the Python list Python would have, its elements
the rows of the buffer (``stack`` of it, untouched, is the buffer again). Only a
list whose length depends on traced values (appends under one branch of a staged
``if``, in a ``while``)
stays a ``TensorList``; ``jnp.stack``/``jnp.array`` of it, or returning it from a
converted function under a trace, raises, naming ``autograph.stack``. A list
grown in one branch of a staged ``if`` is made a buffer in both.

A ``for`` over a Python ``range`` whose body appends traced values to a Python
list (under ``jit``) is staged from its first iteration (``grows_traced``), so
``for i in range(n): z.append(f(x, i))`` is one ``scan`` writing a buffer of
``n`` rows, as ``lax.scan`` over ``f`` would be. A list the loop leaves the same
length stays a Python list (a pytree of arrays, carried as it is).
"""

from __future__ import annotations

import operator
import sys
import weakref
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util

from autograph.errors import ConversionError
from autograph.runtime import paths, side_effects
from autograph.runtime.abstract import abstract
from autograph.runtime.trace_context import FRAMES, trace_active, trace_flat, weak_cast
from autograph.runtime.tracing import FlatTree, caller_location, frame_location, is_tracer, types_of


@dataclass(eq=False)
class _Probe:
    """What one abstract trace of a loop body did to one list (shared, by identity,
    by every copy of the list in that trace, so ``lax.cond`` branches agree)."""

    name: str
    where: object
    element: jax.ShapeDtypeStruct | None
    appends: int = 0
    pops: int = 0
    used: bool = False  # popped, written, or read at a traced index
    appended_at: object = None  # the user's line of the first append
    weak: bool | None = None  # whether the values appended are weakly typed
    history: list = field(default_factory=list)
    # Where the loop's body runs unconditionally (the depth of ``paths``' stack); an
    # append or pop deeper (under a staged `if`, in a nested staged `while`...) may
    # make the list's length after the loop depend on traced values: ``changes``
    # holds each such change with its path from there (``path_length_change``).
    depth: int = 0
    changes: list = field(default_factory=list)

    def changes_length(self, pop=False):
        if pop:
            self.pops += 1
        self.changes.append((paths.path_from(self.depth), -1 if pop else 1))

    def length_change(self):
        """How much one iteration changes the list's length, the same on every path
        through its staged ``if``s (an append in both branches counts once); None
        where it differs by path, or a change sits in a nested staged loop."""
        return path_length_change(self.changes)


def path_length_change(changes):
    """The net change of ``changes`` (``(path, delta)`` pairs, each path a tuple of
    ``paths`` conditions) along every path, or None where paths differ. Each branch
    of a staged ``if`` (``paths.BranchTaken``) is summed on its own, and the two
    must agree: ``if c: out.append(a) else: out.append(b)`` changes the length by one
    whatever ``c``. A change under any other condition (a nested staged loop's
    body, the right side of ``and``) gives None.

    Before: any append under a staged ``if`` made the length after the loop depend
    on traced values. After: only one whose count differs between the branches."""
    total, branches = 0, {}
    for path, delta in changes:
        if not path:
            total += delta
            continue
        head = path[0]
        if not isinstance(head, paths.BranchTaken):
            return None
        sides = branches.setdefault(head.region, ([], []))
        sides[head.side].append((path[1:], delta))
    for if_false, if_true in branches.values():
        taken, skipped = path_length_change(if_true), path_length_change(if_false)
        if taken is None or taken != skipped:
            return None
        total += taken
    return total


@tree_util.register_pytree_node_class
class TensorList:
    """A list staged as ``buffer[:length]``; see the module docstring.

    Immutable: the list operators return a new ``TensorList``. ``lst[i]`` reads
    (``i`` static or traced, negative counts from ``length``).
    """

    __slots__ = ("buffer", "length", "_probe", "root", "weak")

    def __init__(self, buffer, length, probe=None, root=None, weak=(False,)):
        self.buffer = buffer
        self.length = length
        self._probe = probe
        # The list this one is a change of (append, pop, item write): in Python the
        # same object, changed in place (trackers.ContainerParameter asks).
        self.root = root
        # Which elements Python holds weakly typed (a Python number, a weak tracer):
        # weak[j] for position j < len(weak) - 1, weak[-1] for every later one. The
        # buffer is strongly typed; a read gives the element its weak type back.
        # None for a list declared with set_element_type: what is appended is cast
        # to the declared dtype, strongly typed, as the declaration says.
        self.weak = weak

    def _changed(self, buffer, length, probe=None, weak=None):
        return TensorList(buffer, length, probe, self if self.root is None else self.root,
                          self.weak if weak is None else weak)

    def tree_flatten(self):
        static = isinstance(self.length, int)
        children = [] if self.buffer is None else [self.buffer]
        if not static:
            children.append(self.length)
        aux = (self.buffer is None, self.length if static else None, self._probe,
               self.weak)
        return children, aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        no_buffer, static_length, probe, weak = aux
        children = list(children)
        buffer = None if no_buffer else children.pop(0)
        length = static_length if static_length is not None else children.pop(0)
        return cls(buffer, length, probe, weak=weak)

    @property
    def capacity(self) -> int:
        return self.buffer.shape[0]

    def __repr__(self):
        if self.buffer is None:
            return f"TensorList(<probe>, length={self.length})"
        return f"TensorList(buffer={self.buffer!r}, length={self.length!r})"

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise TypeError("a staged list cannot be sliced; use autograph.stack(lst)[a:b]")
        if is_tracer(index) and self._probe is not None:
            self._probe.used = True
        index = self._normalize(index)
        return _weakened(_row(self._buffer_for_read(), index), self._weak_at(index))

    def __len__(self):
        raise TypeError(_DATA_DEPENDENT + " It has no Python length: take its elements as "
                        "one array with autograph.stack(lst) (padded past its length), "
                        "and its length as a traced int with len(lst) in converted code.")

    def __iter__(self):
        raise TypeError(_DATA_DEPENDENT + " It cannot be iterated in Python: take its "
                        "elements as one array with autograph.stack(lst) (padded past its "
                        "length) and loop over that.")

    def __jax_array__(self, *_, **__):
        raise TypeError(_DATA_DEPENDENT + " Make it one array with autograph.stack(lst) "
                        "(padded past its length; len(lst) gives the length as a traced "
                        "int), not jnp.array or jnp.stack.")

    __array__ = __jax_array__

    def append(self, _):
        raise TypeError("lst.append(x) on a staged list must be its own statement in "
                        "converted code (it becomes lst = ag__.list_append(lst, x))")

    def pop(self, *_):
        raise TypeError("lst.pop() on a staged list must be a statement `x = lst.pop()` "
                        "or `lst.pop()` in converted code")

    # -- helpers ---------------------------------------------------------------------

    def _weak_at(self, index) -> bool:
        """Whether Python's element at ``index`` (``_normalize``'s) is weakly typed.
        A traced position in a list that holds both kinds cannot say: an
        ``ElementTypeError`` (in a probe, where the later elements' kind is not
        known yet, the strong kind)."""
        weak = self.weak
        if weak is None:
            return False
        if isinstance(index, int):
            return weak[min(index, len(weak) - 1)]
        if len(set(weak)) == 1:
            return weak[0]
        if self._probe is not None:
            return False
        raise _mixed_kinds()

    def _weak_after_write(self, position, flag, append=False):
        """``weak`` once the element at ``position`` (a static int, or None for a
        traced one) is a value of kind ``flag``; an ``ElementTypeError`` where a
        traced position would make the kinds differ by position. An append at a
        traced length writes past the positions ``weak`` names one by one (a pop
        at a traced length of a list of both kinds is refused), so its kind need
        only be the later elements' (``weak[-1]``)."""
        weak = self.weak
        if weak is None:
            return None
        if position is None:
            if self._probe is not None and self._probe.weak is None and self.buffer is None:
                return weak
            if any(w != flag for w in (weak[-1:] if append else weak)):
                raise _mixed_kinds()
            return weak
        flags = list(weak[:-1]) + [weak[-1]] * (position + 1 - (len(weak) - 1))
        flags[position] = flag
        return _collapsed((*flags, weak[-1]))

    def _normalize(self, index):
        if not is_tracer(index):
            index = operator.index(index)
            if isinstance(self.length, int):
                if not -self.length <= index < self.length:
                    raise IndexError("list index out of range")
                return index % self.length if index < 0 else index
            if index >= 0:
                return index
            return lax.add(self.length, index)  # one equation: no select on a known sign
        return jnp.where(index < 0, index + self.length, index)

    def _buffer_for_read(self):
        if self.buffer is not None:
            return self.buffer
        probe = self._probe
        if probe.element is None:
            raise ConversionError(
                f"'{probe.name}' is an empty list read inside the staged loop before "
                "anything is appended to it, so its element type is unknown. Declare it "
                f"before the loop: autograph.set_element_type({probe.name}, dtype, shape).",
                probe.where.filename, probe.where.lineno)
        return jnp.zeros((1, *probe.element.shape), probe.element.dtype)

    def _element(self, value):
        """``value`` as an element of this list's dtype, checking its shape."""
        if not _traceable(value):
            raise TypeError(
                f"a staged list holds arrays, not {type(value).__name__} values: "
                "appending one would change what the list holds")
        if self.buffer is None:
            probe = self._probe
            if probe.element is None:
                value = jnp.asarray(value)
                probe.element = jax.ShapeDtypeStruct(value.shape, value.dtype)
            else:
                value = _as_element(value, probe.element.dtype, self.weak is None)
            shape = probe.element.shape
        else:
            value = _as_element(value, self.buffer.dtype, self.weak is None)
            shape = self.buffer.shape[1:]
        if value.shape != shape:
            raise TypeError(
                f"a staged list holds elements of shape {shape}; got one of shape "
                f"{value.shape}. Every element of a list grown in a staged loop must "
                "have the same shape and dtype.")
        return value

    def _append(self, value):
        flag = _is_weak(value)
        value = self._element(value)
        if self._probe is not None:
            probe = self._probe
            if self.weak is None:
                pass
            elif probe.weak is None:
                probe.weak = flag
            elif probe.weak != flag:
                raise _mixed_kinds()
            probe.appends += 1
            probe.changes_length()
            return self._changed(self.buffer, self.length + 1, probe)
        weak = self._weak_after_write(
            self.length if isinstance(self.length, int) else None, flag, append=True)
        buffer = self.buffer
        if isinstance(self.length, int) and self.length >= self.capacity or (
                not isinstance(self.length, int) and not _staging_depth()):
            # Outside staged loops a list may grow: one more slot.
            buffer = jnp.concatenate([buffer, jnp.zeros((1, *buffer.shape[1:]),
                                                        buffer.dtype)])
        if isinstance(self.length, int):
            return self._changed(buffer.at[self.length].set(value), self.length + 1,
                                 weak=weak)
        # In bounds by construction: the loop that made the list sized the buffer.
        start = (self.length,) + (0,) * value.ndim
        buffer = lax.dynamic_update_slice(buffer, value[None], start,
                                          allow_negative_indices=False)
        return self._changed(buffer, self.length + 1, weak=weak)

    def _pop(self):
        if isinstance(self.length, int) and self.length == 0:
            raise IndexError("pop from empty list")
        if self._probe is not None:
            self._probe.used = True
            self._probe.changes_length(pop=True)
        length = self.length - 1
        position = (lax.max(length, 0) if is_tracer(length)
                    else length if self.buffer is not None else 0)
        item = _weakened(_row(self._buffer_for_read(), position),
                         self._weak_at(length if isinstance(length, int) else position))
        return self._changed(self.buffer, length, self._probe), item

    def _set(self, index, value):
        flag = _is_weak(value)
        if self._probe is not None:
            self._probe.used = True
            self._element(value)
            return self
        index = self._normalize(index)
        weak = self._weak_after_write(index if isinstance(index, int) else None, flag)
        return self._changed(self.buffer.at[index].set(self._element(value)), self.length,
                             weak=weak)


def _row(buffer, index):
    """``buffer[index]`` for an index ``TensorList._normalize`` gave: a position
    counted from the buffer's start, or a traced one that JAX's indexing would wrap
    by the capacity where negative and clamp into the buffer (out of the list's
    range only where Python raises an ``IndexError`` that a traced index cannot).

    Before: ``buffer[index]``, JAX's general indexing (its index parsing, a ``jit``
    around the wrap) on every read. After: the same wrap and ``dynamic_slice`` in
    ``lax`` primitives (not ``lax.dynamic_index_in_dim``, a ``jit`` of its own,
    whose wrap goes through ``jnp``'s operators), or ``lax.index_in_dim``
    for a position known in range; anything else (a static position past the
    capacity, an index that is not an int32 scalar) still goes through
    ``buffer[index]``, raising what it raises."""
    if isinstance(index, int):
        if 0 <= index < buffer.shape[0]:
            return lax.index_in_dim(buffer, index, keepdims=False)
    elif is_tracer(index) and not index.shape and index.dtype == np.int32:
        index = lax.select(lax.lt(index, np.int32(0)),
                           lax.add(index, np.int32(buffer.shape[0])), index)
        row = lax.dynamic_slice(buffer, (index, *(0,) * (buffer.ndim - 1)),
                                (1, *buffer.shape[1:]), allow_negative_indices=False)
        return lax.squeeze(row, (0,))
    return buffer[index]


def _weakened(value, weak):
    """``value`` weakly typed where Python's element is (``weak``)."""
    return weak_cast(value, value.dtype) if weak else value


def _collapsed(weak) -> tuple:
    """``weak`` flags (see ``TensorList.weak``) with the trailing run that equals the
    last flag folded into it."""
    weak = list(weak)
    while len(weak) > 1 and weak[-2] == weak[-1]:
        weak.pop(-2)
    return tuple(weak)


def _mixed_kinds() -> ElementTypeError:
    """The ``ElementTypeError`` for a list whose elements' kinds would differ by a
    traced position, at the user's line."""
    error = ElementTypeError(_MIXED)
    error.where = frame_location(sys._getframe(1))
    return error


_MIXED = (
    "a staged list cannot hold both Python numbers (weakly typed: a float, an int, "
    "a value computed from them alone) and arrays where its elements are appended, "
    "popped or read at a traced position: Python's list keeps each element's kind, "
    "which decides how it promotes later. Make them one kind: e.g. start the list "
    "with jnp.float32(0.0) rather than 0.0, or append jnp.asarray(v).")

_DATA_DEPENDENT = (
    "This list was grown or shrunk in a staged loop whose trip count, or under a "
    "condition whose value, is traced, so its length is only known when the program "
    "runs (a staged buffer, a TensorList).")


class ElementTypeError(TypeError):
    """An append whose value a staged list's buffer cannot hold unchanged; ``where``:
    the user's line of the append."""

    where = None


def _as_element(value, dtype, declared=False):
    """``value`` as an element of a buffer of ``dtype``. Python's list would hold it
    as it is: a value of another dtype (``1.5`` after ``1``, or a Python ``0`` in a
    float32 list, which Python keeps an int) cannot share the buffer without
    changing it. A list ``declared`` with ``set_element_type`` takes a weakly typed
    value that JAX's own promotion gives ``dtype``, cast to it."""
    got = jnp.result_type(value)
    if got != dtype and not (declared and _is_weak(value)
                             and jnp.promote_types(got, dtype) == dtype):
        raise ElementTypeError(
            f"a staged list holds {jnp.dtype(dtype).name} elements; got one of dtype "
            f"{jnp.dtype(got).name}. Every element of a list grown in a staged loop must "
            "have the same shape and dtype.")
    return jnp.asarray(value, dtype)


def _is_weak(value) -> bool:
    """Whether JAX sees ``value`` weakly typed: a Python int, float or complex (not a
    bool), or a weakly typed array or tracer."""
    if type(value) in (int, float, complex):
        return True
    if isinstance(value, jax.ShapeDtypeStruct):
        return bool(value.weak_type)
    try:
        return bool(jax.typeof(value).weak_type)
    except TypeError:
        return False


def _is_list(value) -> bool:
    return type(value) is list or type(value) is TypedList


class TypedList(list):
    """A Python list declared with ``set_element_type`` while JAX traces."""

    element: jax.ShapeDtypeStruct

    def __init__(self, items, element):
        super().__init__(items)
        self.element = element


tree_util.register_pytree_node(
    TypedList, lambda lst: (list(lst), lst.element),
    lambda element, items: TypedList(items, element))


# -- the operators generated code calls ------------------------------------------------


def list_append(lst, item):
    """``lst.append(item)``; returns the list (the same object for a Python list)."""
    if type(lst) is list:
        if side_effects.REPLACED:
            side_effects.refuse_if_replaced(lst)
        lst.append(item)
        return lst
    if isinstance(lst, TensorList):
        if lst._probe is not None and lst._probe.appended_at is None:
            lst._probe.appended_at = caller_location()
        try:
            return lst._append(item)
        except ElementTypeError as e:
            e.where = caller_location()
            raise
    lst.append(item)
    return lst


def list_pop(lst, *index):
    """``item = lst.pop(*index)``; returns ``(lst, item)``."""
    if isinstance(lst, TensorList):
        if index:
            raise TypeError("a staged list pops from its end only: lst.pop()")
        return lst._pop()
    if side_effects.REPLACED:
        side_effects.refuse_if_replaced(lst)
    item = lst.pop(*index)
    return lst, item


def list_len(value):
    """``len(value)``; the traced length of a staged list."""
    if type(value) is TensorList:
        return value.length
    return len(value)


def set_element_type(lst, dtype, shape=()):
    """``set_element_type(lst, dtype, shape)``: remember what the list holds.

    Run as plain Python (no JAX trace active) the list is returned unchanged.
    """
    element = jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))
    if isinstance(lst, TensorList):
        if lst.buffer is not None and (lst.buffer.shape[1:] != element.shape
                                       or lst.buffer.dtype != element.dtype):
            raise TypeError(f"this staged list holds {lst.buffer.dtype}"
                            f"{list(lst.buffer.shape[1:])}, not {element.dtype}"
                            f"{list(element.shape)}")
        return lst
    if _is_list(lst) and trace_active():
        return TypedList(lst, element)
    return lst


def stack(lst):
    """The list as one array (``jnp.stack``); for a staged list, its whole buffer,
    padded with zeros after ``len(lst)``."""
    if isinstance(lst, TensorList):
        return _weakened(lst.buffer, lst.weak is not None and all(lst.weak))
    if type(lst) is TypedList and not lst:
        return jnp.zeros((0, *lst.element.shape), lst.element.dtype)
    if _is_list(lst):
        rows = _stacked(lst)
        if rows is not None:
            return rows
    return jnp.stack(lst)


def check_returned(value, function):
    """Raise a ``ConversionError`` at ``function``'s line if ``value``, what the
    converted ``function`` returns to its caller under a JAX trace, holds a list
    whose length is traced (directly, or in tuples, lists and dicts): a ``jit``
    would return its buffer, not a list."""
    if not isinstance(value, _MAY_HOLD_LISTS) or not trace_active():
        return
    pending = [value]
    while pending:
        item = pending.pop()
        if type(item) is TensorList:
            code = function.__code__
            raise ConversionError(
                f"{function.__name__}() returns a list whose length is traced. "
                + _DATA_DEPENDENT + " Return autograph.stack(lst) (its elements as one "
                "array, padded past its length) and len(lst) (its length, traced) "
                "instead.", code.co_filename, code.co_firstlineno)
        if isinstance(item, (tuple, list)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())


_MAY_HOLD_LISTS = (TensorList, tuple, list, dict)


# -- lists in the branches of a staged `if` --------------------------------------------


def branch_buffers(*outs) -> dict:
    """Where the branches of a staged ``if`` (``outs``: each branch's abstract
    outputs, as its one trace gave them) disagree only in that a list is a buffer
    in one (grown in a staged loop there) and a Python list or a smaller buffer in
    the other: ``{position: (capacity, element)}``, what ``as_buffers`` makes them
    all."""
    found = {}
    for position, values in enumerate(zip(*outs, strict=True)):
        staged = [v for v in values if isinstance(v, TensorList)]
        if (not staged or any(v.buffer is None for v in staged)
                or not all(isinstance(v, TensorList) or _is_list(v) for v in values)):
            continue
        element = jax.ShapeDtypeStruct(staged[0].buffer.shape[1:], staged[0].buffer.dtype)
        capacity = max(v.capacity if isinstance(v, TensorList) else len(v) for v in values)
        if all(isinstance(v, TensorList) and v.capacity == capacity for v in values):
            continue
        found[position] = (capacity, element, _branch_weak(staged[0].weak, values))
    return found


def _branch_weak(weak, values):
    """``TensorList.weak`` for the branches' lists (``values``), the staged one's
    (``weak``), where each Python list's elements agree with it by position (past
    its length, a Python list has no elements to disagree); else None: each keeps its own,
    and the branches' types differ (an error at the ``if``)."""
    if weak is None:
        return None
    for value in values:
        if _is_list(value) and any(_is_weak(x) != weak[min(j, len(weak) - 1)]
                                   for j, x in enumerate(value)):
            return None
    return weak


def buffer_shapes(shapes, buffers) -> tuple:
    """The abstract values ``as_buffers`` gives for a branch whose abstract outputs
    are ``shapes`` (found without running it again)."""
    shapes = list(shapes)
    for position, (capacity, element, weak) in buffers.items():
        value = shapes[position]
        if isinstance(value, TensorList) and value.capacity == capacity:
            continue
        shapes[position] = TensorList(
            jax.ShapeDtypeStruct((capacity, *element.shape), element.dtype),
            jax.ShapeDtypeStruct((), jnp.int32), weak=_weak_of(value, weak))
    return tuple(shapes)


def as_buffers(values, buffers) -> tuple:
    """``values`` (a branch's outputs) with the lists at ``buffers``' positions made
    buffers of the capacity and element given there, with a traced length."""
    values = list(values)
    for position, (capacity, element, weak) in buffers.items():
        value = values[position]
        if isinstance(value, TensorList):
            pad = capacity - value.capacity
            buffer = value.buffer if not pad else jnp.concatenate(
                [value.buffer, jnp.zeros((pad, *element.shape), element.dtype)])
        else:
            items = [jnp.asarray(x, element.dtype) for x in value]
            pad = jnp.zeros((capacity - len(items), *element.shape), element.dtype)
            buffer = jnp.concatenate([jnp.stack(items), pad]) if items else pad
        values[position] = TensorList(buffer, jnp.asarray(value.length if isinstance(
            value, TensorList) else len(value), jnp.int32), weak=_weak_of(value, weak))
    return tuple(values)


# -- lists entering staged loops -------------------------------------------------------

def _staging_depth() -> int:
    return FRAMES.staged_lists


def stage_lists(state, names, step, trip_count, where, item=None, construct="loop",
                exact=False, probed=None):
    """Prepare loop ``state`` for staging: the Python lists the body grows, shrinks or
    writes become ``TensorList`` buffers sized for ``trip_count`` iterations (``None``
    when unknown); staged lists the body grows get room for them.

    ``step(state, item)`` is one iteration; ``item`` an abstract loop item or None.
    ``probed``: a ``ListProbe`` of this state the caller already ran (the loop's one
    probe, ``loop_probe.py``), so the body is not probed again.
    Returns ``(state, staging)``: ``staging`` is a context manager to trace the loop
    in (nested staged loops then use the room made here). With ``exact`` (the loop
    runs exactly ``trip_count`` iterations) a list whose appends and pops change its
    length the same on every path (``path_length_change``) has a length known after
    the loop:
    ``staging.as_lists(state)`` turns it back into the Python list Python would
    have (``as_lists``). ``staging.outputs`` holds the types one iteration gives
    each variable, where this probe ran (``ListProbe.outputs``).
    """
    listed = probed if probed is not None else ListProbe(state, names, where)
    if not listed.probes:
        return state, _Staging()
    if probed is None and not listed.run(step, item):
        return state, _Staging()   # the body cannot be traced abstractly: staging says why
    new_state, staging = listed.staged(state, trip_count, construct, exact)
    if probed is None:
        staging.outputs = listed.outputs
    return new_state, staging


class ListProbe:
    """The lists of a loop's ``state`` that may become buffers, as one abstract run of
    the body sees them: ``state``, the loop state with each such list a
    ``TensorList`` that records what the body does to it (``_Probe``: appends, pops,
    item writes), and ``probes``, those records by position. ``run`` runs the
    probe (or a caller runs its own abstract iteration on ``state`` within
    ``recording()``: the hole probe, ``loop_probe.py``), ``staged`` turns the records
    into the staged state."""

    def __init__(self, state, names, where):
        self.probes = {}
        self.outer_counts = {}  # inside an outer probe: its counts before this one
        self.outputs = None
        probe_state = list(state)
        for k, (name, value) in enumerate(zip(names, state, strict=True)):
            if not (isinstance(value, TensorList) or (
                    _is_list(value) and _element_of(value) is not False)):
                continue
            if isinstance(value, TensorList) and value._probe is not None:
                # Inside an outer probe: count into the outer record.
                self.outer_counts[k] = (value._probe.appends, value._probe.pops,
                                        len(value._probe.changes))
                self.probes[k] = value._probe
                continue
            element = _element_of(value)
            probe = self.probes[k] = _Probe(
                name, where, element if isinstance(element, jax.ShapeDtypeStruct) else None,
                depth=paths.depth())
            if isinstance(value, TensorList):
                probe_state[k] = TensorList(value.buffer, jnp.asarray(value.length, jnp.int32),
                                            probe, weak=value.weak)
            else:  # the length is traced, so that staged branches may differ in appends
                probe_state[k] = TensorList(None, jnp.asarray(len(value), jnp.int32), probe,
                                            weak=_items_weak(value))
        self.state = tuple(probe_state)

    @property
    def inside_outer_probe(self) -> bool:
        return bool(self.outer_counts)

    def recording(self):
        """The context to run the probe in: nested staged loops in the body then count
        into these records rather than make room of their own."""
        return _Staging()

    def run(self, step, item) -> bool:
        """Run ``step(state, item)`` abstractly once, recording; False where the body
        cannot be traced abstractly. A ``ConversionError`` passes through."""
        try:
            self.outputs = _run_probe(step, self.state, item)
        except ConversionError:
            raise
        except Exception:  # noqa: BLE001 - the body cannot be traced abstractly
            return False
        return True

    def keeps_python_list(self, state) -> bool:
        """Whether some list of ``state`` the probe saw as a buffer stays a Python list
        (the body neither changes its length nor writes it): the probe then saw it
        otherwise than the real trace will."""
        return any(not (probe.appends or probe.used or isinstance(state[k], TensorList))
                   for k, probe in self.probes.items() if k not in self.outer_counts)

    def staged(self, state, trip_count, construct, exact):
        """``(state, staging)`` from the records (see ``stage_lists``)."""
        staging = _Staging()
        new_state = list(state)
        for k, probe in self.probes.items():
            value = state[k]
            if k in self.outer_counts:
                appends, pops, mark = self.outer_counts[k]
                if probe.appends - appends and trip_count is None:
                    raise _unbounded(probe, construct)
                # Staging traces the body again; afterwards the outer probe counts
                # this loop's appends and pops once per iteration.
                trips = trip_count or 0
                staging.counts.append((probe, appends + (probe.appends - appends) * trips,
                                       pops + (probe.pops - pops) * trips, mark,
                                       [(path, delta * trips)
                                        for path, delta in probe.changes[mark:]]))
                continue
            if not (probe.appends or probe.used or isinstance(value, TensorList)):
                continue  # the body keeps its length: a plain Python pytree carry
            if probe.appends and trip_count is None:
                raise _unbounded(probe, construct)
            room = probe.appends * (trip_count or 0)
            new_state[k] = _to_tensor_list(value, probe, room)
            if _is_list(value) and not (probe.appends or probe.pops):
                staging.lists[k] = (len(value), value)   # items written only: same length
            elif exact and _is_list(value) and probe.length_change() is not None:
                staging.lists[k] = (len(value) + probe.length_change() * trip_count, value)
        return tuple(new_state), staging


class _Staging:
    """The context a staged loop is traced in: nested loops then know that the
    lists they grow were given room already. ``lists`` holds, by position in the
    state, the lists whose length after the loop is known, and the value each had
    before it: ``(length, value)``."""

    def __init__(self):
        self.counts = []
        self.lists = {}
        self.outputs = None

    def __enter__(self):
        FRAMES.staged_lists += 1

    def __exit__(self, *exc):
        FRAMES.staged_lists -= 1
        for probe, appends, pops, mark, changes in self.counts:
            probe.appends, probe.pops = appends, pops
            probe.changes[mark:] = changes

    def as_lists(self, state):
        """The loop's final ``state`` with each list of known length a Python list
        again (of the type it had before the loop), holding its elements."""
        if not self.lists:
            return state
        state = list(state)
        for k, (length, before) in self.lists.items():
            items = _unstacked(state[k].buffer, length, state[k].weak)
            state[k] = (TypedList(items, before.element) if type(before) is TypedList
                        else items)
        return tuple(state)


# The lists made from a buffer, by the id of their first element: stack() of such a
# list, still holding exactly those elements, is the buffer (no copy, no ops).
_UNSTACKED: dict = {}


def _unstacked(buffer, length, weak=(False,)) -> list:
    """``buffer[:length]`` as a Python list of its rows, each weakly typed where
    ``weak`` (``TensorList.weak``) says Python's element is."""
    rows = buffer if buffer.shape[0] == length else buffer[:length]
    items = list(jnp.unstack(rows)) if length else []
    weak = weak or (False,)
    items = [_weakened(x, weak[min(j, len(weak) - 1)]) for j, x in enumerate(items)]
    if all(weak[:length]) and weak[min(length, len(weak)) - 1]:
        rows = _weakened(rows, True)  # jnp.stack of weak elements is weak
    if items and is_tracer(items[0]):
        key = id(items[0])
        _UNSTACKED[key] = (rows, [weakref.ref(x) for x in items])
        weakref.finalize(items[0], _UNSTACKED.pop, key, None)
    return items


def _stacked(lst):
    """The buffer ``lst`` was made from, if it still holds exactly its elements."""
    if not lst:
        return None
    entry = _UNSTACKED.get(id(lst[0]))
    if entry is None:
        return None
    rows, refs = entry
    if len(refs) != len(lst) or any(ref() is not x for ref, x in zip(refs, lst, strict=True)):
        return None
    return rows


def _to_tensor_list(value, probe, room):
    if isinstance(value, TensorList):
        if _staging_depth() or not room:
            return value
        return TensorList(_padded(value.buffer, room), value.length, weak=value.weak)
    element = probe.element
    if element is None:
        raise ConversionError(
            f"'{probe.name}' is an empty list used in the staged loop but never appended "
            f"to there; declare what it holds: autograph.set_element_type({probe.name}, "
            "dtype, shape).", probe.where.filename, probe.where.lineno)
    items = [jnp.asarray(x, element.dtype) for x in value]
    buffer = (_padded(jnp.stack(items), room) if items
              else jnp.zeros((room, *element.shape), element.dtype))
    weak = _items_weak(value)
    if probe.weak is not None and weak is not None:
        weak = _collapsed((*(_is_weak(x) for x in value), probe.weak))
    return TensorList(buffer, jnp.asarray(len(items), jnp.int32), weak=weak)


def _weak_of(value, weak):
    """The ``TensorList.weak`` a branch's list ``value`` gets as a buffer: the
    branches' common ``weak`` (``_branch_weak``), else its own."""
    if weak is not None:
        return weak
    return value.weak if isinstance(value, TensorList) else _items_weak(value)


def _items_weak(items) -> tuple:
    """``TensorList.weak`` for a list holding ``items`` (strong past them, where the
    list is empty; None for a declared list)."""
    if type(items) is TypedList:
        return None
    return _collapsed([_is_weak(x) for x in items]) if items else (False,)


def _padded(rows, room):
    """``rows`` with ``room`` rows of zeros after them: one ``pad`` (what XLA makes
    of a concatenation with zeros anyway), not zeros built and concatenated."""
    if not room:
        return rows
    config = [(0, room, 0)] + [(0, 0, 0)] * (rows.ndim - 1)
    return lax.pad(rows, np.zeros((), rows.dtype), config)


def _element_of(value):
    """The element type of a list whose elements share shape and dtype; None for an
    empty undeclared list; False for a list that cannot be a buffer."""
    if isinstance(value, TensorList):
        if value.buffer is None:
            return value._probe.element if value._probe.element is not None else True
        return jax.ShapeDtypeStruct(value.buffer.shape[1:], value.buffer.dtype)
    if type(value) is TypedList:
        return value.element
    if not value:
        return True  # learnt from the first append
    try:
        avals = [jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)) for x in value]
    except TypeError:
        return False
    if any(not isinstance(x, (jax.Array, np.ndarray, np.generic, bool, int, float))
           for x in value):
        return False
    if len({(a.shape, a.dtype) for a in avals}) != 1:
        return False
    return avals[0]


def grows_traced(step, state, item) -> bool:
    """Whether a Python loop about to run ``state = step(state, item)`` under a JAX
    trace should be staged from its first iteration: the body appends traced
    values to a Python list in ``state`` (one abstract run of the body tells).
    Staging at once, rather than after a first Python iteration, gives the one
    ``scan`` a hand-written loop would be."""
    lists = [k for k, value in enumerate(state) if _is_list(value)]
    if not lists or not trace_active():
        return False
    grown = []

    def run():
        copied = tuple(list(v) if k in lists else v for k, v in enumerate(state))
        out = step(copied, item)
        for k in lists:
            new = out[k]
            if _is_list(new) and len(new) > len(state[k]):
                grown.append(any(is_tracer(x) for x in new[len(state[k]):]))

    try:
        # Needed: it decides whether the loop stages at all, before any real trace.
        jax.eval_shape(run)
    except Exception:  # the body cannot run abstractly: leave it to Python
        return False
    return any(grown)


def _run_probe(step, probe_state, item) -> tuple:
    """Run ``step`` once abstractly on ``probe_state``; the types it gives each
    variable (``tracing.types_of``)."""
    flat = FlatTree(tuple(probe_state), _traceable)
    outputs = []

    items, item_tree = tree_util.tree_flatten(item if item is not None else 0)

    def probe(*traced):
        item = tree_util.tree_unflatten(item_tree, traced[:len(items)])
        state = flat.rebuild(traced[len(items):])
        outputs.extend(types_of(v) for v in step(state, item))
        return []

    # Weak types kept: a Python scalar that starts the loop is weakly typed in the
    # real trace too, and the types the body gives (an element's dtype, what a start
    # promotes to: ``p + jnp.int8(1)`` is int8 from ``p = 0``) follow from them.
    avals = [jax.typeof(x) for x in (*items, *abstract(flat.selected))]
    with _Staging():
        # The loop's one probe: a carry must have its buffers' size and element type
        # before the real trace. Traced as a staged if's branches are
        # (trace_context.trace_flat), without the jit jax.eval_shape builds each time.
        trace_flat(probe, avals)
    return tuple(outputs)


def _traceable(leaf) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex))


def _unbounded(probe, construct):
    at = f" (`{probe.name}.append` at line {probe.appended_at.lineno})" \
        if probe.appended_at is not None else ""
    return ConversionError(
        f"list '{probe.name}' grows{at} in this staged {construct}, whose trip count is "
        "unknown while tracing, so its buffer cannot be preallocated. Bound the loop: "
        "make `autograph.set_loop_options(maximum_iterations=N)` the first statement of "
        f"its body (the buffer then holds N iterations' appends to '{probe.name}').",
        probe.where.filename, probe.where.lineno)


__all__ = [
    "ListProbe",
    "TensorList",
    "TypedList",
    "caller_location",
    "check_returned",
    "grows_traced",
    "list_append",
    "list_len",
    "list_pop",
    "set_element_type",
    "stack",
    "stage_lists",
]
