"""Arithmetic on a Python number whose type a traced condition decided.

A staged ``if`` that leaves ``m = 3`` on one path and ``m = 1.5`` on the other hands
on one weak float32 scalar, noted ``python_ints.Either(flag, int, float)``. Python's
``m * 2`` is the int ``6`` on one path and the float ``3.0`` on the other; the traced
``m * 2`` is a fresh float32 with no note, printed ``6.0``. The converter
(``converters/joined_numbers.py``) writes the arithmetic that may meet such a name as
``ag__.number_op(m, '*', 2)``; here it is the operator itself, and where an operand
is such a value:

- on Python numbers (and scalars noted as one), the result is noted as the Python
  type it has on each path (``int * int`` an int, ``int * float`` a float), so
  ``print``, ``isinstance`` and the next operator read it;
- with an array, the result's dtype is worked out on each path: where it is the
  same (``x * scale`` of a float32 ``x``) the result is that array; where it is not
  (``m * int32_array``: int32 where ``m`` is an int) a ``ConversionError``;
- where Python raises on one path (``m & 1`` of a float), or the result's type
  depends on the value (``2 ** m``), a ``ConversionError``.

Without such an operand it is the operator, as written.
"""

from __future__ import annotations

import itertools
import operator
import sys

import jax
import jax.numpy as jnp
import numpy as np

from autograph.errors import ConversionError
from autograph.runtime import python_ints, recursion
from autograph.runtime.tracing import caller_location, is_tracer

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift,
}
BINARY.update({symbol + "=": getattr(operator, "i" + fn.__name__.strip("_"))
               for symbol, fn in BINARY.items()})   # (`m += 1`: in place, as Python's)
UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "abs": abs}
# (a traced value stands for a Python number of unknown value: a sample of its type)
_SAMPLE = 3


def number_op(*args):
    """``a <op> b`` as ``number_op(a, op, b)``, ``<op> a`` as ``number_op(op, a)``
    (``op`` its symbol, or ``'abs'``): the operator's result, noted as the Python type
    it has on each path of the traced condition that decided an operand's type.

    Before: ``print(m * 2)``. After: ``ag__.print_(ag__.number_op(m, '*', 2))``."""
    if len(args) == 3:
        operands, fn, symbol = (args[0], args[2]), BINARY[args[1]], args[1]
    else:
        operands, fn, symbol = (args[1],), UNARY[args[0]], args[0]
    if not any(_decided(value) for value in operands):
        return fn(*operands)
    return _typed_result(fn, symbol, operands)


def one_type(value, returned=False):
    """``value``, where it is not a number whose type a traced condition decided;
    such a number read otherwise than as a number (a call's argument, an item of a
    list, an index: ``helper(m)``, ``jnp.full(3, m)``, ``[m, 1]``), whose type
    nothing would carry on, is a ``ConversionError`` at the user's line. ``returned``:
    a function's result, which the compiled function's caller gets as an array
    (refused where a converted caller would compute on it).

    Before: ``helper(m)``. After: ``helper(ag__.one_type(m))``."""
    if _decided(value):
        if returned and sys._getframe(2).f_code in recursion.ENTRY_CODES:
            return value   # (the result of the function `convert` made: an array)
        raise _error(
            "this line hands on a Python number whose type a staged `if` (its "
            "condition traced) decided (an int on one path, a float on the other) "
            "where its type is not carried on (a call's argument or result, an item "
            "of a display, an index): what it computes could be of the other type "
            "than Python's")
    return value


def _decided(value) -> bool:
    """Whether ``value`` stands for a Python number whose type a traced condition
    decided (an array on some path is left to JAX: its dtype is the array's)."""
    if not is_tracer(value):
        return False
    kind = python_ints.python_type(value)
    return isinstance(kind, python_ints.Either) or (
        isinstance(kind, python_ints.Mixed) and not kind.array and len(kind.types) > 1)


# (dtype, weak) of each operand, or its Python type -> the result's dtype
_ARRAY_RESULTS: dict = {}


def _dtype_key(value):
    aval = jax.typeof(value)
    return aval.dtype, aval.weak_type


class _Array:
    """An operand that is an array in Python too."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _alternatives(value, symbol):
    """The operand's cases: ``[(conditions, kind, sample)]``, ``conditions`` a tuple
    of ``(flag, holds)``, ``kind`` a Python number type or ``_Array``."""
    kind = python_ints.python_type(value) if is_tracer(value) else None
    if isinstance(kind, python_ints.Either):
        return [(((kind.flag, True),), kind.if_true, kind.if_true(_SAMPLE)),
                (((kind.flag, False),), kind.if_false, kind.if_false(_SAMPLE))]
    if isinstance(kind, python_ints.Mixed):
        raise _error(
            f"this `{symbol}` reads a value that staged `if`s (their conditions traced) "
            "left as a Python number of one type or another (or an array) on different "
            "paths, decided by more than one traced condition, so Python's result "
            "cannot be told while tracing")
    if isinstance(kind, type):
        return [((), kind, kind(_SAMPLE))]
    if type(value) in python_ints.NUMBER_TYPES:
        return [((), type(value), value)]
    if kind is None and getattr(value, "ndim", None) == 0 and jax.typeof(value).weak_type:
        # A Python number no region noted (a parameter given one, one a staged loop
        # carries): the number of its dtype's kind, as ``print`` shows it.
        kind = python_ints.KIND_TYPES.get(np.dtype(value.dtype).kind)
        if kind is not None:
            return [((), kind, kind(_SAMPLE))]
    return [((), _Array, _Array(value))]


def _typed_result(fn, symbol, operands):
    cases = {}   # result kind (a type, or a dtype) -> the conditions of its cases
    for combo in itertools.product(*(_alternatives(v, symbol) for v in operands)):
        conditions = {}   # id(flag) -> (flag, holds)
        for case in combo:
            for flag, holds in case[0]:
                if conditions.setdefault(id(flag), (flag, holds))[1] != holds:
                    break   # (the same flag, holding and not: no such path)
            else:
                continue
            break
        else:
            kind = _result_kind(fn, symbol, operands, [case[1] for case in combo],
                                [case[2] for case in combo])
            cases.setdefault(kind, []).append(tuple(conditions.values()))
    kinds = list(cases)
    if len(kinds) == 1:
        result = fn(*operands)
        if isinstance(kinds[0], type):
            python_ints.note_as(result, kinds[0])
        return result
    if not all(isinstance(k, type) for k in kinds):
        raise _error(
            f"this `{symbol}` meets an array and a Python number whose type a staged "
            "`if` (its condition traced) decided, and the result's dtype depends on "
            f"that condition ({' or '.join(str(k) for k in kinds)}): Python's result "
            "is not one array")
    if len(kinds) > 2:
        raise _error(
            f"this `{symbol}` gives a Python number of one of {len(kinds)} types, "
            "decided by traced conditions")
    result = fn(*operands)
    python_ints.set_type(result, python_ints.Either(python_ints.flag_of(cases[kinds[0]]),
                                                    kinds[0], kinds[1]))
    return result


def _result_kind(fn, symbol, operands, kinds, samples):
    """The Python type of the result on one path (numbers), or its dtype (arrays)."""
    if _Array in kinds:
        key = tuple(_dtype_key(v.value) if k is _Array else k
                    for v, k in zip(samples, kinds, strict=True))
        found = _ARRAY_RESULTS.get(key)
        if found is None:
            found = _ARRAY_RESULTS[key] = jnp.result_type(*(
                v.value if k is _Array else k for v, k in zip(samples, kinds, strict=True)))
        return found
    if symbol == "**" and kinds[0] is not float and kinds[1] in (int, bool) \
            and is_tracer(operands[1]):
        raise _error(
            "this `**` raises a Python int to a traced int power: Python's result is "
            "an int or a float by the exponent's sign, and a staged `if` (its "
            "condition traced) decided an operand's type")
    try:
        return type(fn(*samples))
    except Exception as error:  # noqa: BLE001 - Python's own error on one path
        names = ", ".join(k.__name__ for k in kinds)
        raise _error(
            f"this `{symbol}` raises {type(error).__name__} in Python where its "
            f"operands are ({names}) ({error}), and which they are a traced "
            "condition decided") from None


def _error(why):
    where = caller_location()
    return ConversionError(
        f"{why}. Give the variable one type on every path of the `if` "
        "(`m = 3.0`, not `m = 3` on one path and `m = 1.5` on the other).",
        where.filename, where.lineno)




def check_exact(out, true_leaves, false_leaves, where) -> None:
    """Refuse a staged ``if``'s output that stands for an int on one path and a float
    on the other where a branch's int (``m = 2**25 + 1``) has no exact value in the
    joined float dtype: the float32 would silently round it (``true_leaves`` /
    ``false_leaves``: each branch's Python scalars, ``conditionals._python_scalars``)."""
    for value, (_, a), (_, b) in zip(out, true_leaves, false_leaves, strict=False):
        if not isinstance(python_ints.python_type(value), python_ints.Either):
            continue
        for number in (a.get(0), b.get(0)):
            if type(number) is int and int(np.asarray(number, value.dtype)) != number:
                raise ConversionError(
                    f"a branch of this `if` (its condition traced) gives the int {number}, "
                    f"the other a float: the value is staged as one {value.dtype} "
                    "scalar, which cannot hold that int exactly. Give the variable one "
                    "type on every path (an int on both keeps it exact).",
                    where.filename, where.lineno)


__all__ = ["check_exact", "number_op", "one_type"]
