"""``xs.index(v)`` of a list or tuple with traced items or value: the first equal
position, traced, and Python's ``ValueError`` from the compiled call where none is
(it was a bare TracerBoolConversionError)."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from tests.differential import check


def position_of(v):
    xs = [4, 7, 7, 1]
    return xs.index(v)


def position_among(a, b, v):
    xs = [a, 3, b, 3]
    return xs.index(v) * 10 + xs.index(3, 2)


def position_in_tuple(a, v):
    return (a, a + 1, 9).index(v, 1)


def position_of_itself(a):
    xs = [1.0, a]
    return xs.index(a)     # the very object: found by identity, a NaN too


def position_among_names(v):
    return ["a", "b"].index(v)


@pytest.mark.parametrize("v", [4, 7, 1])
def test_first_equal_position(v):
    assert check(position_of, v, vmap=[4, 7, 1]) == [4, 7, 7, 1].index(v)


@pytest.mark.parametrize("args", [(7, 3, 3), (7, 5, 7), (2, 2, 2), (0, 1, 1)])
def test_traced_items_and_value(args):
    check(position_among, *args)


@pytest.mark.parametrize("args", [(5, 6), (5, 9), (8, 9)])
def test_tuple_with_start(args):
    check(position_in_tuple, *args)


def test_an_item_that_is_the_value_is_found_by_identity():
    nan = float("nan")
    assert position_of_itself(nan) == 1
    assert int(autograph.to_graph(position_of_itself)(jnp.float32(nan))) == 1


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, args, message", [
    (position_of, (5,), "5 is not in list"),
    (position_in_tuple, (5, 5), "tuple.index(x): x not in tuple"),
    (position_among_names, (3,), "3 is not in list"),
])
def test_absent_value_raises_pythons_error_at_the_users_line(fn, args, message):
    with pytest.raises(ValueError) as python:
        fn(*args)
    assert str(python.value) == message
    with pytest.raises(ValueError) as staged:
        autograph.to_graph(fn)(*[jnp.int32(a) for a in args])
    assert str(staged.value) == message
    where = f"{__file__}:{_line_of(fn, '.index(')}"
    assert any(where in note for note in staged.value.__notes__)
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        jax.jit(autograph.convert(fn))(*[jnp.int32(a) for a in args])


def test_under_vmap_only_the_examples_without_the_value_fail():
    run = jax.vmap(autograph.convert(position_of))
    assert run(jnp.array([1, 7])).tolist() == [3, 1]
    with pytest.raises(ValueError, match="5 is not in list"):
        run(jnp.array([1, 5]))


def test_items_compared_into_arrays_are_refused_at_the_line():
    def position_of_row(m, v):
        return [m[0], m[1]].index(v)

    with pytest.raises(autograph.ConversionError, match="test_sequence_index.py"):
        autograph.to_graph(position_of_row)(jnp.ones((2, 3)), jnp.ones(3))
