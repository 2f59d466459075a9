"""runtime/loops.py ``_compares_traced``: a ``while`` test that is one comparison of
names and number literals (``compares=``) is found traced from the values alone,
without an abstract trace of the test; anything else is traced to find out, and
either way the loop computes what Python computes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.examples import collatz
from autograph.runtime import loops


@pytest.fixture
def probes(monkeypatch):
    """The number of abstract traces of a loop's test (``_test_is_traced``)."""
    calls = []
    real = loops._test_is_traced

    def counted(loop_test, state):
        calls.append(loop_test)
        return real(loop_test, state)

    monkeypatch.setattr(loops, "_test_is_traced", counted)
    return calls


def count_below(x, n):
    i = 2
    total = x
    while i < n:          # n: a closure variable of the loop's functions
        total = total + i
        i += 1
    return total, i


def python_counter(x):
    i = 0
    while i < 5:          # a Python int: the loop runs as Python
        x = x * 2
        i += 1
    return x, i


def float_bound(x):
    while x < 10.5:
        x = x * 2
    return x


def huge_literal(n):
    while n != 4294967296:   # no int32: the test is traced to find out
        n = n + 1
    return n


def vector_test(x):
    while x < 3:          # not a scalar: JAX's error, as before
        x = x + 1
    return x


def test_collatz_stages_without_tracing_its_test_first(probes):
    assert int(jax.jit(autograph.convert(collatz))(jnp.int32(27))) == collatz(27)
    assert probes == []
    assert "compares=('n', 1)" in autograph.to_code(collatz)


def test_a_closure_bound_stages_without_tracing_its_test_first(probes):
    total, i = jax.jit(autograph.convert(count_below))(jnp.float32(1.0), jnp.int32(7))
    want_total, want_i = count_below(1.0, 7)
    assert float(total) == want_total and int(i) == want_i
    assert probes == []


def test_python_operands_still_ask(probes):
    x, i = jax.jit(autograph.convert(python_counter))(jnp.float32(1.5))
    assert float(x) == 48.0 and int(i) == 5
    assert probes    # (one per Python iteration: the state holds a tracer)


def test_a_float_literal(probes):
    assert float(jax.jit(autograph.convert(float_bound))(jnp.float32(1.5))) == float_bound(1.5)
    assert probes == []


def test_an_int_literal_beyond_int32_asks(probes):
    with pytest.raises(OverflowError):
        jax.jit(autograph.convert(huge_literal))(jnp.int32(0))
    assert len(probes) == 1


def test_a_non_scalar_tracer_asks_and_fails_as_before(probes):
    with pytest.raises(Exception) as caught:
        jax.jit(autograph.convert(vector_test))(jnp.zeros(3))
    assert len(probes) == 1
    assert "scalar" in str(caught.value) or "shape" in str(caught.value)
