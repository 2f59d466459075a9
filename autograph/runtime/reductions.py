"""Reductions and membership over traced values: ``any``/``all``/``sum``/``max``/
``min`` of a generator, ``in``, ``tuple.count``, ``sorted`` and ``.sort()``.

With Python values each is Python's own operation (same result, same laziness,
same errors). With traced values:

- ``any(x > 0 for x in xs)``, ``all([a, b])``: the items' truth values reduced
  with ``jnp.any``/``jnp.all`` (a Python item that decides the result decides it,
  as in Python).
- ``sum(f(i) for i in range(n) if c(i))``, ``max``, ``min``, ``any``, ``all`` over
  a range with a traced bound (or of the range itself): one staged loop
  (``fori_loop``) over the range; ``max``/``min`` of an empty one raise Python's
  ``ValueError`` from the compiled call.
- ``sum(1 for x in xs if abs(x) > t)`` (also ``any``, ``all``) with a traced
  ``if`` and an item the converter found free of changes: each item staged under
  its condition (``_masked_items``).
- ``x in (0, 1)``, ``x not in xs``: ``x == item`` for each item, reduced with
  ``jnp.any``; ``x in array`` of a traced 1-D array likewise; ``x in range(a, b, s)``
  its bounds and step checked arithmetically.
- ``(a, b).count(0)``: the number of items equal to it, a traced int.
- ``sorted(xs)`` of a traced 1-D array or a list of traced scalars: a list of the
  items in Python's order (``python_order``: floats compare with ``<`` only, so a
  NaN and ``-0.0`` stay where Python's sort leaves them; ``reverse=`` honoured;
  with ``key=``, the items gathered in the order of their keys).
- ``xs.sort()`` as a statement: a list of traced scalars is sorted in place; a
  traced array is refused (``.sort()`` of a JAX array returns a copy and leaves
  ``xs`` as it was, so the statement would do nothing).

The converter (``converters/builtin_functions.py``) makes a generator expression
that is the one argument of ``sum``/``max``/``min``/``any``/``all`` a
``generator_(item, iterable, condition)`` call (its loop variable a lambda's
parameter), so that a range with a traced bound can be reduced by a staged loop;
over anything else ``generator_`` is the generator Python would make.
"""

from __future__ import annotations

import builtins
import itertools

import jax
import jax.numpy as jnp
from jax import lax

from autograph.errors import ConversionError, StagingTypeError
from autograph.runtime import conditionals, paths, python_ints
from autograph.runtime.checks import check_value
from autograph.runtime.loops import TracedRange
from autograph.runtime.tracing import Tracer, caller_location, describe, is_tracer
from autograph.runtime.unstaged import comprehension_test


class StagedGenerator:
    """``(item(i) for i in range if condition(i))`` over a range with a traced bound:
    a reduction stages it as a loop; Python iteration of it is refused."""

    def __init__(self, item, traced_range, condition=None):
        self.item, self.range, self.condition = item, traced_range, condition

    def __iter__(self):
        raise _refusal("a generator over a range with a traced bound",
                       "Reduce it with sum(), max(), min(), any() or all() (each stages a "
                       "loop), or write a for loop")


def generator_(item, iterable, condition=None, masked=None, unpack=None):
    """``(item(x) for x in iterable if condition(x))``: that generator, except over a
    range with a traced bound (a ``StagedGenerator``). ``masked``: the reduction
    (``"sum"``, ``"any"``, ``"all"``) that consumes it, where the converter found
    ``item`` free of changes: an item whose condition is traced is then kept as
    what it adds to that reduction, nothing where the condition is false
    (``_masked_items``). ``unpack``: the number of names of a ``for a, b in ...``
    target; each element is unpacked once, as Python's ``for`` unpacks it, and
    ``item`` and ``condition`` take the names."""
    if isinstance(iterable, TracedRange):
        if unpack is not None:
            raise _refusal("a generator that unpacks (`for a, b in ...`) the ints of a "
                           "range with a traced bound", "Iterate over the range itself")
        return StagedGenerator(item, iterable, condition)
    iterator = iter(iterable)   # (a generator expression takes it at once, as here)
    if unpack is not None:
        iterator = (_unpacked(x, unpack) for x in iterator)
        item = _spread(item)
        condition = None if condition is None else _spread(condition)
    if condition is None:
        return (item(x) for x in iterator)
    if masked is not None:
        return _masked_items(item, iterator, condition, masked)
    return (item(x) for x in iterator if comprehension_test(condition(x)))


def _unpacked(value, count):
    """``value`` unpacked into ``count`` names, with Python's errors."""
    try:
        iterator = iter(value)
    except TypeError:
        raise TypeError(f"cannot unpack non-iterable {type(value).__name__} object") from None
    values = tuple(itertools.islice(iterator, count + 1))
    if len(values) > count:
        raise ValueError(f"too many values to unpack (expected {count})")
    if len(values) < count:
        raise ValueError(f"not enough values to unpack (expected {count}, got {len(values)})")
    return values


def _spread(fn):
    return lambda values: fn(*values)


def _masked_items(item, iterator, condition, reduction):
    """The items a ``reduction`` of ``(item(x) for x in iterator if condition(x))``
    takes: Python's where the condition is a Python value; where it is traced, for
    ``sum`` the staged ``item(x) if c else 0`` (a ``lax.cond``: the gradient is the
    kept item's, and ``jnp.where``'s select under ``vmap`` gave NaN where a dropped
    item's derivative is infinite), for ``any``/``all`` the item computed whatever the
    condition and masked by it (``c & item``, ``~c | item``), its checks acting only
    where it is kept (``paths.on_path``)."""
    for x in iterator:
        keep = condition(x)
        if not is_tracer(keep):
            if keep:
                yield item(x)
            continue
        if jnp.ndim(keep) != 0:
            raise _refusal(f"a generator whose `if` is a traced {describe(keep)}",
                           "Reduce the condition to one value (jnp.any/jnp.all)")
        keep = _truth(keep)
        try:
            if reduction == "sum":   # a staged `if`: its gradient is the kept item's
                yield conditionals.if_exp(keep, lambda x=x: item(x), lambda: 0)
                continue
            with paths.on_path(lambda keep=keep: keep):   # its checks act where kept
                value = item(x)
        except Exception as error:
            where = caller_location()
            raise ConversionError(
                "the `if` of this generator is traced, so each item is computed whatever "
                f"it decides, and computing one raised {type(error).__name__}: {error}. "
                "Write a for loop with an `if` (autograph stages it), or make the item "
                "safe for every input.", where.filename, where.lineno) from error
        if reduction == "any":
            yield keep & _truth(value)
        else:
            yield ~keep | _truth(value)


def is_staged_iterable(value) -> bool:
    """Whether a reduction over ``value`` must be a staged loop."""
    return isinstance(value, (StagedGenerator, TracedRange))


def reduce_staged(kind, iterable, start=0, default=None, has_default=False):
    """``sum``/``max``/``min``/``any``/``all`` (``kind``) of a ``StagedGenerator`` or
    ``TracedRange`` as one staged loop over the range."""
    if isinstance(iterable, TracedRange):
        iterable = StagedGenerator(lambda i: i, iterable)
    rng, item, condition = iterable.range, iterable.item, iterable.condition
    count = rng.trip_count()
    start_index, step = jnp.asarray(rng.start), jnp.asarray(rng.step)

    def at(k):
        i = start_index + k * step
        value = jnp.asarray(item(i))
        keep = jnp.asarray(True) if condition is None else _truth(condition(i))
        return value, keep

    # Needed: the item's shape decides the refusal and the loop's carry (the items
    # are computed once more inside the loop; the item expression is not a body).
    shape = jax.eval_shape(lambda: at(jnp.asarray(0))[0])
    if shape.shape != ():
        raise _refusal(f"{kind}() over items of shape {shape.shape}",
                       f"Reduce each item to a scalar first, or use jnp.{kind}")
    if kind in ("any", "all"):
        def body(k, acc):
            value, keep = at(k)
            if kind == "any":
                return acc | (keep & _truth(value))
            return acc & (~keep | _truth(value))
        return lax.fori_loop(0, count, body, jnp.asarray(kind == "all"))
    if kind == "sum":
        dtype = jnp.result_type(shape.dtype, start)
        initial = jnp.asarray(start, dtype)

        def body(k, acc):
            value, keep = at(k)
            return acc + jnp.where(keep, value, 0).astype(dtype)
        return lax.fori_loop(0, count, body, initial)
    better = jnp.greater if kind == "max" else jnp.less

    def body(k, carry):
        best, found = carry
        value, keep = at(k)
        take = keep & (~found | better(value, best))
        return jnp.where(take, value, best), found | keep
    best, found = lax.fori_loop(0, count, body,
                                (jnp.zeros((), shape.dtype), jnp.asarray(False)))
    if has_default:
        return jnp.where(found, best, default)
    check_value(found, ValueError, _EMPTY[kind])
    return best


def _empty_message(reduce) -> str:
    try:
        reduce([])
    except ValueError as error:
        return str(error)
    raise AssertionError("unreachable")   # pragma: no cover


_EMPTY = {"max": _empty_message(max), "min": _empty_message(min)}


def _truth(value):
    value = jnp.asarray(value)
    return value if value.dtype == bool else value != 0


def any_(iterable, /):
    """``any(iterable)``; traced items are reduced with ``jnp.any``."""
    return _any_all(iterable, True)


def all_(iterable, /):
    """``all(iterable)``; traced items are reduced with ``jnp.all``."""
    return _any_all(iterable, False)


def _any_all(iterable, is_any):
    name = "any" if is_any else "all"
    if is_staged_iterable(iterable):
        return reduce_staged(name, iterable)
    if is_tracer(iterable):
        if jnp.ndim(iterable) != 1:
            raise _refusal(f"{name}() over a traced {describe(iterable)}",
                           f"Use jnp.{name}(x) (or reduce one axis: jnp.{name}(x, axis=0))")
        return jnp.any(_truth(iterable)) if is_any else jnp.all(_truth(iterable))
    traced = []
    for item in iterable:
        if isinstance(item, Tracer):
            if jnp.ndim(item) != 0:
                raise _refusal(f"{name}() over an item that is a traced "
                               f"{describe(item)}", f"Reduce each item with jnp.{name} first")
            traced.append(_truth(item))
        elif bool(item) is is_any:     # this item decides, as it does in Python
            return is_any
    if not traced:
        return not is_any
    stacked = jnp.stack(traced)
    return jnp.any(stacked) if is_any else jnp.all(stacked)


def in_(item, container):
    """``item in container``; a traced item or items compare with ``==``, reduced
    with ``jnp.any``."""
    if isinstance(container, (tuple, list)):
        if is_tracer(item) or any(isinstance(x, Tracer) for x in container):
            return _contains(item, container)
    elif isinstance(container, range) and is_tracer(item) and jnp.ndim(item) == 0:
        start, stop, step = container.start, container.stop, container.step
        inside = ((item >= start) & (item < stop) if step > 0
                  else (item <= start) & (item > stop))
        return inside & ((item - start) % step == 0)
    elif is_tracer(container) and not isinstance(item, (str, bytes)):
        if jnp.ndim(container) != 1:
            raise _refusal(f"`in` over a traced {describe(container)}",
                           "Use jnp.any(x == item) over the axis you mean")
        return jnp.any(container == item)
    return item in container


def not_in(item, container):
    """``item not in container``."""
    found = in_(item, container)
    return jnp.logical_not(found) if isinstance(found, Tracer) else not found


def _contains(item, container):
    found = []
    for x in container:
        if x is item:
            return True
        equal = x == item
        if isinstance(equal, Tracer):
            if jnp.ndim(equal) != 0:
                raise _refusal(f"`in` comparing a traced {describe(equal)}",
                               "Compare scalars, or use jnp.any(...) over arrays")
            found.append(equal)
        elif equal:
            return True
    return jnp.any(jnp.stack(found)) if found else False


def count_(container, value):
    """``container.count(value)`` of a tuple or list written in the code; traced
    items or value give the traced number of equal items (a Python int of the
    program: ``python_ints``)."""
    if not (is_tracer(value) or any(isinstance(x, Tracer) for x in container)):
        return container.count(value)
    total = 0
    for x in container:
        equal = x is value or (x == value)
        if isinstance(equal, Tracer) and jnp.ndim(equal) != 0:
            raise _refusal(f"count() of items compared by == into a {describe(equal)}",
                           "Count with jnp.sum(jnp.all(array == value, axis=...))")
        total = total + (jnp.asarray(equal).astype(int) if isinstance(equal, Tracer)
                         else int(bool(equal)))
    python_ints.mark(total)
    return total


def count_method(method, value):
    """``xs.count(value)`` (``method``: the bound ``xs.count``): ``count_`` where ``xs``
    is a list or tuple (its traced items compared to the value give a traced
    count, where Python's count asked ``bool()`` of a traced ``==``), else the call.

    Before: ``n = xs.count(v)``; after:
    ``n = ag__.count_method(ag__.converted_call(xs.count), v)``."""
    owner = getattr(method, "__self__", None)
    if type(owner) in (list, tuple) and getattr(method, "__name__", None) == "count":
        return count_(owner, value)
    return method(value)


def sorted_(iterable, /, *, key=None, reverse=False):
    """``sorted(iterable, key=key, reverse=reverse)``; a traced 1-D array or a list of
    traced scalars gives the list of its items in Python's order (``python_order``).
    With a ``key`` giving traced scalars, the items (scalars, or arrays or pytrees
    of one shape) are gathered in the order Python's stable sort gives their keys
    (``python_permutation``); ``key`` is called once per item, in order, as Python
    calls it."""
    if key is not None:
        return _sorted_by_key(iterable, key, reverse)
    values = _sortable(iterable, "sorted")
    if values is None:
        return builtins.sorted(iterable, reverse=reverse)
    return list(python_order(values, reverse))


def _sorted_by_key(iterable, key, reverse):
    if is_tracer(iterable) and jnp.ndim(iterable) == 0:
        raise _refusal(f"sorted() of a traced {describe(iterable)}",
                       "Sort a 1-D array, or use jnp.sort(x, axis=...)")
    items = list(iterable)
    keys = [key(item) for item in items]
    if not any(isinstance(k, Tracer) for k in keys):
        return [items[i] for i in builtins.sorted(range(len(items)), key=keys.__getitem__,
                                                   reverse=reverse)]
    if any(jnp.ndim(k) != 0 for k in keys):
        raise _refusal("sorted(..., key=...) whose key gives traced arrays, not scalars",
                       "Make the key one number per item")
    order = python_permutation(jnp.stack([jnp.asarray(k) for k in keys]), reverse)
    try:
        stacked = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *items)
    except (TypeError, ValueError) as error:
        raise _refusal("sorted(..., key=...) of items of different shapes or kinds, "
                       "with traced keys", "Sort items of one shape") from error
    gathered = jax.tree_util.tree_map(lambda leaf: leaf[order], stacked)
    return [jax.tree_util.tree_map(lambda leaf, k=k: leaf[k], gathered)
            for k in range(len(items))]


def sort_(target, /, *args, **kwargs):
    """``target.sort(...)`` as a statement: a list of traced scalars is sorted in
    place; a traced array is refused (its ``.sort()`` returns a sorted copy and
    leaves ``target`` as it was, so the statement does nothing)."""
    if is_tracer(target):
        raise _refusal("`.sort()` of a traced JAX array as a statement: JAX arrays "
                       "cannot change, so it returns a sorted copy and this line leaves "
                       "the array as it was", "Write `xs = jnp.sort(xs)`")
    if isinstance(target, list) and (kwargs.get("key") is not None or any(
            isinstance(x, Tracer) for x in target)):
        target[:] = sorted_(target, **kwargs)
        return None
    return target.sort(*args, **kwargs)


def _sortable(iterable, name):
    """The traced 1-D array to sort, or None when Python sorts ``iterable``."""
    if is_tracer(iterable):
        if jnp.ndim(iterable) != 1:
            raise _refusal(f"{name}() of a traced {describe(iterable)}",
                           "Sort a 1-D array, or use jnp.sort(x, axis=...)")
        values = iterable
    elif isinstance(iterable, (list, tuple)) and any(isinstance(x, Tracer) for x in iterable):
        if any(jnp.ndim(x) != 0 for x in iterable):
            raise _refusal(f"{name}() of a list holding traced arrays",
                           "Sort scalars, or stack them and use jnp.sort")
        values = jnp.stack([jnp.asarray(x) for x in iterable])
    else:
        return None
    return values


# Below this many items Python's sort is one binary insertion sort after its first
# run (CPython's ``listobject.c``: ``count_run``, then ``binarysort``), which
# ``python_order`` follows step by step.
_MIN_MERGE = 64


def python_order(values, reverse=False):
    """The traced 1-D array ``values`` in the order Python's ``sorted`` gives its
    items (``reverse``: reversed, sorted, reversed again, as Python keeps equal
    items in order). Integers: ``jnp.sort`` (equal items are the same value).
    Floats compare with ``<`` only, as Python's do: ``-0.0`` and ``0.0`` keep their
    order, and a NaN (no comparison with it holds) stays where Python's algorithm
    leaves it (``[3.0, nan, 1.0]`` is sorted already); below 64 items the staged
    sort is Python's own (``_insertion_order``); from 64 items on it is a stable
    sort, and a NaN among them raises ``ValueError`` from the compiled call."""
    if not jnp.issubdtype(values.dtype, jnp.floating) and \
            not jnp.issubdtype(values.dtype, jnp.complexfloating):
        ordered = jnp.sort(values)
        return ordered[::-1] if reverse else ordered
    return values[python_permutation(values, reverse)]


def python_permutation(keys, reverse=False):
    """The indices of the traced 1-D array ``keys`` in the order Python's ``sorted``
    puts them (its sort is stable: equal keys keep their order), as
    ``python_order`` orders values."""
    if jnp.issubdtype(keys.dtype, jnp.complexfloating):
        raise _refusal("sorted() of traced complex numbers (Python's `<` refuses them)",
                       "Sort by jnp.real or jnp.abs with jnp.argsort")
    n = keys.shape[0]
    index = jnp.arange(n)
    if reverse:
        keys, index = keys[::-1], index[::-1]
    if not jnp.issubdtype(keys.dtype, jnp.floating):
        order = index[jnp.argsort(keys, stable=True)]
    elif n < _MIN_MERGE:
        order = _insertion_order(keys, index)
    else:
        check_value(~jnp.any(jnp.isnan(keys)), ValueError,
                    f"sorted() of {n} traced floats holding a NaN: from {_MIN_MERGE} "
                    "items on, Python's order around a NaN follows its merges, which "
                    "the staged sort does not")
        # `<` does not tell -0.0 from 0.0: a stable sort of keys that do not either
        order = index[jnp.argsort(jnp.where(keys == 0, jnp.zeros_like(keys), keys),
                                  stable=True)]
    return order[::-1] if reverse else order


def _insertion_order(a, carried):
    """CPython's sort of fewer than 64 items, staged: the first run (ascending, or
    strictly descending and then reversed), then each later item put in place by
    a binary search with ``<``. Returns ``carried`` (an array of ``a``'s length)
    moved as ``a``'s items are."""
    n = a.shape[0]
    if n < 2:
        return carried
    index = jnp.arange(n)
    below = a[1:] < a[:-1]      # below[i - 1]: a[i] < a[i - 1]
    descending = below[0]
    run = 1 + jnp.where(descending, jnp.sum(jnp.cumprod(below.astype(jnp.int32))),
                        jnp.sum(jnp.cumprod((~below).astype(jnp.int32))))
    source = jnp.where(descending, jnp.where(index < run, run - 1 - index, index), index)
    a, carried = a[source], carried[source]
    for start in range(2, n):
        pivot, low, high = a[start], jnp.int32(0), jnp.int32(start)
        for _ in range(start.bit_length()):
            searching = low < high
            middle = low + ((high - low) >> 1)
            left = pivot < a[middle]
            high = jnp.where(searching & left, middle, high)
            low = jnp.where(searching & ~left, middle + 1, low)
        moved = (index > low) & (index <= start)
        source = jnp.where(index == low, start, jnp.where(moved, index - 1, index))
        source = jnp.where(start >= run, source, index)
        a, carried = a[source], carried[source]
    return carried


def _refusal(what, fix):
    where = caller_location(3)
    return StagingTypeError(f"{what}. {fix}.", where.filename, where.lineno)


__all__ = ["StagedGenerator", "all_", "any_", "count_", "count_method", "generator_",
           "in_", "not_in", "sort_", "sorted_"]
