"""``math.*`` functions that accept traced values.

A call to a function of Python's ``math`` module (``math.sqrt(x)``, or ``sqrt(x)``
after ``from math import sqrt``) becomes ``ag__.math_sqrt(x)``. With no traced
argument each *is* the ``math`` function: the same exact result (a Python
``float`` or ``int``) and the same exceptions (``math.sqrt(-1)`` raises
``ValueError``). With a traced argument it is the ``jnp`` function of the same
meaning, with ``math``'s result kind: an ``int`` for ``floor``/``ceil``/``trunc``/
``isqrt``/``gcd``/``lcm`` (the default integer dtype), a ``bool`` for
``isnan``/``isinf``/``isfinite``/``isclose``, else the default float dtype; a
scalar result weakly typed, as a Python number meets arrays
(``python_ints.as_python_number``: ``math.sqrt(n) * h`` keeps a float16 ``h``'s dtype).
Where ``math`` refuses an argument (``ValueError: math domain error`` for the
square root or logarithm of a negative number, an inverse sine outside [-1, 1]...),
the traced call is checked when the program runs and raises the same error from
the compiled call, as a traced ``assert`` would (``autograph.convert(f,
asserts=...)`` switches it as it switches asserts); ``jnp`` alone would give NaN.

| ``math`` | traced |
| --- | --- |
| ``sqrt``, ``exp``, ``log``, ``log2``, trigonometric, hyperbolic... | the ``jnp`` function |
| ``floor``, ``ceil``, ``trunc`` | ``jnp.floor``... cast to ``int``, NaN and inf checked |
| ``isqrt(n)`` | the exact integer square root |
| ``hypot(*xs)``, ``dist(p, q)``, ``prod(xs)``, ``fsum(xs)`` | ``jnp`` equivalents |
| ``pow(x, y)`` | ``x ** y`` in floats (``math.pow`` never gives an int) |

``NAMES`` (the converter's table, ``converters/builtin_functions.py``) lists them.
``factorial``, ``comb`` and ``perm`` of a traced value are refused at the user's
line: their result grows past any fixed-width integer.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy import special

from autograph.errors import StagingTypeError
from autograph.runtime.checks import check_value
from autograph.runtime.python_ints import as_python_number
from autograph.runtime.tracing import caller_location, has_tracer

_DOMAIN = "math domain error"


def _float(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(float)


def integral(value):
    """A traced number cast to the default integer dtype, as ``int()`` truncates it;
    a NaN or an infinity raises Python's error from the compiled call (a run-time
    check, ``checks.check_value``), where the cast alone would give 0 or the
    integer's limit."""
    value = jnp.asarray(value)
    if jnp.issubdtype(value.dtype, jnp.inexact):
        check_value(~jnp.isnan(value), ValueError, "cannot convert float NaN to integer")
        check_value(~jnp.isinf(value), OverflowError,
                    "cannot convert float infinity to integer")
    return value.astype(int)


def _unary(fn, domain=None):
    def traced(x):
        x = _float(x)
        if domain is not None:
            check_value(domain(x) | jnp.isnan(x), ValueError, _DOMAIN)
        return fn(x)
    return traced


def _log(x, base=None):
    x = _float(x)
    check_value((x > 0) | jnp.isnan(x), ValueError, _DOMAIN)
    if base is None:
        return jnp.log(x)
    base = _float(base)
    check_value((base > 0) | jnp.isnan(base), ValueError, _DOMAIN)
    return jnp.log(x) / jnp.log(base)


def _isqrt(n):
    n = jnp.asarray(n)
    if not jnp.issubdtype(n.dtype, jnp.integer):
        raise TypeError(f"'{n.dtype}' object cannot be interpreted as an integer")
    check_value(n >= 0, ValueError, "isqrt() argument must be nonnegative")
    n = n.astype(int)
    r = jnp.floor(jnp.sqrt(jnp.maximum(n, 0).astype(float))).astype(int)
    for _ in range(2):   # float rounding leaves the estimate at most one off each way
        r = jnp.where(r * r > n, r - 1, r)
        r = jnp.where((r + 1) * (r + 1) <= n, r + 1, r)
    return r


def _pow(x, y):
    x, y = _float(x), _float(y)
    bad = ((x < 0) & (jnp.floor(y) != y) & jnp.isfinite(y)) | ((x == 0) & (y < 0))
    check_value(~bad, ValueError, _DOMAIN)
    return jnp.power(x, y)


def _hypot(*coordinates):
    if len(coordinates) == 2:
        return jnp.hypot(_float(coordinates[0]), _float(coordinates[1]))
    return jnp.sqrt(sum((_float(c) ** 2 for c in coordinates), jnp.float32(0)))


def _dist(p, q):
    return jnp.sqrt(jnp.sum((_float(jnp.asarray(p)) - _float(jnp.asarray(q))) ** 2))


def _prod(iterable, *, start=1):
    if isinstance(iterable, jax.Array):
        return start * jnp.prod(iterable, axis=0)
    out = start
    for item in iterable:
        out = out * item
    return out


def _fsum(iterable):
    if isinstance(iterable, jax.Array):
        return jnp.sum(_float(iterable), axis=0)
    return sum((_float(item) for item in iterable), jnp.zeros((), float))


def _isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    a, b = _float(a), _float(b)
    diff = jnp.abs(a - b)
    close = (diff <= jnp.maximum(rel_tol * jnp.maximum(jnp.abs(a), jnp.abs(b)), abs_tol))
    return (a == b) | (close & jnp.isfinite(diff))


def _integer_fold(pairwise, empty):
    def fold(*integers):
        if not integers:
            return empty
        out = jnp.asarray(integers[0]).astype(int)
        for n in integers[1:]:
            out = pairwise(out, jnp.asarray(n).astype(int))
        return jnp.abs(out)
    return fold


def _copysign(x, y):
    return jnp.copysign(_float(x), _float(y))


def _fmod(x, y):
    x, y = _float(x), _float(y)
    check_value(~((y == 0) | jnp.isinf(x)) | jnp.isnan(x) | jnp.isnan(y), ValueError, _DOMAIN)
    return jnp.fmod(x, y)


def _atan2(y, x):
    return jnp.arctan2(_float(y), _float(x))


def _ldexp(x, i):
    return jnp.ldexp(_float(x), jnp.asarray(i).astype(int))


def _refused(name):
    def traced(*args, **kwargs):
        where = caller_location(3)
        raise StagingTypeError(
            f"math.{name}() of a traced value: its exact integer result grows past any "
            f"fixed-width integer, so it has no traced form. Call it on a Python int "
            f"(a static argument), or use jax.scipy.special.gammaln for its logarithm.",
            where.filename, where.lineno)
    return traced


# name -> what a traced call computes
_TRACED = {
    "sqrt": _unary(jnp.sqrt, lambda x: x >= 0),
    "exp": _unary(jnp.exp),
    "expm1": _unary(jnp.expm1),
    "exp2": _unary(jnp.exp2),
    "log": _log,
    "log2": _unary(jnp.log2, lambda x: x > 0),
    "log10": _unary(jnp.log10, lambda x: x > 0),
    "log1p": _unary(jnp.log1p, lambda x: x > -1),
    "sin": _unary(jnp.sin, lambda x: ~jnp.isinf(x)),
    "cos": _unary(jnp.cos, lambda x: ~jnp.isinf(x)),
    "tan": _unary(jnp.tan, lambda x: ~jnp.isinf(x)),
    "asin": _unary(jnp.arcsin, lambda x: jnp.abs(x) <= 1),
    "acos": _unary(jnp.arccos, lambda x: jnp.abs(x) <= 1),
    "atan": _unary(jnp.arctan),
    "sinh": _unary(jnp.sinh),
    "cosh": _unary(jnp.cosh),
    "tanh": _unary(jnp.tanh),
    "asinh": _unary(jnp.arcsinh),
    "acosh": _unary(jnp.arccosh, lambda x: x >= 1),
    "atanh": _unary(jnp.arctanh, lambda x: jnp.abs(x) < 1),
    "erf": _unary(special.erf),
    "erfc": _unary(special.erfc),
    "lgamma": _unary(special.gammaln, lambda x: (x > 0) | (jnp.floor(x) != x)),
    "gamma": _unary(special.gamma, lambda x: (x > 0) | (jnp.floor(x) != x)),
    "degrees": _unary(jnp.degrees),
    "radians": _unary(jnp.radians),
    "fabs": _unary(jnp.abs),
    "floor": lambda x: integral(jnp.floor(x)),
    "ceil": lambda x: integral(jnp.ceil(x)),
    "trunc": lambda x: integral(jnp.trunc(x)),
    "isnan": lambda x: jnp.isnan(x),
    "isinf": lambda x: jnp.isinf(x),
    "isfinite": lambda x: jnp.isfinite(x),
    "isqrt": _isqrt,
    "pow": _pow,
    "hypot": _hypot,
    "dist": _dist,
    "prod": _prod,
    "fsum": _fsum,
    "isclose": _isclose,
    "gcd": _integer_fold(jnp.gcd, 0),
    "lcm": _integer_fold(jnp.lcm, 1),
    "copysign": _copysign,
    "fmod": _fmod,
    "atan2": _atan2,
    "ldexp": _ldexp,
    "factorial": _refused("factorial"),
    "comb": _refused("comb"),
    "perm": _refused("perm"),
}
NAMES = tuple(name for name in _TRACED if hasattr(math, name))


def _operator(name):
    python = getattr(math, name)
    traced = _TRACED[name]

    def call(*args, **kwargs):
        if not has_tracer((args, kwargs)):
            return python(*args, **kwargs)
        return as_python_number(traced(*args, **kwargs))

    call.__name__ = call.__qualname__ = f"math_{name}"
    call.__doc__ = f"``math.{name}(...)``; traced arguments give its ``jnp`` counterpart."
    return call


OPERATORS = {f"math_{name}": _operator(name) for name in NAMES}
globals().update(OPERATORS)
__all__ = sorted(OPERATORS)
