"""Traced scalars that stand for a Python number of the user's program.

A Python int a staged region carries (``k`` in ``if x > 3: k += 5``, or in a loop
whose condition is traced) leaves it as a traced int32: it then reads traced data,
and no value of it is worked out while tracing. Python's int never wraps; the
int32 does. The regions note such values here (``note``), and a later staged loop
that steps one by literals checks it for a wrap in each iteration, its value being
unknown (``loops._StepChecks``): ``k`` carried by an outer loop into an inner one
is such a value.

A staged ``if`` also notes the Python type each scalar output stands for, from
its branches (``note_join``): ``isinstance``/``type`` answer with it
(``runtime/types_of.py``), and ``print`` shows a value whose type the traced
condition decided (``k = 3``, ``k = 4.0`` in one branch) as that type
(``printing.py``).

The notes are weak: a value is forgotten with its tracer.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from autograph.runtime.trace_context import ended, weak_cast
from autograph.runtime.tracing import is_tracer

_NOTED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def is_noted(value) -> bool:
    """Whether ``value`` is a traced scalar noted as a Python int of the program."""
    return is_tracer(value) and _NOTED.get(id(value)) is value


def stands_for_int(value) -> bool:
    """Whether ``value`` is a Python int (not a bool) or a traced one noted so."""
    return type(value) is int or is_noted(value)


def mark(value) -> None:
    """Note ``value`` (a traced signed-integer scalar) as a Python int of the program."""
    if is_tracer(value) and getattr(value, "ndim", None) == 0 \
            and np.issubdtype(value.dtype, np.signedinteger):
        _NOTED[id(value)] = value


def as_python_number(value):
    """The traced scalar ``value`` made what a Python number of its kind is when it
    meets arrays (weakly typed, of the default dtype of its kind) and noted as that
    Python type: what a traced ``float(x)``, ``int(x)`` or ``math.sqrt(x)`` gives,
    since Python's call gives a Python number (``float(i) * h`` of a float16 ``h`` is
    float16, where a float32 cast would give float32). Anything else is returned as is."""
    if not is_tracer(value) or getattr(value, "ndim", None) != 0:
        return value
    dtype = np.dtype(value.dtype)
    kind = {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(dtype.kind)
    if kind is None:
        return value
    if kind is not bool:
        value = weak_cast(value, jax.dtypes.canonicalize_dtype(kind))
    note_as(value, kind)
    return value


def note(given, out) -> None:
    """Note the traced scalars of ``out`` (a region's outputs, by position) whose
    ``given`` value (its input at that position) was a Python int or noted; and,
    where not noted yet (``note_join``), as the Python number type ``given`` was
    where ``out`` is weakly typed of that type's kind (a loop that keeps it one); one
    given as an ``Either`` and carried by a loop, as a ``Mixed`` of its two types."""
    for before, after in zip(given, out, strict=False):
        if stands_for_int(before):
            mark(after)
        kind = type(before) if type(before) in NUMBER_TYPES else python_type(before)
        if _TYPES.get(id(after)) is not None or not is_tracer(after) \
                or getattr(after, "ndim", None) != 0:
            continue
        if isinstance(kind, type) and weak_of_kind(after, kind):
            set_type(after, kind)
        elif isinstance(kind, Either):
            # (a loop carried it: which type its body left it is not known)
            set_type(after, Mixed({kind.if_true, kind.if_false}, False))


def weak_of_kind(value, kind) -> bool:
    """Whether the traced ``value`` is weakly typed of the Python number type ``kind``'s
    kind (a float for ``float``, an int for ``int``), or a bool for ``bool``."""
    aval = jax.typeof(value)
    return aval.weak_type and np.dtype(aval.dtype).kind == np.dtype(kind).kind or (
        kind is bool and aval.dtype == np.bool_)


# The Python type each traced scalar noted here stands for (``note_types``): a type
# (``int``, ``float``, ``bool``, ``complex``), ``Either`` (which one a traced condition
# decided) or ``Mixed`` (a Python number of these types on some paths, an array on
# others).
_TYPES: dict = {}
NUMBER_TYPES = (bool, int, float, complex)
# The Python number type of a scalar, by its dtype's kind.
KIND_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


class Either:
    """The Python type of a staged ``if``'s output whose branches give Python numbers
    of two types (``k = 3``, then ``k = 4.0`` in one branch): ``if_true`` where the
    traced ``flag`` holds, else ``if_false``."""

    __slots__ = ("flag", "if_true", "if_false")

    def __init__(self, flag, if_true, if_false):
        self.flag, self.if_true, self.if_false = flag, if_true, if_false


class Mixed:
    """The Python type of a value that is a Python number of one of ``types`` on
    some paths, and an array on others (``array``)."""

    __slots__ = ("types", "array")

    def __init__(self, types, array):
        self.types, self.array = frozenset(types), array


def python_type(value):
    """What the traced scalar ``value`` stands for: a Python number type, an
    ``Either``, a ``Mixed``, or None (not noted: an array, or not known)."""
    if not is_tracer(value):
        return None
    entry = _TYPES.get(id(value))
    if entry is not None and entry[0]() is value:
        return entry[1]
    return int if is_noted(value) else None


def set_type(value, kind) -> None:
    """Note that the traced scalar ``value`` stands for ``kind`` (see ``python_type``)."""
    if not is_tracer(value) or getattr(value, "ndim", None) != 0:
        return
    key = id(value)

    def forget(ref, key=key):
        if _TYPES.get(key, (None,))[0] is ref:
            del _TYPES[key]

    _TYPES[key] = (weakref.ref(value, forget), kind)


def note_as(value, kind) -> None:
    """Note the traced scalar ``value`` as standing for the Python number type ``kind``
    (and, for ``int``, as a Python int whose steps are checked for a wrap)."""
    set_type(value, kind)
    if kind is int:
        mark(value)


def branch_kind(value, python_value=None):
    """The Python type a staged ``if``'s branch gives at one position: the type of
    a Python number (``python_value``, where the branch passed one through
    traced), a noted tracer's, or None (an array, or anything else)."""
    if python_value is not None:
        value = python_value
    if type(value) in NUMBER_TYPES:
        return type(value)
    return python_type(value)


def _possible(kind) -> tuple[set, bool]:
    """The Python number types ``kind`` (a ``branch_kind``) may be, and whether it
    may be an array."""
    if kind is None:
        return set(), True
    if isinstance(kind, Either):
        return {kind.if_true, kind.if_false}, False
    if isinstance(kind, Mixed):
        return set(kind.types), kind.array
    return {kind}, False


def note_join(out, true_kinds, false_kinds, flag) -> None:
    """Note the Python types of a staged ``if``'s scalar outputs ``out`` from its
    branches' (``branch_kind``, by position; ``flag``: the traced condition)."""
    for value, a, b in zip(out, true_kinds, false_kinds, strict=False):
        if not is_tracer(value) or (a is None and b is None):
            continue
        if a is b and isinstance(a, type):
            note_as(value, a)
        elif isinstance(a, type) and isinstance(b, type):
            set_type(value, Either(flag, a, b))
        elif isinstance(a, Either) and isinstance(b, Either) and a.flag is b.flag \
                and (a.if_true, a.if_false) == (b.if_true, b.if_false):
            set_type(value, a)   # (both branches keep the type an earlier `if` decided)
        elif (cases := _cases(a, flag, True)) and (other := _cases(b, flag, False)):
            by_type = {}
            for conditions, kind in cases + other:
                by_type.setdefault(kind, []).append(conditions)
            kinds = list(by_type)
            if len(kinds) == 1:
                note_as(value, kinds[0])
            else:
                set_type(value, Either(flag_of(by_type[kinds[0]]), kinds[0], kinds[1]))
        else:
            (types_a, array_a), (types_b, array_b) = _possible(a), _possible(b)
            set_type(value, Mixed(types_a | types_b, array_a or array_b))


def _cases(kind, flag, holds):
    """A branch's ``kind`` (taken where ``flag`` is ``holds``) as its cases,
    ``[(conditions, type)]`` (``conditions``: ``(flag, holds)`` pairs), or None where
    it is not a Python number type, or an ``Either`` an earlier ``if`` of this trace
    decided (one decided inside the branch: its flag is the branch's own)."""
    if isinstance(kind, type):
        return [(((flag, holds),), kind)]
    if isinstance(kind, Either) and not ended(kind.flag):
        return [(((flag, holds), (kind.flag, True)), kind.if_true),
                (((flag, holds), (kind.flag, False)), kind.if_false)]
    return None


def flag_of(paths):
    """The traced flag that holds on any of ``paths`` (each a tuple of
    ``(flag, holds)`` pairs that all hold on it)."""
    flag = None
    for path in paths:
        on_path = None
        for value, holds in path:
            one = value if holds else jnp.logical_not(value)
            on_path = one if on_path is None else jnp.logical_and(on_path, one)
        flag = on_path if flag is None else jnp.logical_or(flag, on_path)
    return flag


def note_inner(outer, inner) -> None:
    """Note the traced leaves ``inner`` (a branch's operands) as standing for the
    same Python types as the leaves of ``outer`` they trace (the state)."""
    for before, after in zip(outer, inner, strict=False):
        kind = python_type(before)
        if isinstance(kind, type):
            note_as(after, kind)
        elif isinstance(kind, Either):
            set_type(after, kind)   # (its flag the outer trace's: the branch reads it)
