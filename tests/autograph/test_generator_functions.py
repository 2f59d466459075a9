"""convert() of a generator function runs it as it is (issue 27.7)."""

import jax
import jax.numpy as jnp
import pytest

import autograph


def fibonacci(limit):
    a, b = 0, 1
    while a < limit:
        yield a
        a, b = b, a + b


class Node:
    def __init__(self, value, next=None):
        self.value, self.next = value, next

    def __iter__(self):
        node = self
        while node is not None:
            yield node.value
            node = node.next


def traced_condition(x):
    if x > 0:
        yield x


def test_a_generator_function_runs_as_written():
    converted = autograph.convert(fibonacci)
    assert list(converted(50)) == list(fibonacci(50))
    assert converted is fibonacci


def test_a_generator_method_runs_as_written():
    chain = Node(1, Node(2, Node(3)))
    assert list(autograph.convert(chain.__iter__)()) == [1, 2, 3]


def test_a_generator_over_arrays_runs_as_python_under_jit():
    def total(xs):
        return sum(autograph.convert(fibonacci)(5)) + xs.sum()
    assert float(jax.jit(total)(jnp.ones(3))) == float(sum(fibonacci(5)) + 3)


def test_a_traced_condition_inside_still_fails_loudly():
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x: list(autograph.convert(traced_condition)(x)))(jnp.float32(1.0))
