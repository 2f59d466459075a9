"""Trip bounds the converters derive (converters/loop_bounds.py): a ``while`` whose
test is a conjunction holding a counter's limit gets
``maximum_iterations=ag__.counter_bound(...)``, so its staged form is
reverse-differentiable without ``set_loop_options``; where the counter may move
otherwise, no bound is derived (the loop stays unbounded, as written)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.runtime.intervals import counter_bound


def newton_sqrt(c):
    x = 1.0
    i = 0
    while abs(x * x - c) > 1e-5 and i < 30:
        x = x - (x * x - c) / (2 * x)
        i += 1
    return x


def halve_until(x, limit=8):
    steps = 0
    while x > 1.0 and limit >= steps:
        x = x / 2 + 0.1 * x
        steps = steps + 2
    return x


def skipped_step(x):
    i = 0
    while x > 1.0 and i < 10:
        if x > 5.0:
            i += 1
        x = x * 0.5
    return x


def counter_in_a_closure(x):
    i = 0

    def bump():
        nonlocal i
        i -= 1

    while x > 1.0 and i < 10:
        bump()
        x = x * 0.5
        i += 1
    return x


def limit_changed_in_the_body(x):
    i, n = 0, 3
    while x > 1.0 and i < n:
        x = x * 0.5
        n = n + 1
        i += 1
    return x


def test_the_bound_is_the_counter_s_distance_to_its_limit():
    assert counter_bound(0, 30) == 30
    assert counter_bound(28, 30) == 2
    assert counter_bound(31, 30) == 0
    assert counter_bound(0, 8, 2, True) == 5       # 0, 2, 4, 6, 8
    assert counter_bound(0, 7, 3) == 3             # 0, 3, 6
    assert counter_bound(np.int32(1), 4) == 3
    assert counter_bound(jnp.int32(0), 30) is None  # a JAX value: no bound from it
    assert counter_bound(0, 2.5) is None


@pytest.mark.parametrize("fn, expected", [
    (newton_sqrt, "maximum_iterations=ag__.counter_bound(i, 30)"),
    (halve_until, "maximum_iterations=ag__.counter_bound(steps, limit, 2, True)"),
])
def test_a_counter_conjunct_bounds_the_loop(fn, expected):
    assert expected in autograph.to_code(fn)


@pytest.mark.parametrize("fn", [skipped_step, counter_in_a_closure,
                                limit_changed_in_the_body])
def test_no_bound_where_the_counter_or_limit_may_move_otherwise(fn):
    assert "counter_bound" not in autograph.to_code(fn)


@pytest.mark.parametrize("fn, x", [(newton_sqrt, 2.0), (newton_sqrt, 9.0),
                                   (halve_until, 40.0)])
def test_values_and_reverse_mode_gradient(fn, x):
    expected = fn(x)
    assert autograph.convert(fn)(x) == expected
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        np.testing.assert_allclose(compiled(jnp.float32(x)), expected, rtol=1e-5)
    got = jax.grad(autograph.convert(fn))(jnp.float32(x))
    eps = 1e-3
    finite = (fn(x + eps) - fn(x - eps)) / (2 * eps)
    np.testing.assert_allclose(got, finite, rtol=1e-2)
    np.testing.assert_allclose(jax.jit(jax.grad(autograph.convert(fn)))(jnp.float32(x)),
                               got, rtol=1e-6)


def test_a_loop_without_a_derived_bound_still_refuses_reverse_mode_at_its_line():
    with pytest.raises(autograph.ConversionError, match="no bound") as raised:
        jax.grad(autograph.convert(skipped_step))(jnp.float32(40.0))
    assert raised.value.filename == __file__
    assert raised.value.lineno == skipped_step.__code__.co_firstlineno + 2
