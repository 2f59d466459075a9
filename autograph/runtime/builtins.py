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
``min``/``max`` with a ``key=`` giving traced values pick their item by
Python's rule too (``_pick_by_key``). Where a builtin cannot give a traced result
(``int`` of a vector, ``min`` with ``key=`` over a traced range), the error names the
user's line.
"""

from __future__ import annotations

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from autograph.errors import StagingTypeError
from autograph.runtime import lists, python_ints
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
    if kwargs.get("key") is not None and not _staged_one(args):
        return _pick_by_key("min", args, kwargs)
    if not has_tracer((args, kwargs)) and not _staged_one(args):
        return min(*args, **kwargs)
    return _extremum("min", _python_min, _first_then_nanmin, args, kwargs)


def max_(*args, **kwargs):
    """``max(*args, **kwargs)``; traced values give their elementwise maximum."""
    args = _listed(args)
    if kwargs.get("key") is not None and not _staged_one(args):
        return _pick_by_key("max", args, kwargs)
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
    where JAX's own ``round`` gives 0 or the integer's limit. A weakly typed scalar
    (a Python number of the program) rounds into a Python number, an array into an
    array (JAX's ``round`` of an array gives an array)."""
    if not has_tracer((number, ndigits)):
        return round(number, ndigits)
    value = jnp.asarray(number)
    if ndigits is not None or not jnp.issubdtype(value.dtype, jnp.inexact):
        out = round(number, ndigits)
    else:
        out = integral(jnp.round(value))
    return python_ints.as_python_number(out) if jax.typeof(value).weak_type else out


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


def _pick_by_key(name, args, kwargs):
    """``min``/``max`` with ``key=``, Python's algorithm step by step: the key called
    once per item as the items are taken, a later item picked only if its key
    compares smaller (larger), so ties keep the first and a NaN key is never picked
    after the first. Where a comparison is traced the pick is a select, and the
    items picked among must be alike (numbers of one Python type, arrays of one
    shape and dtype, or pytrees of such leaves):

        max(range(len(xs)), key=lambda i: xs[i])   # the first index of the largest xs[i]
    """
    builtin = min if name == "min" else max
    if not args or (len(args) > 1 and "default" in kwargs):
        return builtin(*args, **kwargs)   # Python's TypeError
    key = kwargs["key"]
    iterator = iter(args[0] if len(args) == 1 else args)
    picked = next(iterator, _EMPTY)
    if picked is _EMPTY:
        return builtin((), **kwargs)      # the default, or Python's ValueError
    best = key(picked)
    for item in iterator:
        k = key(item)
        later = k < best if name == "min" else k > best
        if not is_tracer(later):
            if later:
                picked, best = item, k
            continue
        if jnp.ndim(later) != 0:
            _fail(name, f"{name}(..., key=...) whose key gives traced arrays, not "
                  "scalars: which item it picks is ambiguous. Make the key one number "
                  "per item.", depth=4)
        kinds = _leaf_kinds([picked, item])
        if kinds is None:
            _fail(name, f"{name}(..., key=...) with traced keys picks its item when the "
                  "program runs, so the items must be alike: numbers of one type, arrays "
                  "of one shape and dtype, or pytrees of such leaves; these differ. Pick "
                  f"an index instead ({name}(range(len(items)), key=...)) and use it "
                  "where it is needed.", depth=4)
        best = jnp.where(later, k, best)
        picked = jax.tree_util.tree_map(functools.partial(jnp.where, later), item, picked)
        for leaf, kind in zip(jax.tree_util.tree_leaves(picked), kinds, strict=True):
            if kind is not None:
                python_ints.note_as(leaf, kind)
    return picked


_EMPTY = object()
def _leaf_kinds(items):
    """Per leaf of the items' one pytree structure, the Python number type the items
    all stand for there (None where they are arrays of one shape and dtype, or where
    weakly typed scalars of the kind do not say); None where the items are not alike."""
    flat = [jax.tree_util.tree_flatten(item) for item in items]
    first_tree = flat[0][1]
    if any(tree != first_tree for _, tree in flat):
        return None
    kinds = []
    for column in zip(*(leaves for leaves, _ in flat), strict=True):
        numbers = {type(leaf) for leaf in column if type(leaf) in python_ints.NUMBER_TYPES}
        if len(numbers) == 1:
            kind = next(iter(numbers))
            traced = [leaf for leaf in column if type(leaf) is not kind]
            if not all(is_tracer(leaf) and jnp.ndim(leaf) == 0
                       and python_ints.weak_of_kind(leaf, kind) for leaf in traced):
                return None
            known = all(python_ints.python_type(leaf) is kind for leaf in traced)
            kinds.append(kind if known else None)
        elif not numbers and all(hasattr(leaf, "dtype") for leaf in column) and len(
                {(jnp.shape(leaf), leaf.dtype) for leaf in column}) == 1:
            kinds.append(None)
        else:
            return None
    return kinds


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
        return python_ints.as_python_number(jnp.asarray(value) != 0)
    if python_type is int:
        return python_ints.as_python_number(integral(value))
    return python_ints.as_python_number(jnp.asarray(value).astype(python_type))



def _fail(name, message, depth=3):
    where = caller_location(depth)
    raise StagingTypeError(message, where.filename, where.lineno)
