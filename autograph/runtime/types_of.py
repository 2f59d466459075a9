"""``isinstance``, ``type``, ``str`` and ``repr`` of values that staging made traced.

A Python number a staged region carries leaves it as a traced scalar (``m = 0``,
``if x > 0: m = m + 1``); Python's ``m`` is still an int. The regions note the
Python type each such scalar stands for (``python_ints.python_type``), and these
builtins answer with it:

- ``isinstance(m, int)`` / ``type(m)``: the noted type's answer (Python's). Where a
  traced condition decided the type (``k = 3``, ``k = 4.0`` in one branch) and the
  answer depends on which, or where a weakly typed traced scalar that no region
  noted (``m + 1``: it may stand for a Python number, or be an array) would answer
  otherwise as a number than as an array (``isinstance(m + 1, float)``,
  ``isinstance(m + 1, jax.Array)``: JAX's answer is not Python's), a
  ``ConversionError`` at the user's line.
- ``str(x)`` / ``repr(x)`` / ``format(x, spec)`` of a traced value, outside ``print``: a
  ``ConversionError`` at the user's line (the text would be the tracer's, made
  while tracing, ``JitTracer(~float32[])``, not the value's). Inside ``print``'s
  arguments the converter defers them as it defers f-strings
  (``converters/formatting.py``): printed when the program runs.

With values that are not traced each is the builtin itself.
"""

from __future__ import annotations

import builtins

import jax
import numpy as np

from autograph.errors import ConversionError
from autograph.runtime import python_ints
from autograph.runtime.tracing import Tracer, caller_location, has_tracer


def isinstance_(*args, **kwargs):
    """``isinstance(obj, classinfo)``, answered for the Python number a traced scalar
    stands for (see the module docstring)."""
    if len(args) != 2 or kwargs or not _traced(args[0]):
        return builtins.isinstance(*args, **kwargs)   # (its own errors too)
    obj, classinfo = args
    kind = python_ints.python_type(obj)
    if builtins.isinstance(kind, type):
        return builtins.issubclass(kind, classinfo)
    as_array = builtins.isinstance(obj, classinfo)
    if builtins.isinstance(kind, python_ints.Either):
        answers = {builtins.issubclass(kind.if_true, classinfo),
                   builtins.issubclass(kind.if_false, classinfo)}
        if len(answers) == 1:
            return answers.pop()
        raise _decided_by_condition("isinstance")
    if builtins.isinstance(kind, python_ints.Mixed):
        answers = {builtins.issubclass(t, classinfo) for t in kind.types}
        if kind.array:
            answers.add(as_array)
        if len(answers) == 1:
            return answers.pop()
        raise _maybe_a_number("isinstance", True)
    number = _number_kind(obj)
    if number is not None and _weak(obj) \
            and builtins.issubclass(number, classinfo) != as_array:
        raise _maybe_a_number("isinstance", False)   # (`isinstance(m * 2, jax.Array)` too)
    return as_array


def _traced(obj) -> bool:
    """Whether ``obj`` is a tracer, by its type alone: ``isinstance`` would read its
    ``__class__``, which a user's class may define as a property calling ``type`` or
    ``isinstance`` (converted: here again, without end)."""
    return builtins.issubclass(builtins.type(obj), Tracer)


def type_(*args, **kwargs):
    """``type(obj)``: the Python number type a traced scalar stands for, where a
    region noted one; the three-argument form is the builtin's."""
    if len(args) != 1 or kwargs or not _traced(args[0]):
        return builtins.type(*args, **kwargs)
    kind = python_ints.python_type(args[0])
    if builtins.isinstance(kind, type):
        return kind
    if kind is not None:
        raise _decided_by_condition("type")
    return builtins.type(args[0])


def str_(*args, **kwargs):
    """``str(...)``; of a traced value, a ``ConversionError`` at the user's line."""
    if args and has_tracer(args[0]):
        raise _text_of_traced("str")
    return builtins.str(*args, **kwargs)


def repr_(*args, **kwargs):
    """``repr(obj)``; of a traced value, a ``ConversionError`` at the user's line."""
    if len(args) == 1 and has_tracer(args[0]):
        raise _text_of_traced("repr")
    return builtins.repr(*args, **kwargs)


def format_builtin(*args, **kwargs):
    """``format(value, format_spec)``; of a traced value, a ``ConversionError`` at
    the user's line."""
    if args and has_tracer(args[0]):
        raise _text_of_traced("format")
    return builtins.format(*args, **kwargs)


def _number_kind(obj):
    """The Python number type a traced scalar's dtype would be, or None."""
    if getattr(obj, "ndim", None) != 0:
        return None
    return python_ints.KIND_TYPES.get(np.dtype(obj.dtype).kind)


def _weak(obj) -> bool:
    return jax.typeof(obj).weak_type


def _error(message):
    where = caller_location(3)
    return ConversionError(message, where.filename, where.lineno)


def _decided_by_condition(name):
    return _error(
        f"this {name}() asks the type of a value that a staged `if` (its condition is "
        "traced) left as a Python number of one type on one path and of another on "
        "the other (`k = 3`, then `k = 4.0` in one branch), so Python's answer depends "
        "on the traced condition. Give the variable one type on every path "
        "(`k = 3.0`), or ask before the staged `if`.")


def _maybe_a_number(name, mixed):
    why = ("a staged `if` left a Python number on one path and an array (or a number "
           "of another type) on the other"
           if mixed else
           "it is a weakly typed traced scalar, which may stand for a Python number "
           "(one that staged code carried, or computed from one) or be an array")
    return _error(
        f"this {name}() asks whether a traced value is a Python number (or an array), "
        f"and {why}: "
        "Python's answer cannot be known while tracing. Ask before the value is "
        "traced, or test its dtype (`jnp.issubdtype(jnp.result_type(x), jnp.integer)`).")


def _text_of_traced(name):
    return _error(
        f"this {name}() makes the text of a traced value, which does not exist while "
        "tracing: the text would be the tracer's (`JitTracer(~float32[])`), not the "
        "value's. Print it (`print('v =', x)` or `print('v=' + str(x))`, which print "
        "when the program runs), use jax.debug.print, or make the text outside the "
        "compiled function, from its result.")


__all__ = ["format_builtin", "isinstance_", "repr_", "str_", "type_"]
