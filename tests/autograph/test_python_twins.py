"""Python twins (issue 30, item 3): called where no JAX trace is active, a converted
function runs the user's code as written, its calls still converted; under a trace
it runs its converted code."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import api
from autograph.transpiler import PythonTwin
from tests.differential import check


def loops(n):
    total = 0
    for i in range(n):
        j = 0
        while j < i:
            if (i + j) % 3 == 0:
                total += j
            j += 1
    return total


def helper(x):
    if x > 2:
        return x - 1
    return x + 1


def calls_helper(xs):
    return [helper(x) for x in xs]


def hands_a_body_to_lax(x, n):
    return jax.lax.fori_loop(0, n, step, x)


def step(i, c):
    if c > 0:            # a Python `if` on a traced value: needs conversion
        c = c - i
    else:
        c = c + i
    return c


def defines_a_body(x, n):
    def body(i, c):
        if c > 0:
            c = c - i
        else:
            c = c + i
        return c
    return jax.lax.fori_loop(0, n, body, x)


def sorts_with_a_key(words):
    return sorted(words, key=lambda w: (-len(w), w))


def with_default(x, k=1):
    return helper(x) * k


def calls_with_default(x):
    return with_default(x)


def shows_locals(a):
    b = a + 1
    return sorted(locals())


@autograph.convert
def countdown(n):
    if n == 0:
        return 0
    return 1 + countdown(n - 1)


def _twin_code(fn):
    return api._TRANSPILER.program(fn, PythonTwin()).code


def test_python_values_run_the_twin_and_agree():
    converted = autograph.convert(loops)
    assert converted(12) == loops(12)
    twin = _twin_code(loops)
    assert "for_stmt" not in twin.co_names and "while_stmt" not in twin.co_names
    check(loops, 9, compiled=False)


def test_traced_values_run_the_converted_code():
    check(calls_helper, [1, 5, 3], compiled=False)
    assert float(autograph.to_graph(helper)(jnp.float32(5.0))) == 4.0
    assert float(jax.jit(autograph.convert(helper))(jnp.float32(1.0))) == 2.0


@pytest.mark.parametrize("fn", [hands_a_body_to_lax, defines_a_body])
def test_functions_handed_to_jax_from_python_mode_are_converted(fn):
    """The twin's call of lax.fori_loop converts ``step`` fully (its `if` is traced
    there); a function defining its body has no twin (the body must be converted)."""
    out = autograph.convert(fn)(jnp.float32(3.0), 4)
    expected = 3.0
    for i in range(4):
        expected = expected - i if expected > 0 else expected + i
    assert float(out) == expected
    with pytest.raises(jax.errors.ConcretizationTypeError):
        fn(jnp.float32(3.0), 4)          # the original cannot: conversion is needed


def test_a_changed_default_is_seen_by_the_kept_twin():
    """A callee's twin is kept while its defaults stay the ones it was made with."""
    converted = autograph.convert(calls_with_default)
    assert converted(5) == calls_with_default(5) == 4
    with_default.__defaults__ = (10,)
    try:
        assert converted(5) == calls_with_default(5) == 40
    finally:
        with_default.__defaults__ = (1,)


def test_locals_shows_the_users_names_only():
    assert autograph.convert(shows_locals)(1) == shows_locals(1) == ["a", "b"]


def test_recursion_through_the_decorator_keeps_one_frame_a_level():
    assert countdown(300) == 300
    limit_depth = 0
    try:
        countdown(10**6)
    except RecursionError:
        limit_depth = 1
    assert limit_depth == 1                      # Python's RecursionError, as the original


def test_a_twin_is_not_made_while_tracing():
    seen = []

    def probe(x):
        seen.append(isinstance(x, jax.core.Tracer))
        return helper(x)

    out = jax.jit(autograph.convert(probe))(jnp.float32(3.0))
    assert seen == [True] and float(out) == 2.0
    np.testing.assert_allclose(autograph.convert(probe)(3.0), 2.0)


def test_a_lambda_handed_to_a_builtin_keeps_the_twin():
    words = ["bb", "a", "ccc", "dd"]
    assert autograph.convert(sorts_with_a_key)(words) == sorts_with_a_key(words)
    assert _twin_code(sorts_with_a_key) is not api._TRANSPILER.program(sorts_with_a_key).code
    assert _twin_code(defines_a_body) is api._TRANSPILER.program(defines_a_body).code
