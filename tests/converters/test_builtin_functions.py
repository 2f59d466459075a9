"""Builtins with traced arguments: len, min, max, sum, int, float, bool, range, reversed..."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check


def clip_pair(x, y):
    return min(x, y), max(x, y, 0.5), min([x, y, 2.0]), abs(x - y)


def extremes(xs):
    return min(xs), max(xs)


def total(xs):
    return sum(xs), sum(xs, 10.0), sum([xs[0], xs[1]])


def casts(x):
    return int(x), float(x), bool(x)


def count_up(n):
    r = range(n)
    return len(r)


def reversed_sum(xs):
    out = 0.0
    k = 1.0
    for v in reversed(xs):
        out = out + k * v
        k = k * 10.0
    return out


def length(xs):
    return len(xs) * 2


def is_array(x):
    return isinstance(x, jax.Array), isinstance(x, str)


def int_of_vector(xs):
    return int(xs)


def bool_of_vector(xs):
    n = bool(xs)
    return n


def min_with_key(x, y):
    return min(x, y, key=abs)


def argmax_by_key(xs):
    return max(range(len(xs)), key=lambda i: xs[i])


def argmin_by_key(xs):
    best = min(range(len(xs)), key=lambda i: xs[i])
    return best, isinstance(best, int)


def largest_magnitude(xs):
    return max(xs, key=abs)


def best_pair(xs, ys):
    return max([(xs, 1.0), (ys, 2.0)], key=lambda pair: pair[0].sum())


def mixed_picks(x):
    return max(1, 2.5, key=lambda v: v * x)


def named_picks(x, y):
    return max(["left", "right"], key=lambda side: x if side == "left" else y)


def shadowed(x):
    len = 5   # noqa: F841  a local named len is not the builtin
    return len


def test_min_max_abs():
    for x, y in [(1.0, 2.0), (3.0, -1.0), (0.25, 0.25)]:
        check(clip_pair, x, y, vmap=[0.0, 1.0, 3.0])
    check(extremes, jnp.array([3.0, -1.0, 2.0]))
    check(extremes, [3.0, -1.0, 2.0], compiled=False)


def test_sum():
    check(total, jnp.array([1.0, 2.0, 3.5]))
    check(total, [1.0, 2.0, 3.5], compiled=False)
    jaxpr = str(jax.make_jaxpr(autograph.convert(total))(jnp.ones(50)))
    assert jaxpr.count("add") < 10        # one reduction, not 50 unrolled adds


def test_casts():
    for x in [2.7, -2.7, 0.0]:
        check(casts, x, vmap=[2.7, -2.7, 0.0])
    i, f, b = autograph.to_graph(casts)(jnp.float32(-2.7))
    assert i.dtype == jnp.int32 and int(i) == -2
    assert f.dtype == jnp.float32 and b.dtype == jnp.bool_


def test_range_and_len_with_traced_bound():
    check(count_up, 7)
    check(count_up, 0)
    assert int(autograph.to_graph(count_up)(jnp.int32(5))) == 5
    check(length, jnp.ones(4))


def test_reversed():
    check(reversed_sum, jnp.array([1.0, 2.0, 3.0]))
    check(reversed_sum, [1.0, 2.0, 3.0], compiled=False)


def test_isinstance_of_an_array_is_the_builtins_answer():
    # (a runtime call now: it answers for the Python numbers staging made traced,
    # tests/runtime/test_types_of.py)
    check(is_array, jnp.float32(1.0))
    assert "ag__.isinstance_(x, jax.Array)" in autograph.to_code(is_array)


def line_of(fn, k):
    return f"{__file__}:{fn.__code__.co_firstlineno + k}"


@pytest.mark.parametrize("fn, words", [
    (int_of_vector, "only a scalar converts to one int"),
    (bool_of_vector, "only a scalar converts to one bool"),
])
def test_impossible_casts_name_the_line(fn, words):
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(fn)(jnp.ones(3))
    assert isinstance(info.value, TypeError)
    assert words in str(info.value)
    assert line_of(fn, 1) in str(info.value)


def test_min_with_key_on_traced_values():
    check(min_with_key, -3.0, 2.0)
    check(min_with_key, 2.0, -2.0)           # a tie keeps the first, as Python's min
    check(largest_magnitude, jnp.array([0.5, -2.0, 1.0]))
    check(best_pair, jnp.array([0.5, -2.0]), jnp.array([1.5, 2.0]))


@pytest.mark.parametrize("xs", [[0.5, 2.0, 2.0, 1.0], [np.nan, 2.0, 1.0], [0.5, np.nan, 3.0],
                                [-1.0, -1.0]])
def test_argmax_by_key_picks_as_python(xs):
    # Python's pick, not jnp.argmax's: the first of equal keys, and a NaN key is never
    # larger (jnp.argmax would give the NaN's index)
    check(argmax_by_key, np.array(xs))
    check(argmin_by_key, np.array(xs))
    assert "ag__.max_(" in autograph.to_code(argmax_by_key)


@pytest.mark.parametrize("fn, args", [(mixed_picks, (2.0,)), (named_picks, (1.0, 2.0))])
def test_pick_by_traced_key_among_unlike_items_names_the_line(fn, args):
    assert autograph.convert(fn)(*args) == fn(*args)
    with pytest.raises(ConversionError, match="items must be alike") as info:
        autograph.to_graph(fn)(*map(jnp.float32, args))
    assert line_of(fn, 1) in str(info.value)


def test_python_values_are_the_builtins():
    with pytest.raises(TypeError) as original:
        int([1])
    with pytest.raises(TypeError) as converted:
        autograph.convert(int_of_vector)([1])
    assert str(converted.value) == str(original.value)
    with pytest.raises(ValueError):
        autograph.convert(extremes)([])
    assert autograph.convert(shadowed)(1) == 5
    assert "ag__" not in autograph.to_code(shadowed)


def test_generated_code():
    assert autograph.to_code(casts) == (
        "def casts(x):\n"
        "    return (ag__.int_(x), ag__.float_(x), ag__.bool_(x))\n")
    np.testing.assert_equal(autograph.convert(casts)(1.5), (1, 1.5, True))


def noisy_pick(items):
    def shown(v):
        print("key", v)
        return v
    return max(items, key=shown)


def test_a_pick_by_key_calls_and_compares_in_pythons_order(capsys):
    # key(1), key('a'), then the comparison raises: key(2) is never called
    with pytest.raises(TypeError) as original:
        noisy_pick([1, "a", 2])
    printed = capsys.readouterr().out
    with pytest.raises(TypeError) as converted:
        autograph.convert(noisy_pick)([1, "a", 2])
    assert str(converted.value) == str(original.value)
    assert capsys.readouterr().out == printed == "key 1\nkey a\n"
