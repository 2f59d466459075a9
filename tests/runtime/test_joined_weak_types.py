"""The type a staged region gives a variable two ways of running set differently:
the join of the two, as JAX's loops join a carry's types.

1. A staged ``if`` whose branches give ``0`` and a weak float32 (``s * 2`` for ``s``
   a weak float): Python's value is weak either way, and so is the join
   (``abstract.joined_dtypes``); it was a strong float32.
2. A staged loop with an exit whose body makes a weakly typed start strong
   (``abstract.run_or_keep``):

``lam = 0.0`` before a loop with ``break`` and ``lam = new`` (a float32 array) in its
body: once the body has run, Python's ``lam`` is a strong float32, and a later
``lam * bf16_array`` is float32. The staged loop skips its body after the exit with
a ``lax.cond``, whose output took the no-op branch's weak type, so the loop's carry
stayed weak and the later product was bfloat16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph


def static_range_with_break(x):
    lam = 0.0
    for k in range(5):
        new = jnp.sum(x) * k
        if new > 100.0:
            break
        lam = new
    return lam


def array_with_break(x):
    lam = 0.0
    for row in x:
        if row > 100.0:
            break
        lam = row * 2
    return lam


def int_start_with_break(x):
    count = 0
    for row in x:
        if row > 100:
            break
        count = row
    return count


def bounded_while_with_break(x, n):
    lam = 0.0
    k = 0
    while k < n:
        autograph.set_loop_options(maximum_iterations=10)
        if x[0] > 100.0:
            break
        lam = x[0] * k
        k += 1
    return lam


def if_joins_int_and_weak_float(x):
    s = x * 1.0
    m = 0
    if s > 5:
        pass
    else:
        m = s * 2
    return m


def traced_range_with_break(x):
    s = x * 1.0
    m = 0
    for _ in range(x):
        s = s + 1
        if s > 5:
            break
        m = s * 2
    return m


def while_with_break(x):
    s = x * 1.0
    m = 0
    while s < x + 3:
        s = s + 1
        if s > 6:
            break
        m = s * 2
    return m


WEAK_CASES = [if_joins_int_and_weak_float, traced_range_with_break, while_with_break]


@pytest.mark.parametrize("fn", WEAK_CASES, ids=lambda f: f.__name__)
def test_an_int_start_and_a_weak_float_join_as_a_weak_float(fn):
    x = jnp.int32(2)
    expected = fn(x)
    assert _type(expected) == (jnp.float32, True)
    for run in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        got = run(x)
        assert _type(got) == _type(expected)
        assert got == expected
    assert autograph.convert(fn)(2) == fn(2)


def _type(value):
    aval = jax.typeof(value)
    return aval.dtype, aval.weak_type


CASES = [
    (static_range_with_break, (jnp.array([1.0, 2.0]),)),
    (array_with_break, (jnp.array([1.0, 2.0, 3.0]),)),
    (int_start_with_break, (jnp.array([1, 2, 3]),)),
    (bounded_while_with_break, (jnp.array([1.0, 2.0]), 3)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_the_carry_is_as_strongly_typed_as_python_leaves_it(fn, args):
    expected = fn(*args)
    assert _type(expected)[1] is False
    for run in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        got = run(*args)
        assert _type(got) == _type(expected)
        assert jnp.array_equal(got, expected)
    assert autograph.convert(fn)(*args) == expected


def test_a_later_product_with_bfloat16_is_float32_as_in_python():
    def scaled(x, y):
        return array_with_break(x) * y

    x, y = jnp.array([1.0, 2.0]), jnp.ones(2, jnp.bfloat16)
    assert scaled(x, y).dtype == jnp.float32
    assert autograph.to_graph(scaled)(x, y).dtype == jnp.float32


def test_under_vmap_the_bounded_loop_keeps_the_strong_type():
    x = jnp.array([[1.0, 2.0], [200.0, 1.0], [3.0, 0.0]])
    got = jax.vmap(autograph.convert(bounded_while_with_break), (0, None))(x, 3)
    expected = jnp.stack([bounded_while_with_break(row, 3) for row in x])
    assert _type(got) == (jnp.float32, False)
    assert jnp.array_equal(got, expected)


def test_a_body_that_leaves_the_start_weak_keeps_it_weak():
    def weak_body(x, s):
        lam = 0.0
        for row in x:
            if row > 100.0:
                break
            lam = lam + s
        return lam

    x = jnp.array([1.0, 2.0])
    got = jax.jit(autograph.convert(weak_body))(x, 0.5)
    assert _type(got) == (jnp.float32, True)
    assert got == 1.0
