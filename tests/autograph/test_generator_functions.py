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


def positives(xs):
    for x in xs:
        if x > 0:      # POSITIVES_IF
            yield x


def total_of_positives(xs):
    total = 0.0
    for v in positives(xs):    # CONSUMED
        total += v
    return total


def summed_positives(xs):
    return sum(positives(xs))    # SUMMED


def _line(text):
    with open(__file__) as source:
        return next(k for k, line in enumerate(source, 1) if line.rstrip().endswith(text))


def test_consumed_with_python_values_it_runs_as_python():
    assert autograph.convert(total_of_positives)([1.0, -2.0, 3.0]) == 4.0
    assert autograph.convert(summed_positives)([1, -2, 3]) == 4


@pytest.mark.parametrize("fn, consumed", [(total_of_positives, "# CONSUMED"),
                                          (summed_positives, "# SUMMED")])
@pytest.mark.parametrize("run", ["to_graph", "jit"])
def test_a_traced_condition_in_a_consumed_generator_is_refused_at_its_line(
        fn, consumed, run):
    # It was JAX's bare TracerBoolConversionError, with a note that said to convert
    # the generator (convert() returns a generator function as it is).
    call = autograph.to_graph(fn) if run == "to_graph" else jax.jit(autograph.convert(fn))
    with pytest.raises(autograph.ConversionError) as raised:
        call(jnp.array([1.0, -2.0, 3.0]))
    error = raised.value
    assert (error.filename, error.lineno) == (__file__, _line("# POSITIVES_IF"))
    assert f"{__file__}:{_line(consumed)}" in str(error)
    assert "`positives` is a generator function" in str(error)
    assert "sum(x for x in xs if x > 0)" in str(error)
    # still the error jax.jit of the original raises
    assert isinstance(error, jax.errors.TracerBoolConversionError)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(fn)(jnp.array([1.0, -2.0, 3.0]))
