"""Reverse and forward mode through converted control flow.

Each loop form is differentiated three ways and compared: finite differences
(``jax.test_util.check_grads``), the same computation written by hand with
``jax.lax``, and the converted function under ``grad`` / ``jit(grad)`` /
``grad(jit)`` / ``value_and_grad`` / ``jacrev`` / ``jvp`` / ``jacfwd``.
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

# -- the loop forms ------------------------------------------------------------------


def branch(x):
    if x > 1.0:
        y = jnp.sin(x) * x
    else:
        y = x * x * x
    return y


def branch_lax(x):
    return lax.cond(x > 1.0, lambda x: jnp.sin(x) * x, lambda x: x * x * x, x)


def static_range(x):
    for i in range(6):
        x = jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01
    return x


def static_range_lax(x):
    return lax.fori_loop(0, 6, lambda i, x: jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01, x)


def over_array(w):
    total = 0.0
    for v in jnp.linspace(0.0, 1.0, 5):
        total = total * 0.8 + jnp.tanh(v * w)
    return total


def over_array_lax(w):
    def step(total, v):
        return total * 0.8 + jnp.tanh(v * w), None

    return lax.scan(step, 0.0, jnp.linspace(0.0, 1.0, 5))[0]


def bounded_while(x):
    y = x
    while y < 10.0:
        set_loop_options(maximum_iterations=30)
        y = y * 1.3 + jnp.sin(x)
    return y


def bounded_while_lax(x, trips):
    """The same loop with its trip count known: a fori_loop."""
    return lax.fori_loop(0, trips, lambda i, y: y * 1.3 + jnp.sin(x), x)


def bounded_traced_range(x, n):
    for i in range(n):
        set_loop_options(maximum_iterations=8)
        x = jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01
    return x


def checkpointed_range(x):
    for i in range(6):
        set_loop_options(checkpoint=True)
        x = jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01
    return x


def checkpointed_while(x):
    y = x
    while y < 10.0:
        set_loop_options(maximum_iterations=30, checkpoint=True)
        y = y * 1.3 + jnp.sin(x)
    return y


def nested(x):
    for i in range(3):
        steps = 0
        while x < 4.0 * (i + 1):
            set_loop_options(maximum_iterations=20)
            x = x * 1.2 + 0.3
            steps += 1
        if steps > 2:
            x = x - jnp.cos(x)
    return x


def nested_python(x):
    """``nested`` for a Python float, step by step (the oracle for its value)."""
    import math
    for i in range(3):
        steps = 0
        while x < 4.0 * (i + 1):
            x = x * 1.2 + 0.3
            steps += 1
        if steps > 2:
            x = x - math.cos(x)
    return x


def unbounded_while(x):
    y = x
    while y < 10.0:
        y = y * 1.3 + jnp.sin(x)
    return y


def unbounded_traced_range(x, n):
    for _ in range(n):
        x = jnp.sin(x) * 0.9 + x * 0.5
    return x


def vector_loop(v):
    acc = jnp.zeros(3)
    k = 0
    while jnp.sum(acc) < 5.0:
        set_loop_options(maximum_iterations=50)
        acc = acc + jnp.abs(jnp.sin(v * (k + 1)))
        k += 1
    return acc


# -- values agree with Python before anything is differentiated ----------------------


@pytest.mark.parametrize("fn, arg", [(branch, 2.0), (branch, 0.5), (static_range, 0.7),
                                     (over_array, 1.5), (bounded_while, 1.0),
                                     (checkpointed_range, 0.7), (checkpointed_while, 1.0)])
def test_values_match_the_original(fn, arg):
    check(fn, arg)


def test_nested_value_matches_python():
    assert_close(nested_python(0.5), autograph.to_graph(nested)(0.5), rtol=1e-5)


# -- reverse mode against hand-written lax and finite differences ---------------------


GRAD_CASES = [
    (branch, branch_lax, 2.0),
    (branch, branch_lax, 0.5),
    (static_range, static_range_lax, 0.7),
    (over_array, over_array_lax, 1.5),
    (checkpointed_range, static_range_lax, 0.7),
]


@pytest.mark.parametrize("fn, hand, x", GRAD_CASES)
def test_grad_matches_hand_written_lax(fn, hand, x):
    converted = autograph.convert(fn)
    expected = jax.grad(hand)(x)
    assert_close(expected, jax.grad(converted)(x))
    assert_close(expected, jax.jit(jax.grad(converted))(x))
    assert_close(expected, jax.grad(jax.jit(converted))(x))
    value, grad = jax.value_and_grad(converted)(x)
    assert_close((hand(x), expected), (value, grad))


@pytest.mark.parametrize("fn, x", [(branch, 2.0), (static_range, 0.7), (over_array, 1.5),
                                   (bounded_while, 1.0), (checkpointed_range, 0.7),
                                   (checkpointed_while, 1.0), (nested, 0.5)])
def test_grad_matches_finite_differences(fn, x):
    converted = jax.jit(autograph.convert(fn))
    check_grads(converted, (jnp.float32(x),), order=1, modes=["fwd", "rev"], eps=1e-3,
                atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("fn", [bounded_while, checkpointed_while])
def test_bounded_while_grad_matches_a_loop_of_known_length(fn):
    x = 1.0
    trips = 0
    y = x
    while y < 10.0:  # the trip count, found in Python
        y = y * 1.3 + np.sin(x)
        trips += 1
    expected = jax.grad(lambda x: bounded_while_lax(x, trips))(x)
    converted = autograph.convert(fn)
    assert_close(expected, jax.grad(converted)(x))
    assert_close(expected, jax.jit(jax.grad(converted))(x))
    assert_close(expected, jax.grad(jax.jit(converted))(x))


def test_bounded_traced_range_grad():
    grad = jax.jit(jax.grad(autograph.convert(bounded_traced_range)))
    for n in (0, 3, 8):
        expected = jax.grad(lambda x, n=n: lax.fori_loop(
            0, n, lambda i, x: jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01, x))(0.7)
        assert_close(expected, grad(0.7, n))


def test_bounded_loop_stops_at_the_bound():
    """A loop that would run longer stops after ``maximum_iterations`` iterations."""
    assert autograph.to_graph(bounded_traced_range)(0.7, 100) == pytest.approx(
        float(static_range_lax_n(0.7, 8)), rel=1e-5)


def static_range_lax_n(x, n):
    return lax.fori_loop(0, n, lambda i, x: jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01, x)


def test_jacrev_and_jacfwd_of_a_vector_loop():
    v = jnp.array([0.3, 0.5, 0.9])
    converted = autograph.convert(vector_loop)
    rev = jax.jacrev(converted)(v)
    fwd = jax.jacfwd(converted)(v)
    assert rev.shape == (3, 3)
    assert_close(fwd, rev, rtol=1e-4, atol=1e-5)
    check_grads(jax.jit(converted), (v,), order=1, modes=["rev"], eps=1e-3, atol=2e-2,
                rtol=2e-2)


def test_second_order_through_a_static_loop():
    converted = autograph.convert(static_range)
    assert_close(jax.grad(jax.grad(static_range_lax))(0.7),
                 jax.grad(jax.grad(converted))(0.7), rtol=1e-4)


# -- forward mode works bounded or not -------------------------------------------------


@pytest.mark.parametrize("fn, x", [(unbounded_while, 1.0), (bounded_while, 1.0),
                                   (branch, 2.0), (static_range, 0.7), (over_array, 1.5)])
def test_forward_mode_everywhere(fn, x):
    converted = autograph.convert(fn)
    check_grads(jax.jit(converted), (jnp.float32(x),), order=1, modes=["fwd"], eps=1e-3,
                atol=2e-2, rtol=2e-2)
    assert_close(jax.jacfwd(converted)(x), jax.jvp(converted, (x,), (1.0,))[1])


def test_forward_mode_through_an_unbounded_traced_range():
    converted = autograph.convert(unbounded_traced_range)
    tangent = jax.jit(lambda x, n: jax.jvp(lambda x: converted(x, n), (x,), (1.0,))[1])
    expected = jax.jvp(lambda x: lax.fori_loop(0, 4, lambda i, x: jnp.sin(x) * 0.9 + x * 0.5,
                                               x), (0.7,), (1.0,))[1]
    assert_close(expected, tangent(0.7, 4))


# -- an unbounded loop under reverse mode: our error, at the user's loop ---------------


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("transform", [
    lambda f: jax.grad(f)(1.0),
    lambda f: jax.jit(jax.grad(f))(1.0),
    lambda f: jax.grad(jax.jit(f))(1.0),
    lambda f: jax.value_and_grad(f)(1.0),
    lambda f: jax.jacrev(f)(1.0),
    lambda f: jax.vjp(f, 1.0)[1](1.0),
], ids=["grad", "jit_grad", "grad_jit", "value_and_grad", "jacrev", "vjp"])
def test_unbounded_while_under_reverse_mode_names_the_loop(transform):
    with pytest.raises(ConversionError) as info:
        transform(autograph.convert(unbounded_while))
    message = str(info.value)
    assert f"{__file__}:{_line_of(unbounded_while, 'while y < 10.0')}" in message
    assert "maximum_iterations" in message
    assert "reverse mode" in message


def test_unbounded_traced_range_under_reverse_mode_names_the_loop():
    converted = autograph.convert(unbounded_traced_range)
    with pytest.raises(ConversionError) as info:
        jax.jit(jax.grad(converted))(0.7, 3)
    assert f"{__file__}:{_line_of(unbounded_traced_range, 'for _ in range(n)')}" in str(
        info.value)
    assert "maximum_iterations" in str(info.value)


def nested_unbounded(x, n):
    total = 0.0
    for i in range(n):
        for j in range(i):
            total += x[i] * x[j]
    return total


def nested_outer_bounded(x, n):
    total = 0.0
    for i in range(n):
        set_loop_options(maximum_iterations=8)
        for j in range(i):
            total += x[i] * x[j]
    return total


@pytest.mark.parametrize("transform", [
    lambda f, x, n: jax.jit(jax.grad(f))(x, n),
    lambda f, x, n: jax.grad(jax.jit(f))(x, n),
    lambda f, x, n: jax.vmap(jax.grad(jax.jit(f)), in_axes=(0, None))(x[None], n),
    lambda f, x, n: jax.jit(jax.vjp(jax.jit(f), x, n)[1])(1.0),
], ids=["jit_grad", "grad_jit", "vmap_grad_jit", "vjp_jit"])
def test_a_loop_nested_in_an_unbounded_one_leaves_the_guard_to_it(transform):
    """The inner loop binds no guard (one equation less); the outer loop's names it,
    and once the outer loop is bounded the inner loop's guard speaks."""
    from benchmarks.first_call import primitive_counts

    x, n = jnp.linspace(0.0, 1.0, 8), jnp.int32(5)
    for fn, line, guards in ((nested_unbounded, "for i in range(n)", 1),
                             (nested_outer_bounded, "for j in range(i)", 1)):
        converted = autograph.convert(fn)
        counts = primitive_counts(jax.make_jaxpr(converted)(x, n))
        assert counts["autograph_reverse_guard"] == guards
        with pytest.raises(ConversionError) as info:
            transform(converted, x, n)
        assert f"{__file__}:{_line_of(fn, line)}" in str(info.value)
        tangent = jax.jvp(lambda x, f=converted: f(x, n), (x,), (jnp.ones(8),))[1]
        assert_close(tangent, jax.jvp(lambda x, f=fn: f(x, 5), (x,), (jnp.ones(8),))[1])


def test_the_guard_costs_nothing_when_not_differentiated():
    """The compiled program of a converted unbounded loop is the hand-written one."""
    import re

    def hand(x):
        return lax.while_loop(lambda y: y < 10.0, lambda y: y * 1.3 + jnp.sin(x), x)

    def opcodes(fn):
        text = jax.jit(fn).lower(1.0).compile().as_text()
        return re.findall(r"^\s*(?:ROOT )?\S+ = .*? ([\w-]+)\(", text, re.MULTILINE)

    assert opcodes(autograph.convert(unbounded_while)) == opcodes(hand)
    assert jax.jit(autograph.convert(unbounded_while))(1.0) == jax.jit(hand)(1.0)


# -- options ---------------------------------------------------------------------------


def test_checkpoint_puts_the_body_under_remat():
    jaxpr = str(jax.make_jaxpr(jax.grad(autograph.convert(checkpointed_range)))(0.7))
    assert "checkpoint" in jaxpr or "remat" in jaxpr
    plain = str(jax.make_jaxpr(jax.grad(autograph.convert(static_range)))(0.7))
    assert "checkpoint" not in plain and "remat" not in plain


def three_layers(w, x):
    for _ in range(50):
        h = jnp.tanh(w @ x)
        h = jnp.tanh(w @ h)
        x = x + 0.01 * jnp.tanh(w @ h)
    return jnp.sum(x)


def three_layers_checkpointed(w, x):
    for _ in range(50):
        set_loop_options(checkpoint=True)
        h = jnp.tanh(w @ x)
        h = jnp.tanh(w @ h)
        x = x + 0.01 * jnp.tanh(w @ h)
    return jnp.sum(x)


def test_checkpoint_keeps_less_for_the_backward_pass():
    w, x = jnp.eye(64) * 0.5, jnp.ones((64, 16))

    def temp_bytes(fn):
        grad = jax.jit(jax.grad(autograph.convert(fn)))
        return grad.lower(w, x).compile().memory_analysis().temp_size_in_bytes

    assert temp_bytes(three_layers_checkpointed) < temp_bytes(three_layers)
    assert_close(jax.grad(autograph.convert(three_layers))(w, x),
                 jax.grad(autograph.convert(three_layers_checkpointed))(w, x))


def traced_bound(x, n):
    while x < 10.0:
        set_loop_options(maximum_iterations=n)
        x = x * 2.0
    return x


def negative_bound(x):
    while x < 10.0:
        set_loop_options(maximum_iterations=-1)
        x = x * 2.0
    return x


def test_maximum_iterations_must_be_a_static_int():
    with pytest.raises(ConversionError) as info:
        jax.jit(autograph.convert(traced_bound))(1.0, 5)
    assert f"{__file__}:{_line_of(traced_bound, 'while x < 10.0')}" in str(info.value)
    assert "Python int" in str(info.value)
    with pytest.raises(ConversionError, match=">= 0"):
        jax.jit(autograph.convert(negative_bound))(1.0)


def test_python_values_ignore_the_options():
    assert autograph.convert(bounded_while)(1.0) == bounded_while(1.0)
    assert autograph.convert(checkpointed_while)(1.0) == checkpointed_while(1.0)
    assert autograph.convert(traced_bound)(1.0, 1) == traced_bound(1.0, 1) == 16.0


def unknown_option(x):
    while x < 10.0:
        set_loop_options(checkpointing=True)
        x = x * 2.0
    return x


def test_options_reach_the_runtime_call():
    code = autograph.to_code(checkpointed_while)
    assert ("ag__.while_stmt(loop_test, loop_body, (y,), maximum_iterations=30, "
            "checkpoint=True, compares=('y', 10.0))") in code
    with pytest.raises(ConversionError) as info:
        autograph.to_code(unknown_option)
    assert "maximum_iterations, checkpoint" in str(info.value)
    assert f"{__file__}:{unknown_option.__code__.co_firstlineno + 2}" in str(info.value)
