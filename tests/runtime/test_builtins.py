"""runtime/builtins.py: the builtin itself for Python values; traced overloads otherwise."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.runtime import (
    TracedRange,
    bool_,
    float_,
    int_,
    len_,
    max_,
    min_,
    range_,
    reversed_,
    sum_,
)


def test_python_values_are_the_builtins():
    assert int_("12") == 12 and int_("12", base=8) == 10 and int_(2.9) == 2
    assert float_("1.5") == 1.5 and bool_([]) is False and bool_() is False
    assert min_(3, 1, 2) == 1 and max_([1, 5, 2]) == 5
    assert min_([], default=7) == 7 and max_(["a", "bb"], key=len) == "bb"
    assert sum_([1, 2, 3]) == 6 and sum_([[1], [2]], []) == [1, 2]
    assert list(reversed_([1, 2, 3])) == [3, 2, 1]
    assert len_([1, 2]) == 2
    for fn, args in [(int_, ([1],)), (min_, ([],)), (sum_, (["a"],)), (len_, (3,))]:
        with pytest.raises((TypeError, ValueError)):
            fn(*args)


def test_traced_values():
    @jax.jit
    def f(x, n):
        return (min_(x, 1.0), max_(x, 0.0, -1.0), int_(x), float_(n), bool_(n),
                len_(range_(n)), sum_(jnp.stack([x, x])))

    out = f(jnp.float32(2.5), jnp.int32(3))
    assert [float(v) for v in out] == [1.0, 2.5, 2.0, 3.0, 1.0, 3.0, 5.0]
    assert isinstance(jax.jit(lambda n: (range_(n), 0)[1])(jnp.int32(2)), jax.Array)
    assert isinstance(range_(3), range) and not isinstance(range_(3), TracedRange)


NAN = float("nan")


def first_kept(x, y):
    return min(x, y), max(x, y)


def over_an_array(xs):
    return min(xs), max(xs)


def int_of_a_branch(x):
    y = x
    if x > 0:
        y = x * 2
    return int(y)


@pytest.mark.parametrize("x, y", [(1.0, NAN), (NAN, 1.0), (2.0, 1.0), (0.0, -0.0)])
def test_min_and_max_keep_pythons_pick(x, y):
    """Python keeps the first value unless a later one compares smaller (larger): a
    NaN that comes second is never taken (out13: jnp.minimum gave NaN)."""
    expected = first_kept(x, y)
    got = autograph.to_graph(first_kept)(x, y)
    for e, g in zip(expected, got, strict=True):
        assert str(float(g)) == str(e)   # NaN and the sign of zero included


@pytest.mark.parametrize("xs", [[1.0, NAN, 0.5], [NAN, 1.0, 0.5], [2.0, 3.0, 1.0]])
def test_min_and_max_of_an_array_keep_pythons_pick(xs):
    expected = over_an_array(xs)
    got = autograph.to_graph(over_an_array)(jnp.array(xs, jnp.float32))
    assert [str(float(g)) for g in got] == [str(e) for e in expected]
    assert [int(g) for g in autograph.to_graph(over_an_array)(jnp.array([3, 1, 2]))] == [1, 3]


@pytest.mark.parametrize("x", [NAN, float("inf")])
def test_int_of_a_nan_or_infinity_raises_pythons_error(x):
    """(out13: the cast gave 0 or 2147483647, with no error.)"""
    with pytest.raises((ValueError, OverflowError)) as python:
        int_of_a_branch(x)
    with pytest.raises(type(python.value)) as raised:
        autograph.to_graph(int_of_a_branch)(x)
    assert str(raised.value) == str(python.value)
    assert int(autograph.to_graph(int_of_a_branch)(2.7)) == int_of_a_branch(2.7)


def rounded(x):
    y = x
    if x != 0:
        y = x + 1
    return round(y), round(y, 1)


@pytest.mark.parametrize("x", [1.5, 2.5, -0.5, 0.26])
def test_round_of_a_traced_number_is_pythons(x):
    expected = rounded(x)
    got = autograph.to_graph(rounded)(x)
    assert int(got[0]) == expected[0] and abs(float(got[1]) - expected[1]) < 1e-6


@pytest.mark.parametrize("x", [NAN, float("inf")])
def test_round_of_a_nan_or_infinity_raises_pythons_error(x):
    """(out13: JAX's round gave 0 or 2147483647, with no error.)"""
    with pytest.raises((ValueError, OverflowError)) as python:
        rounded(x)
    with pytest.raises(type(python.value)) as raised:
        autograph.to_graph(rounded)(x)
    assert str(raised.value) == str(python.value)
