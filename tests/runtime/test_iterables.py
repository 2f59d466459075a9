"""runtime/iterables.py: ``enumerate``/``zip`` over traced arrays, as Python's."""

import jax.numpy as jnp
import pytest

import autograph


def strict_sum(*xs):
    s = 0.0
    for t in zip(*xs, strict=True):
        if t[0] > 0:
            s = s + t[0]
    return s


@pytest.mark.parametrize("lengths", [(3, 2), (2, 3), (3, 3, 2), (3, 2, 3), (3, 3, 4),
                                     (3, 3, 3, 1)])
def test_a_strict_zip_of_unequal_arrays_raises_pythons_error(lengths):
    """(out13: the message was "zip() arguments have different lengths [3, 2]")"""
    with pytest.raises(ValueError) as python:
        strict_sum(*[[1.0] * n for n in lengths])
    with pytest.raises(ValueError) as staged:
        autograph.to_graph(strict_sum)(*[jnp.ones(n) for n in lengths])
    assert str(staged.value) == str(python.value)
