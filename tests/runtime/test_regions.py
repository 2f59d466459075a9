"""``autograph/runtime/regions.py``: an exception carries the branches and loops it came out of."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import api
from autograph.runtime.regions import regions_of


def line_of(fn, k):
    return fn.__code__.co_firstlineno + k


DEEP = (1.0, 2.0)


def raise_in_loop_in_branch(x, flag):
    if x > 0:
        while x < 10:
            if flag:
                x = x * DEEP[5]     # raised while tracing (a raise would be a check)
            x = x * 2
    return x


def constructs(error):
    return [(r.construct, r.where and r.where.lineno, r.staged) for r in regions_of(error)]


def test_staged_regions_innermost_first():
    fn = jax.jit(autograph.convert(raise_in_loop_in_branch), static_argnums=1)
    with pytest.raises(IndexError) as excinfo:
        fn(jnp.float32(1.0), True)
    assert constructs(excinfo.value) == [
        ("if", None, False),                                        # `if flag`: Python
        ("while loop", line_of(raise_in_loop_in_branch, 2), True),
        ("if", line_of(raise_in_loop_in_branch, 1), True)]


def test_python_mode_records_only_python_branches():
    # The converted code's operators in Python mode (`convert` would run the Python
    # twin, which records nothing: it is the user's code as written).
    with pytest.raises(IndexError) as excinfo:
        api._TRANSPILER.convert(raise_in_loop_in_branch)(1.0, True)
    assert constructs(excinfo.value) == [("if", None, False)]
    with pytest.raises(IndexError) as excinfo:
        autograph.convert(raise_in_loop_in_branch)(1.0, True)
    assert constructs(excinfo.value) == []


WEIGHTS = [1.0, 2.0, 3.0]


def for_over_traced_range(n):
    total = 0.0
    for i in range(n):
        total = total + WEIGHTS[operator.index(i)]
    return total


def test_a_staged_for_loop_is_recorded():
    with pytest.raises(jax.errors.TracerIntegerConversionError) as excinfo:
        jax.jit(autograph.convert(for_over_traced_range))(jnp.int32(3))
    assert constructs(excinfo.value) == [("for loop", line_of(for_over_traced_range, 2),
                                          True)]
