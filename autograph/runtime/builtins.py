"""Python builtins that need help with traced arguments.

A call to one of these builtins, when the name really is Python's builtin,
becomes a call here: ``max(a, b)`` → ``ag__.max_(a, b)``. With no traced argument
each *is* the builtin (same result, same errors). With traced arguments:

| builtin | traced argument |
| --- | --- |
| ``len(r)`` | the traced trip count of a ``range`` with a traced bound |
| ``min``/``max`` | Python's pick: a later value only if it compares smaller (larger) |
| ``sum(x, start)`` | ``start + jnp.sum(x, axis=0)`` (not unrolled) |
| ``sum``/``min``/``max`` of a traced range, or a generator over one | a staged loop |
| ``int``/``float``/``bool`` | a scalar cast (``int`` truncates, see below; ``bool``: ``x != 0``) |
| ``reversed(x)`` | ``x[::-1]``, which a ``for`` loop scans; a traced range backwards |
| ``round(x)`` | ``jnp.round`` (half to even) cast to ``int``, NaN/inf checked as for ``int`` |

``range`` is ``ag__.range_`` (runtime/loops.py). ``abs``, ``isinstance``, ``len``
of an array, and ``sum``/``min``/``max`` of Python values need nothing: JAX's
arrays already implement them. ``min``/``max`` keep Python's pick where ``jnp.minimum``
would not: a NaN that comes second is never taken (over a 1-D array: NaN only where
the first item is), a tie keeps the first value. ``int`` of a NaN or an infinity
raises Python's ``ValueError``/``OverflowError`` from the compiled call (a run-time
check), where the cast alone gives 0 or the integer's limit.
Where a builtin cannot give a traced result
(``int`` of a vector, ``min`` with ``key=``), the error names the user's line.
"""

from __future__ import annotations

import functools
import types

import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.errors import StagingTypeError
from autograph.runtime import lists
from autograph.runtime.checks import check_value
from autograph.runtime.loops import TracedRange
from autograph.runtime.math_functions import integral
from autograph.runtime.reductions import is_staged_iterable, reduce_staged
from autograph.runtime.tracing import caller_location, describe, has_tracer, is_tracer


def len_(value):
    """``len(value)``; the traced length of a staged list, the traced trip count of
    a range with a traced bound."""
    kind = type(value)
    if kind is TracedRange:
        return value.trip_count()
    if kind is lists.TensorList:
        return value.length
    return len(value)


def min_(*args, **kwargs):
    """``min(*args, **kwargs)``; traced values give their elementwise minimum."""
    args = _listed(args)
    if not has_tracer((args, kwargs)) and not _staged_one(args):
        return min(*args, **kwargs)
    return _extremum("min", _python_min, _first_then_nanmin, args, kwargs)


def max_(*args, **kwargs):
    """``max(*args, **kwargs)``; traced values give their elementwise maximum."""
    args = _listed(args)
    if not has_tracer((args, kwargs)) and not _staged_one(args):
        return max(*args, **kwargs)
    return _extremum("max", _python_max, _first_then_nanmax, args, kwargs)


def _python_min(a, b):
    # Python's min keeps the first value unless a later one is smaller: a NaN that
    # comes second is never taken (jnp.minimum would give NaN), a tie keeps the first.
    return jnp.where(b < a, b, a)


def _python_max(a, b):
    return jnp.where(b > a, b, a)


def _first_then_nanmin(values):
    """Python's ``min`` over a 1-D array: NaN only where the first item is NaN
    (a later NaN never compares smaller)."""
    if not jnp.issubdtype(values.dtype, jnp.floating):
        return jnp.min(values)
    return jnp.where(jnp.isnan(values[0]), values[0], jnp.nanmin(values))


def _first_then_nanmax(values):
    if not jnp.issubdtype(values.dtype, jnp.floating):
        return jnp.max(values)
    return jnp.where(jnp.isnan(values[0]), values[0], jnp.nanmax(values))


def sum_(iterable, /, start=0):
    """``sum(iterable, start)``; a traced array is summed over its first axis, a
    range with a traced bound (or a generator over one) by a staged loop."""
    if is_staged_iterable(iterable):
        return reduce_staged("sum", iterable, start)
    if not is_tracer(iterable):
        return sum(iterable, start)
    if jnp.ndim(iterable) == 0:
        _fail("sum", f"sum() of a traced scalar ({describe(iterable)}): a 0-d array is "
              "not iterable. Pass an array with a leading axis, or drop the sum().")
    return start + jnp.sum(iterable, axis=0)


def int_(*args, **kwargs):
    """``int(x)``; a traced scalar is cast to the default integer dtype."""
    if not has_tracer((args, kwargs)):
        return int(*args, **kwargs)
    return _cast("int", int, args, kwargs)


def float_(*args, **kwargs):
    """``float(x)``; a traced scalar is cast to the default float dtype."""
    if not has_tracer((args, kwargs)):
        return float(*args, **kwargs)
    return _cast("float", float, args, kwargs)


def bool_(*args, **kwargs):
    """``bool(x)``; a traced scalar becomes the traced boolean ``x != 0``."""
    if not has_tracer((args, kwargs)):
        return bool(*args, **kwargs)
    return _cast("bool", bool, args, kwargs)


def pow_(base, exp, mod=None):
    """``pow(base, exp, mod)``; traced integers with a modulus give the modular power
    by repeated squaring (a staged loop over the exponent's bits), where JAX's own
    ``__pow__`` takes no modulus. Two arguments are Python's ``pow``, which traced
    values already support."""
    if mod is None or not has_tracer((base, exp, mod)):
        return pow(base, exp) if mod is None else pow(base, exp, mod)
    values = [jnp.asarray(v) for v in (base, exp, mod)]
    if not all(jnp.issubdtype(v.dtype, jnp.integer) for v in values):
        _fail("pow", "pow() 3rd argument not allowed unless all arguments are integers")
    base, exp, mod = (v.astype(int) for v in values)
    largest = int(np.sqrt(np.iinfo(base.dtype).max))
    check_value(mod != 0, ValueError, "pow() 3rd argument cannot be 0")
    check_value(exp >= 0, ValueError,
                "pow() with a traced negative exponent and a modulus (a modular inverse) "
                "is not staged")
    check_value(jnp.abs(mod) <= largest, OverflowError,
                f"pow() modulus beyond {largest}: its products overflow "
                f"{base.dtype} (Python's integers do not)")

    def body(carry):
        result, b, e = carry
        result = jnp.where(e % 2 == 1, jnp.remainder(result * b, mod), result)
        return result, jnp.remainder(b * b, mod), e // 2

    start = (jnp.remainder(jnp.ones_like(base), mod), jnp.remainder(base, mod), exp)
    result, _, _ = lax.while_loop(lambda c: c[2] > 0, body, start)
    return result


def round_(number, ndigits=None):
    """``round(number, ndigits)``; a traced number without ``ndigits`` rounds half to
    even into an int, a NaN or an infinity raising Python's error (``integral``)
    where JAX's own ``round`` gives 0 or the integer's limit."""
    if not has_tracer((number, ndigits)):
        return round(number, ndigits)
    value = jnp.asarray(number)
    if ndigits is not None or not jnp.issubdtype(value.dtype, jnp.inexact):
        return round(number, ndigits)
    return integral(jnp.round(value))


def reversed_(sequence):
    """``reversed(sequence)``; a traced array is flipped along its first axis, and a
    range with a traced bound runs backwards (a ``for`` over it stages)."""
    if isinstance(sequence, TracedRange):
        return sequence.reversed()
    if not is_tracer(sequence):
        return reversed(sequence)
    if jnp.ndim(sequence) == 0:
        _fail("reversed", f"reversed() of a traced scalar ({describe(sequence)}): a 0-d "
              "array is not a sequence.")
    return sequence[::-1]


def _listed(args):
    """``args`` with a lone generator's items taken (``min``/``max`` consume it whole),
    so that asking whether they are traced looks at the items."""
    if len(args) == 1 and isinstance(args[0], types.GeneratorType):
        return (list(args[0]),)
    return args


def _staged_one(args) -> bool:
    return len(args) == 1 and is_staged_iterable(args[0])


def _extremum(name, pairwise, reduce, args, kwargs):
    if len(args) == 1 and is_staged_iterable(args[0]) and kwargs.get("key") is None:
        return reduce_staged(name, args[0], default=kwargs.get("default"),
                             has_default="default" in kwargs)
    if "key" in kwargs and kwargs["key"] is not None:
        _fail(name, f"{name}(..., key=...) over traced values would need to pick an "
              f"element by a traced comparison. Compute the keys as an array and use "
              f"jnp.arg{name}, or call {name}() on Python values.", depth=4)
    if len(args) == 1:
        (values,) = args
        if is_tracer(values):
            if jnp.ndim(values) != 1:
                _fail(name, f"{name}() over a traced {describe(values)} compares "
                      f"{'elements' if jnp.ndim(values) == 0 else 'rows'}, whose truth "
                      f"value is ambiguous. Use jnp.{name}(x) or jnp.{name}(x, axis=0).",
                      depth=4)
            if values.shape[0] == 0 and "default" in kwargs:
                return kwargs["default"]
            return reduce(values)
        values = list(values)
        if not values:
            return min(values, **kwargs) if name == "min" else max(values, **kwargs)
    else:
        values = list(args)
    return functools.reduce(pairwise, values)


def _cast(name, python_type, args, kwargs):
    if len(args) != 1 or kwargs:
        _fail(name, f"{name}() of a traced value takes exactly one argument.", depth=4)
    (value,) = args
    if jnp.shape(value) != ():
        _fail(name, f"{name}() of a traced array of shape {tuple(jnp.shape(value))}: "
              f"only a scalar converts to one {name}. Index or reduce it first, or use "
              f"x.astype(...) for an elementwise cast.", depth=4)
    if python_type is bool:
        return jnp.asarray(value) != 0
    if python_type is int:
        return integral(value)
    return jnp.asarray(value).astype(python_type)



def _fail(name, message, depth=3):
    where = caller_location(depth)
    raise StagingTypeError(message, where.filename, where.lineno)
