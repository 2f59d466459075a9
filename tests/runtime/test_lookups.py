"""A Python list of numbers indexed by a traced int reads it as an array (issue 27.4);
three-argument pow and ranges with a traced bound outside a `for` (issue 27.8)."""

import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check

PRIMES = [2, 3, 5, 7, 11, 13]
MIXED = [1, 2.5, 3]


def nth_prime(n):
    return PRIMES[n]


def local_table(n, x):
    weights = [0.5, 0.25, 0.125] + [0.0] * 2
    return weights[n] * x


def sieve_lookup(n):
    limit = 30
    sieve = [True] * (limit + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, 6):
        for j in range(i * i, limit + 1, i):
            sieve[j] = False
    return sieve[n]


def mixed_lookup(n):
    return MIXED[n]


def modular(base, exponent, modulus):
    return pow(base, exponent, modulus)


def range_in_comprehension(n):
    return [i for i in range(n)]


@pytest.mark.parametrize("n", [0, 3, 5, -1, -6])
def test_a_global_list_of_ints(n):
    check(nth_prime, n)


@pytest.mark.parametrize("n", [0, 2, 4])
def test_a_local_list_of_floats(n):
    check(local_table, n, 3.0)


@pytest.mark.parametrize("n", [2, 9, 29, 30])
def test_a_list_built_by_a_sieve(n):
    check(sieve_lookup, n)


def test_an_index_outside_raises_pythons_error():
    with pytest.raises(IndexError) as python:
        nth_prime(6)
    with pytest.raises(IndexError) as compiled:
        autograph.to_graph(nth_prime)(jnp.int32(6))
    assert str(compiled.value) == str(python.value)
    with pytest.raises(IndexError):
        autograph.to_graph(nth_prime)(jnp.int32(-7))


def test_a_list_of_mixed_kinds_is_refused_at_the_users_line():
    assert autograph.convert(mixed_lookup)(1) == 2.5
    with pytest.raises(ConversionError, match="more than one kind") as raised:
        autograph.to_graph(mixed_lookup)(jnp.int32(1))
    assert raised.value.lineno == mixed_lookup.__code__.co_firstlineno + 1


def test_generated_code_marks_only_lists():
    assert "ag__.list_item(PRIMES, n)" in autograph.to_code(nth_prime)
    assert "ag__.list_item(weights, n)" in autograph.to_code(local_table)

    def array_read(xs, i):
        return xs[i]
    assert "list_item" not in autograph.to_code(array_read)


@pytest.mark.parametrize("args", [(3, 7, 13), (2, 10, 1000), (-3, 5, 7), (5, 3, -7),
                                  (7, 0, 1), (12345, 6789, 40000)])
def test_three_argument_pow(args):
    check(modular, *args)


def test_three_argument_pow_errors():
    with pytest.raises(ValueError, match="cannot be 0"):
        autograph.to_graph(modular)(jnp.int32(3), jnp.int32(2), jnp.int32(0))
    with pytest.raises(TypeError, match="integers"):
        autograph.to_graph(modular)(jnp.float32(3), jnp.int32(2), jnp.int32(5))
    assert np.asarray(autograph.to_graph(modular)(3, 2, 5)) == 4


def test_a_traced_range_outside_a_for_names_the_line_and_the_fix():
    with pytest.raises(ConversionError, match="for loop") as raised:
        autograph.to_graph(range_in_comprehension)(jnp.int32(3))
    assert raised.value.lineno == range_in_comprehension.__code__.co_firstlineno + 1
    assert "TracedRange" not in str(raised.value)
