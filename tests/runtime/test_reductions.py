"""Reductions and membership: any/all, sum/max/min of generators and traced ranges,
`in`, tuple.count, sorted and .sort(), Python's for Python values, staged when traced."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check

SEEN = []


def perfect(n):
    return sum(i for i in range(1, n) if n % i == 0) == n


def triangular(n):
    return sum(range(n + 1))


def largest_residue(n):
    return max(i * i % 7 for i in range(n))


def smallest_above(n):
    return min(range(2, n), default=-1)


def signs(a, b, c):
    return (any(v < 0 for v in (a, b, c)), all([a > 0, b > 0]), any([a == 0, b == 0]),
            all(v != 0 for v in (a, b, c)))


def membership(a, b):
    return (a in (0, 1), b not in [2, 3], (a, b, 0).count(0), [a, b].count(b),
            a in range(0, 7, 2), b in range(5, -1, -3), a not in range(3))


def in_array(x, xs):
    return x in xs


def sorted_ends(xs):
    ys = sorted(xs)
    zs = sorted(xs, reverse=True)
    return ys[0], ys[-1], zs[0]


def sorted_scalars(a, b, c):
    items = [a, b, c]
    items.sort()
    return items[0], items[1], items[2]


def sort_an_array(xs):
    xs.sort()
    return xs


def divisor_count(n):
    count = 0
    for k in range(1, 6):
        if any(k * j == n for j in range(1, n + 1)):
            count += 1
    return count


def lazy_any(a, b):
    return any(SEEN.append(v) or v > 0 for v in (a, b))


def python_containers(key):
    table = {"a": 1, "b": 2}
    return key in table, key not in "xyz", key in {"a"}


@pytest.mark.parametrize("n", [1, 6, 12, 28, 496])
def test_a_generator_over_a_traced_range_is_a_staged_loop(n):
    check(perfect, n)


@pytest.mark.parametrize("n", [0, 1, 10])
def test_reductions_of_ranges_with_a_traced_bound(n):
    check(triangular, n)
    if n > 2:
        check(smallest_above, n)
    if n > 0:
        check(largest_residue, n)


def test_max_of_an_empty_traced_range_raises_pythons_error():
    with pytest.raises(ValueError) as python:
        largest_residue(0)
    with pytest.raises(ValueError) as compiled:
        autograph.to_graph(largest_residue)(jnp.int32(0))
    assert str(compiled.value) == str(python.value)
    assert autograph.to_graph(smallest_above)(jnp.int32(2)) == -1


@pytest.mark.parametrize("args", [(1, -2, 0), (0, 2, 3), (1, 2, 3), (-1, -1, -1)])
def test_any_all_over_traced_comparisons(args):
    check(signs, *args)


@pytest.mark.parametrize("args", [(0, 2), (1, 5), (7, 3), (0, 0), (6, -1), (4, 8), (-2, 2)])
def test_membership_and_count(args):
    check(membership, *args)


def test_in_a_traced_array():
    check(in_array, 3, np.array([1, 2, 3]))
    check(in_array, 4, np.array([1, 2, 3]))


def test_sorted_of_an_array_and_of_traced_scalars():
    check(sorted_ends, np.array([3.0, 1.0, 2.0]))
    check(sorted_scalars, 3.0, 1.0, 2.0)


def test_an_arrays_sort_statement_is_refused_not_silently_ignored():
    with pytest.raises(ConversionError, match="jnp.sort") as raised:
        autograph.to_graph(sort_an_array)(jnp.array([3.0, 1.0]))
    assert raised.value.lineno == sort_an_array.__code__.co_firstlineno + 1
    # A NumPy array sorts in place in Python, as written.
    xs = np.array([3.0, 1.0, 2.0])
    autograph.convert(sort_an_array)(xs)
    assert list(xs) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("n", [1, 4, 6, 7])
def test_any_of_a_generator_inside_a_staged_loop(n):
    check(divisor_count, n)


def test_python_values_keep_short_circuits_and_containers():
    SEEN.clear()
    assert lazy_any(2, 3) is True and SEEN == [2]
    SEEN.clear()
    assert autograph.convert(lazy_any)(2, 3) is True and SEEN == [2]
    check(python_containers, "a", compiled=False)
    check(python_containers, "z", compiled=False)


def outliers(xs, mean, spread):
    return sum(1 for x in xs if abs(x - mean) / spread > 1.5)


def masked_any_all(xs, t):
    return any(x > 2 for x in xs if x > t), all(x < 3 for x in xs if x > t)


def kept_squares(x, t):
    return sum(v * v for v in x if v > t)


def log_sum(xs, t):
    return sum(math.log(x) + int(x) for x in xs if x > t)


def logged_sum(xs, t):
    log = []
    return sum(log.append(x) or x for x in xs if x > t), log


def listed_counts(xs, t):
    # a list comprehension summed, counted by len, or tested by any/all: the masked
    # generator's forms
    kept = len([x for x in xs if x > t])
    return (kept, sum([x * x for x in xs if x > t]), sum([abs(x) for x in xs if x != t], 1.0),
            any([x > 2 for x in xs if x > t]), all([x < 3 for x in xs if x > t]))


def paired(xs, ws):
    # a `for a, b in ...` target: zip and enumerate, summed, counted, tested
    return (sum(w * x for w, x in zip(ws, xs, strict=True) if x > 0),
            sum(i * x for i, x in enumerate(xs) if x < w_min(ws)),
            len([1 for a, b in zip(xs, xs[1:], strict=False) if a < b]),
            any(x > w for x, w in zip(xs, ws, strict=True) if w > 0))


def w_min(ws):
    return min(ws)


def unpacks_wrongly(rows):
    return sum(a for a, b in rows if a > 0)


def listed_with_effects(xs, t):
    log = []
    return len([log.append(x) for x in xs if x > t]), log


def reciprocal_sum(t):
    return sum(1 / v for v in [1.0, 0.0, 2.0] if v > t)


@pytest.mark.parametrize("xs, t", [([1.0, 1.0, 1.0, 10.0], 0.5), ([2.0, 2.0], 3.0),
                                   ([1.0, 3.0, 4.0], 2.0), ([1.0, 3.0, 4.0], 5.0)])
def test_a_generator_whose_if_is_traced_is_masked_for_sum_any_all(xs, t):
    check(outliers, xs, 2.0, 1.0)
    check(masked_any_all, xs, t)
    check(kept_squares, jnp.asarray(xs), t, vmap=[xs, [2 * x for x in xs]])


@pytest.mark.parametrize("xs, t", [([1.0, 1.0, 1.0, 10.0], 0.5), ([2.0, 2.0], 3.0),
                                   ([1.0, 3.0, 4.0], 2.0), ([], 0.0)])
def test_a_list_comprehension_whose_if_is_traced_is_masked_for_sum_len_any_all(xs, t):
    check(listed_counts, xs, t)
    if xs:
        check(listed_counts, jnp.asarray(xs), t)


@pytest.mark.parametrize("xs, ws", [([1.0, -2.0, 3.0], [0.5, 2.0, -1.0]),
                                    ([-1.0, -2.0, -3.0], [1.0, 1.0, 1.0])])
def test_a_generator_that_unpacks_its_items_is_masked_too(xs, ws):
    check(paired, xs, ws)
    check(paired, jnp.asarray(xs), jnp.asarray(ws))
    assert ("ag__.generator_(lambda w, x: w * x, zip(ws, xs, strict=True), lambda w, x: x > 0, "
            "unpack=2, "
            "masked='sum')") in autograph.to_code(paired)


@pytest.mark.parametrize("rows", [[(1.0, 2.0, 3.0)], [(1.0,)], [1.0]])
def test_unpacking_errors_are_pythons(rows):
    with pytest.raises((ValueError, TypeError)) as original:
        unpacks_wrongly(rows)
    with pytest.raises(original.type) as converted:
        autograph.convert(unpacks_wrongly)(rows)
    assert str(converted.value) == str(original.value)


def test_a_list_comprehension_with_effects_is_refused_not_masked():
    assert autograph.convert(listed_with_effects)([1.0, 3.0], 2.0) == (1, [3.0])
    assert "masked" not in autograph.to_code(listed_with_effects)
    with pytest.raises(ConversionError, match="`if` of this comprehension") as info:
        autograph.to_graph(listed_with_effects)(jnp.asarray([1.0, 3.0]), 2.0)
    assert f"{__file__}:{listed_with_effects.__code__.co_firstlineno + 2}" in str(info.value)


def test_a_masked_items_checks_act_only_where_it_is_kept():
    # math.log's domain check and int()'s NaN check: Python never computes the
    # dropped items, so their errors must not fire; a kept item's does.
    check(log_sum, [1.0, -1.0, float("nan"), 2.5], 0.0)
    check(log_sum, [2.0, 3.0], 0.0, vmap=[[1.0, -1.0], [2.0, 3.0]])
    with pytest.raises(ValueError, match="math domain error"):
        autograph.to_graph(log_sum)(jnp.asarray([1.0, -1.0]), -5.0)


def reciprocals(xs):
    return sum(1 / x for x in xs if x != 0)


def test_a_masked_sum_has_the_kept_items_gradient():
    import jax
    grad = jax.grad(autograph.convert(kept_squares))(jnp.asarray([1.0, -2.0, 3.0]), 0.0)
    np.testing.assert_allclose(grad, [2.0, 0.0, 6.0])
    # A dropped item whose derivative is infinite: 0, not NaN, under vmap too.
    xs = jnp.asarray([[1.0, 0.0, 2.0], [0.0, -1.0, 4.0]])
    grads = jax.vmap(jax.grad(autograph.convert(reciprocals)))(xs)
    np.testing.assert_allclose(grads, [[-1.0, 0.0, -0.25], [0.0, -1.0, -0.0625]])


def test_a_masked_item_that_changes_something_or_raises_is_refused():
    # Python runs them; staged, each item would be computed whatever its `if` says.
    assert autograph.convert(logged_sum)([1.0, 3.0], 2.0) == (3.0, [3.0])
    assert autograph.convert(reciprocal_sum)(0.5) == reciprocal_sum(0.5) == 1.5
    for fn, args, line, match in [
            (logged_sum, ([1.0, 3.0], 2.0), 2, "`if` of this comprehension"),
            (reciprocal_sum, (0.5,), 1, "computing one raised ZeroDivisionError")]:
        with pytest.raises(ConversionError, match=match) as info:
            autograph.to_graph(fn)(*args)
        assert f"{__file__}:{fn.__code__.co_firstlineno + line}" in str(info.value)


def test_generated_code():
    code = autograph.to_code(perfect)
    assert ("ag__.generator_(lambda i: i, ag__.range_(1, n), lambda i: n % i == 0, "
            "masked='sum')") in code
    assert "masked" not in autograph.to_code(logged_sum)
    assert ("ag__.sum_(ag__.generator_(lambda x: 1, xs, lambda x: x > t, masked='sum'))"
            in autograph.to_code(listed_counts))
    assert "ag__.in_(a, (0, 1))" in autograph.to_code(membership)


def sorted_three(a, b, c):
    return sorted([a, b, c]), sorted([a, b, c], reverse=True)


@pytest.mark.parametrize("values", [
    (3.0, float("nan"), 1.0),      # sorted already for Python: no `<` holds with NaN
    (float("nan"), 2.0, 1.0),
    (0.0, -0.0, -1.0),             # -0.0 == 0.0: kept in order
    (1.0, 1.0, float("nan")),
])
def test_sorted_of_traced_floats_keeps_pythons_order_for_nan_and_signed_zeros(values):
    expected = sorted_three(*values)
    got = autograph.to_graph(sorted_three)(*values)
    for want, have in zip(expected, got, strict=True):
        assert [repr(v) for v in want] == [repr(float(v)) for v in have]


def test_sorted_of_many_traced_floats_with_a_nan_raises_when_run():
    def f(x):
        return sorted([x * 0 + i for i in range(70)] + [x])

    with pytest.raises(Exception, match="holding a NaN"):
        jax.block_until_ready(autograph.to_graph(f)(float("nan")))
    assert [float(v) for v in autograph.to_graph(f)(-0.5)][:2] == [-0.5, 0.0]


def by_magnitude(xs):
    return sorted(xs, key=abs)


def by_second(pairs):
    return sorted(pairs, key=lambda p: p[1], reverse=True)


def rows_by_sum(m):
    return sorted(m, key=lambda r: r.sum())


def sorted_in_place_by_key(a, b, c):
    xs = [a, b, c]
    xs.sort(key=lambda v: -v)
    return xs


def by_looked_up_key(a, b, c):
    return sorted([1, 2, 3], key=lambda i: [a, b, c][i - 1])


@pytest.mark.parametrize("fn, args", [
    (by_magnitude, ([3.0, -1.0, 1.0, -0.0, 0.0, 2.0],)),
    (by_magnitude, ([3, -1, 2, 1],)),
    (by_second, ([(1.0, 2.0), (3.0, 2.0), (0.0, 5.0)],)),
    (rows_by_sum, (jnp.asarray([[3.0, 1.0], [0.0, 1.0], [2.0, -5.0]]),)),
    (sorted_in_place_by_key, (1.0, 3.0, 2.0)),
    (by_looked_up_key, (3.0, float("nan"), 1.0)),   # a NaN key stays where Python's is
    (by_looked_up_key, (2.0, 2.0, 1.0)),            # equal keys keep their order
])
def test_sorted_by_a_key_of_traced_values_is_pythons_order(fn, args):
    check(fn, *args)


def test_a_key_is_called_once_per_item_in_order():
    calls = []

    def key(v):
        calls.append(1)
        return -v

    def sort_them(a, b):
        return sorted([a, b, a + b], key=key)

    autograph.to_graph(sort_them)(1.0, 2.0)
    assert len(calls) == 3


def counted_by_name(a, b):
    xs = [a, b, a]
    ys = (1, a)
    return xs.count(a), xs.count(b), ys.count(1), "abca".count("a")


@pytest.mark.parametrize("args", [(1.0, 2.0), (2.0, 2.0), (0.0, 1.0)])
def test_count_of_a_list_held_by_a_name(args):
    # (staged, list.count asked bool() of a traced ==: a bare TracerBoolConversionError)
    check(counted_by_name, *args)


def counted_arrays(a):
    rows = [a, a + 1]
    return rows.count(a)


def test_count_of_arrays_is_refused_at_the_line():
    assert counted_arrays(np.float32(1.0)) == 1   # (Python: identity first)
    with pytest.raises(ConversionError, match="count\\(\\) of items compared") as info:
        autograph.to_graph(counted_arrays)(jnp.ones(3))
    line = counted_arrays.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(info.value)


def sorted_by_an_array_key(a, b):
    return sorted([a, b], key=lambda v: v * jnp.ones(2))


def sorted_items_of_two_shapes(a, b):
    return sorted([a, jnp.stack([b, b])], key=lambda v: jnp.sum(v))


@pytest.mark.parametrize("fn, match", [
    (sorted_by_an_array_key, "key gives traced arrays"),
    (sorted_items_of_two_shapes, "items of different shapes"),
])
def test_sorted_by_key_refusals_name_the_users_line(fn, match):
    with pytest.raises(ConversionError, match=match) as info:
        autograph.to_graph(fn)(1.0, 2.0)
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in str(info.value)
