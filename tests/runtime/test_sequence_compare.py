"""runtime/sequence_compare.py: tuples and lists compared item by item, as Python
compares them, with traced items (a bare TracerBoolConversionError before)."""

import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check


def ordered(a, b):
    return ((a, 1) < (b, 2), (a, b) <= (b, a), (a, b) > (b, 0.0), (a, b) >= (a, b, 0),
            (a, b) == (b, a), (a, 1) != (b, 1), [a, 1] < [b, 1], (a,) < (a, 2))


def ordered_in_an_if(a, b):
    if (a, 1) < (b, 2):
        return a
    return b


def nested(a, b):
    return ((a, (b, 1)) < (a, (b, 2)), ((a, b), 1) == ((b, a), 1))


def mixed_kinds(a, b):
    return (1, a) < (1, b), ("k", a) == ("k", b), (2, a) < (1, b)


@pytest.mark.parametrize("fn", [ordered, ordered_in_an_if, nested, mixed_kinds])
@pytest.mark.parametrize("args", [(1.0, 2.0), (2.0, 2.0), (3.0, 1.0)])
def test_sequences_of_traced_items_compare_as_in_python(fn, args):
    check(fn, *args)


def rows_compared(a, b):
    return (a, 1) < (b, 2)


def test_items_that_are_arrays_are_refused_at_the_line():
    with pytest.raises(ConversionError, match="items that are arrays") as info:
        autograph.to_graph(rows_compared)(jnp.ones(3), jnp.zeros(3))
    assert f"{__file__}:{rows_compared.__code__.co_firstlineno + 1}" in str(info.value)


def test_generated_code():
    assert "ag__.compare_sequences((a, 1), '<', (b, 2))" in autograph.to_code(rows_compared)
