"""An unrolled Python loop whose exit is traced stops after a bound (issue 27.6)."""

import itertools

import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError
from autograph.runtime import unrolling
from tests.differential import check


def first_below(eps):
    for n in itertools.count(1):
        if 1.0 / n < eps:
            return n


def first_below_bounded(eps):
    for n in itertools.count(1):
        autograph.set_loop_options(maximum_iterations=30)
        if 1.0 / n < eps:
            return n
    return -1


def over_a_short_iterator(xs, eps):
    for x in iter([1.0, 0.5, 0.25, 0.125]):
        if x < eps:
            return x
    return 0.0


@pytest.fixture
def low_limit(monkeypatch):
    monkeypatch.setattr(unrolling, "TRACED_EXIT_LIMIT", 25)


def test_an_endless_iterator_with_a_traced_exit_is_refused_at_the_loop(low_limit):
    assert autograph.convert(first_below)(0.01) == first_below(0.01) == 101
    with pytest.raises(ConversionError, match="maximum_iterations") as raised:
        autograph.to_graph(first_below)(jnp.float32(0.01))
    assert raised.value.lineno == first_below.__code__.co_firstlineno + 1
    assert "while" in str(raised.value)


def test_a_bound_stops_the_unrolling(low_limit):
    check(first_below_bounded, 0.05)       # found within the bound: Python's answer
    assert int(autograph.to_graph(first_below_bounded)(jnp.float32(0.001))) == -1


def test_a_short_iterator_still_unrolls(low_limit):
    check(over_a_short_iterator, 0.0, 0.3)
