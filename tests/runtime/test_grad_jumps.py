"""Reverse mode through loops with ``break``, ``continue`` and ``return``.

A static-range loop with a jump stays one masked ``scan``, so ``jax.grad`` goes
through it; a bounded ``while`` with ``break`` too; a traced range with ``break``
needs ``maximum_iterations`` like any loop whose trip count is traced.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.test_util import check_grads

import autograph
from autograph import ConversionError, set_loop_options
from tests.differential import assert_close, check


def break_over_array(x):
    total = 0.0
    for v in jnp.linspace(0.0, 3.0, 7):
        if v * x > 2.0:
            break
        total = total + jnp.sin(v * x)
    return total


def break_over_array_lax(x):
    def step(carry, v):
        total, stopped = carry
        stopped = stopped | (v * x > 2.0)
        return (jnp.where(stopped, total, total + jnp.sin(v * x)), stopped), None

    return lax.scan(step, (0.0, False), jnp.linspace(0.0, 3.0, 7))[0][0]


def continue_in_range(x):
    total = 0.0
    for i in range(6):
        if jnp.sin(x * i) < 0:
            continue
        total = total + jnp.sin(x * i)
    return total


def continue_in_range_lax(x):
    def step(i, total):
        s = jnp.sin(x * i)
        return jnp.where(s < 0, total, total + s)

    return lax.fori_loop(0, 6, step, 0.0)


def return_in_range(x):
    for _ in range(8):
        x = x * 1.1 + 0.1
        if x > 3.0:
            return x * 2.0
    return x


def return_in_range_lax(x):
    def step(_, carry):
        x, done = carry
        new = x * 1.1 + 0.1
        x = jnp.where(done, x, new)
        return x, done | (new > 3.0)

    x, done = lax.fori_loop(0, 8, step, (x, False))
    return jnp.where(done, x * 2.0, x)


def break_in_bounded_while(x):
    while x < 100.0:
        set_loop_options(maximum_iterations=40)
        x = x * 1.3
        if jnp.sin(x) > 0.9:
            break
    return x


def _converted(fn):
    return autograph.convert(fn)


CASES = [(break_over_array, break_over_array_lax, 0.9),
         (continue_in_range, continue_in_range_lax, 0.7),
         (return_in_range, return_in_range_lax, 0.5),
         (return_in_range, return_in_range_lax, 2.9)]


@pytest.mark.parametrize("fn, hand, x", CASES)
def test_grad_through_jumps_matches_hand_written_lax(fn, hand, x):
    converted = _converted(fn)
    check(fn, x)
    expected = jax.grad(hand)(x)
    assert_close(expected, jax.grad(converted)(x))
    assert_close(expected, jax.jit(jax.grad(converted))(x))
    assert_close(expected, jax.grad(jax.jit(converted))(x))


@pytest.mark.parametrize("fn, x", [(break_over_array, 0.9), (continue_in_range, 0.7),
                                   (return_in_range, 0.5), (break_in_bounded_while, 1.0)])
def test_grad_through_jumps_matches_finite_differences(fn, x):
    converted = jax.jit(_converted(fn))
    check_grads(converted, (jnp.float32(x),), order=1, modes=["fwd", "rev"], eps=1e-3,
                atol=2e-2, rtol=2e-2)


def test_vmap_with_per_example_early_exit():
    converted = _converted(return_in_range)
    xs = [0.1, 0.5, 1.5, 2.9, 3.5]
    batched = jax.vmap(converted)(jnp.array(xs))
    assert_close(np.array([return_in_range(x) for x in xs]), batched, rtol=1e-5)
    grads = jax.vmap(jax.grad(converted))(jnp.array(xs))
    assert_close(jax.vmap(jax.grad(return_in_range_lax))(jnp.array(xs)), grads)


def break_in_traced_range(x, n):
    for _ in range(n):
        x = x * 1.2
        if x > 5.0:
            break
    return x


def bounded_break_in_traced_range(x, n):
    for _ in range(n):
        set_loop_options(maximum_iterations=20)
        x = x * 1.2
        if x > 5.0:
            break
    return x


def test_break_in_a_traced_range_under_reverse_mode():
    converted = _converted(break_in_traced_range)
    with pytest.raises(ConversionError) as info:
        jax.jit(jax.grad(converted))(1.0, 12)
    assert "maximum_iterations" in str(info.value)
    assert f"{__file__}:{break_in_traced_range.__code__.co_firstlineno + 1}" in str(
        info.value)
    tangent = jax.jit(lambda x, n: jax.jvp(lambda x: converted(x, n), (x,), (1.0,))[1])
    assert_close(1.2 ** 9, tangent(1.0, 12), rtol=1e-5)  # 1.2**9 > 5 > 1.2**8


def test_bounded_break_in_a_traced_range_grad():
    grad = jax.jit(jax.grad(_converted(bounded_break_in_traced_range)))
    assert_close(1.2 ** 9, grad(1.0, 12), rtol=1e-5)  # stops at the break
    assert_close(1.2 ** 4, grad(1.0, 4), rtol=1e-5)  # stops at the range's end
    check(bounded_break_in_traced_range, 1.0, 12)
