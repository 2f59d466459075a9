"""Counters a bounded integer loop steps together are carried once (loop_counters)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import set_loop_options, stack
from autograph.runtime import bounded_loops, loop_counters
from tests.differential import check


def fibonacci(first_two, n):
    fib = [first_two[0], first_two[1]]
    i = 2
    while i < n:
        set_loop_options(maximum_iterations=50)
        fib.append(fib[-1] + fib[-2])
        i += 1
    return fib[-1], len(fib), i, jnp.sum(stack(fib))


def offset_counters(n, start):
    """The user's counter starts elsewhere than the list's length; a second one
    counts down."""
    items = [start]
    i = start
    j = 100
    while i < n:
        set_loop_options(maximum_iterations=20)
        items.append(items[-1] * 2 + i)
        i += 1
        j -= 3
    return len(items), i, j, items[-1]


def conditional_append(n):
    """An append under a traced if: the length is no counter."""
    items = [0]
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=20)
        if i % 3 == 0:
            items.append(i)
        i += 1
    return len(items), i, items[-1]


def wrapping(n, start):
    """Counters of one step from starts far apart: the difference wraps in int32."""
    a = start
    b = -start
    k = 0
    while k < n:
        set_loop_options(maximum_iterations=10)
        a += 7
        b += 7
        k += 1
    return a, b, k


def _while_carries(fn, *args):
    """The number of leaves each ``while`` of ``fn``'s jaxpr carries."""
    carries = []
    todo = [jax.make_jaxpr(lambda *xs: fn(*xs))(*args).jaxpr]   # a new function: no cache
    while todo:
        for eqn in todo.pop().eqns:
            if eqn.primitive.name == "while":
                carries.append(len(eqn.params["body_jaxpr"].out_avals))
                todo.append(eqn.params["body_jaxpr"].jaxpr)
    return carries


def _without_counters(monkeypatch):
    monkeypatch.setattr(loop_counters, "find", lambda body, nconsts: {})


def _same_arrays(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        assert jax.typeof(x) == jax.typeof(y) and jax.typeof(x).weak_type == jax.typeof(y).weak_type
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("n", [0, 2, 3, 9, 52])
def test_fibonacci_equals_python(n):
    check(fibonacci, jnp.array([0, 1], jnp.int32), n)


def test_fibonacci_carries_one_counter_and_the_list(monkeypatch):
    converted = autograph.convert(fibonacci)
    args = (jnp.array([0, 1], jnp.int32), jnp.int32(9))
    assert _while_carries(converted, *args) == [2]   # the buffer and its length
    with monkeypatch.context() as m:
        _without_counters(m)
        assert _while_carries(converted, *args) == [4]


@pytest.mark.parametrize("fn, args", [
    (fibonacci, (jnp.array([3, 4], jnp.int32), 7)),
    (offset_counters, (9, 4)),
    (offset_counters, (2, 4)),
    (conditional_append, (10,)),
    (wrapping, (5, 2 ** 31 - 10)),
])
def test_same_values_and_types_as_the_loop_carrying_every_counter(fn, args, monkeypatch):
    converted = autograph.convert(fn)
    inputs = [jnp.asarray(a, jnp.int32) for a in args]
    got = jax.jit(lambda *xs: converted(*xs))(*inputs)
    with monkeypatch.context() as m:
        _without_counters(m)
        expected = jax.jit(lambda *xs: converted(*xs))(*inputs)
    _same_arrays(expected, got)
    # and as the original run eagerly on the same arrays (Python's own loop)
    python = fn(*inputs)
    assert [int(x) for x in jax.tree_util.tree_leaves(got)] == [
        int(x) for x in jax.tree_util.tree_leaves(python)]


@pytest.mark.parametrize("n", [0, 1, 7, 16])
def test_offset_and_downward_counters(n):
    check(offset_counters, n, 4)
    check(offset_counters, n, -3)


@pytest.mark.parametrize("n", [0, 1, 4, 10, 19, 20])
def test_conditional_append_is_not_a_counter(n):
    check(conditional_append, n)


def test_counters_with_traced_starts_and_vmap():
    converted = autograph.convert(offset_counters)
    starts = jnp.array([0, 3, -5, 8], jnp.int32)
    ns = jnp.array([4, 3, 10, 26], jnp.int32)
    got = jax.vmap(converted)(ns, starts)
    expected = [offset_counters(int(n), int(s)) for n, s in zip(ns, starts, strict=True)]
    assert np.asarray(got).T.tolist() == [list(e) for e in expected]
    # traced starts: the differences are computed outside the loop, still one carry each
    assert _while_carries(converted, jnp.int32(9), jnp.int32(2)) == [3]


def test_int32_counters_wrap_as_jax_arithmetic_does():
    start = jnp.int32(2 ** 31 - 10)
    original = [int(x) for x in wrapping(jnp.int32(5), start)]
    got = jax.jit(autograph.convert(wrapping))(jnp.int32(5), start)
    assert [int(x) for x in got] == original
    assert original[0] < 0   # the carried counter wrapped


def test_bound_stops_the_loop_through_a_derived_trip_count():
    def run(n):
        return bounded_loops.bounded_while(
            lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] + 1, s[2] * 2 % 1000), (5, 0, 1), 4)

    for n in (0, 5, 7, 9, 100):
        k = min(max(n - 5, 0), 4)
        for way in (run, jax.jit(run)):
            assert [int(x) for x in way(jnp.int32(n))] == [5 + k, k, 2 ** k % 1000]
    assert _while_carries(run, jnp.int32(3)) == [2]


def test_find_reads_steps_at_the_body_level_only():
    def body(i, j, k, flag):
        return [i + 1, j - 2, jnp.where(flag > 0, k + 1, k), 3 + flag]

    jaxpr = jax.make_jaxpr(body)(*[jnp.int32(0)] * 4)
    assert loop_counters.find(jaxpr, 0) == {0: 1, 1: -2, 3: 3}
    floats = jax.make_jaxpr(lambda x: [x + 1.0])(jnp.float32(0))
    assert loop_counters.find(floats, 0) == {}


def test_a_loop_with_effects_derives_its_counters_through_lax_while_loop(capsys):
    def run(n):
        def body(s):
            jax.debug.print("step {}", s[0])
            return s[0] + 1, s[1] + 1, s[2] * 3 % 7

        return bounded_loops.bounded_while(lambda s: s[0] < n, body, (0, 3, 1), 10)

    out = jax.jit(run)(jnp.int32(4))
    jax.effects_barrier()
    assert [int(x) for x in out] == [4, 7, 3 ** 4 % 7]
    assert capsys.readouterr().out.count("step") == 4
    assert _while_carries(run, jnp.int32(4)) == [2]
