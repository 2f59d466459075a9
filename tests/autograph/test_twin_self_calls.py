"""A Python twin calls itself by its global name straight, not through
``converted_call`` (issue 30 item 2: call-heavy recursion in plain-Python mode),
while the name is bound to the function (or to what ``autograph.convert`` made of
it); a name bound to anything else at the time of the call is called as Python
calls it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import api
from autograph.transpiler import PythonTwin


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def partitions(n, largest=None):
    largest = n if largest is None else largest
    if n == 0:
        return 1
    if n < 0 or largest == 0:
        return 0
    return partitions(n - largest, largest) + partitions(n, largest - 1)


def steps(n, log):
    log.append(n)
    if n <= 0:
        return 0
    if n == 3:       # rebinds its own name half-way: the next call sees the new one
        globals()["steps"] = _other_steps
    return 1 + steps(n - 1, log)


def _other_steps(n, log):
    log.append(("other", n))
    return 100


_steps = steps


@pytest.fixture(autouse=True)
def _restore_steps():
    yield
    globals()["steps"] = _steps


def _twin_source(fn):
    return api._TRANSPILER.source(fn, PythonTwin())


def test_recursion_goes_straight_to_the_twin_and_computes_what_python_does():
    source = _twin_source(fib)
    assert "(ag___self if fib is ag___callee else ag__.converted_call(fib))(n - 1)" in source
    converted = autograph.convert(fib)
    assert [converted(n) for n in range(15)] == [fib(n) for n in range(15)]
    converted = autograph.convert(partitions)
    assert [converted(n) for n in range(12)] == [partitions(n) for n in range(12)]
    assert converted(8, largest=3) == partitions(8, largest=3)


def test_a_name_rebound_during_the_recursion_is_called_as_python_calls_it():
    expected_log, got_log = [], []
    expected = steps(5, expected_log)
    globals()["steps"] = _steps
    got = autograph.convert(_steps)(5, got_log)
    assert got == expected == 103
    assert got_log == expected_log == [5, 4, 3, ("other", 2)]


def test_a_name_bound_elsewhere_before_the_call_is_called_as_python_calls_it(monkeypatch):
    converted = autograph.convert(_fib)
    monkeypatch.setitem(globals(), "fib", lambda n: 1000)
    assert converted(5) == _fib(5) == 2000


def test_a_decorated_recursion_calls_its_twin_straight(monkeypatch):
    converted = autograph.convert(_fib)
    monkeypatch.setitem(globals(), "fib", converted)     # as @autograph.convert leaves it
    assert [converted(n) for n in range(12)] == [_fib(n) for n in range(12)]
    # A wrapper made with other options is a callee like any other.
    monkeypatch.setitem(globals(), "fib", autograph.convert(_fib, recursive=False))
    assert autograph.convert(_fib)(10) == _fib(10) == 55


_fib = fib


def test_traced_calls_keep_the_converted_code():
    converted = autograph.convert(fib)
    assert int(jax.jit(converted, static_argnums=0)(10)) == 55
    assert int(autograph.to_graph(lambda x: converted(6) + x)(jnp.int32(1))) == 9


def test_the_recursion_goes_as_deep_as_pythons():
    """One frame a level, as the original's: the same depth runs, and the same
    depth fails with Python's message."""
    import sys

    depth = sys.getrecursionlimit() - 50
    assert autograph.convert(_count)(depth) == _count(depth) == depth
    with pytest.raises(RecursionError) as expected:
        _count(10 * depth)
    with pytest.raises(RecursionError) as got:
        autograph.convert(_count)(10 * depth)
    assert str(got.value) == str(expected.value)


def _count(n):
    return 0 if n == 0 else 1 + _count(n - 1)
