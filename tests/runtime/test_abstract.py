"""autograph/runtime/abstract.py: which two types of a variable a staged region joins."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import StagingTypeError
from autograph.runtime.abstract import mismatches


def aval(dtype, weak=False, shape=()):
    return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak)


@pytest.mark.parametrize("first, second, joinable", [
    (aval(jnp.int32, weak=True), aval(jnp.float32, weak=True), True),   # `1` / `2.5`
    (aval(jnp.int32, weak=True), aval(jnp.float32), True),              # `0` / float32
    (aval(jnp.bfloat16), aval(jnp.float32, weak=True), True),          # keeps bfloat16
    (aval(jnp.int32), aval(jnp.float32, weak=True), False),   # int32 / `x + 0.5`
    (aval(jnp.float32), aval(jnp.complex64, weak=True), False),
    (aval(jnp.int32), aval(jnp.float32), False),
])
def test_a_join_never_changes_a_strong_dtype(first, second, joinable):
    (_, _, _, got), = mismatches(["v"], [first], [second])
    assert got is joinable
    (_, _, _, got), = mismatches(["v"], [second], [first])
    assert got is joinable


def half_above(x):
    if x > 2 ** 30:
        x = x + 0.5
    return x


def half_above_expression(x):
    return x + 0.5 if x > 2 ** 30 else x


def zero_or_value(x):
    y = 0
    if x > 1:
        y = x * 2
    return y


@pytest.mark.parametrize("fn", [half_above, half_above_expression])
def test_int_array_and_weak_float_branches_are_refused(fn):
    # Python keeps 16777217 an int32 when the condition is false; the join made it
    # float32 16777216.0.
    x = jnp.int32(16777217)
    assert fn(x).dtype == jnp.int32
    with pytest.raises(StagingTypeError, match="different type in the two branches"):
        autograph.to_graph(fn)(x)


def test_a_python_scalar_still_joins_an_array():
    got = autograph.to_graph(zero_or_value)(jnp.float32(3.0))
    assert got.dtype == jnp.float32 and float(got) == 6.0
    assert float(autograph.to_graph(zero_or_value)(jnp.float32(0.5))) == 0.0


def minus_one_or_array(x, c):
    y = x
    if c > 0:
        y = -1
    return y


def big_or_array(x, c):
    return 1000 if c > 0 else x


@pytest.mark.parametrize("fn, x", [(minus_one_or_array, jnp.uint8(5)),
                                   (big_or_array, jnp.int8(5))])
def test_a_python_int_out_of_the_arrays_range_is_refused(fn, x):
    # Python's value is -1 (1000) where the branch runs; joined it was 255 (-24).
    with pytest.raises(StagingTypeError, match="out of its range"):
        autograph.to_graph(fn)(x, jnp.int32(1))


def test_a_python_int_in_the_arrays_range_joins():
    got = autograph.to_graph(minus_one_or_array)(jnp.int8(5), jnp.int32(1))
    assert got.dtype == jnp.int8 and int(got) == -1
    got = autograph.to_graph(big_or_array)(jnp.int16(5), jnp.int32(0))
    assert got.dtype == jnp.int16 and int(got) == 5


def first_above(xs, t):
    where = None
    for i in range(len(xs)):
        if xs[i] > t:
            where = i
    return where


def keep_above(x, kept):
    if x > 0:
        kept.append(x)
    return kept


def helper_appends(xs):
    kept = []
    for x in xs:
        keep_above(x, kept)
    return len(kept)


@pytest.mark.parametrize("fn, args, at, words", [
    (first_above, ([1.0, 3.0], 2.0), (first_above, 3), "It is None in one"),
    (keep_above, (1.0, [2.0]), (keep_above, 1), "a list whose length differs"),
    (helper_appends, ([1.0, -1.0],), (keep_above, 1), "a list whose length"),
])
def test_a_structure_two_branches_give_differently_says_what_to_change(fn, args, at, words):
    assert autograph.convert(fn)(*args) == fn(*args)
    with pytest.raises(StagingTypeError, match=words) as info:
        autograph.to_graph(fn)(*args)
    assert f"{__file__}:{at[0].__code__.co_firstlineno + at[1]}" in str(info.value)
