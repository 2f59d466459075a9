"""Exits that Python decides stay Python (issue 16.2): code Python never reaches is
not traced, whatever the staged branches before it do."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from tests.differential import assert_same_python


def recursive_abs(x, depth):
    if depth == 0:
        if x > 0:
            return x
        return -x
    return recursive_abs(x, depth - 1)


def recursive_first_above(x, depth):
    if depth == 0:
        for i in range(3):
            if x > i:
                return i * 1.0
        return -1.0
    return recursive_first_above(x, depth - 1)


def by_mode(x, mode):
    if mode == "scalar":
        y = x * 2
        if y > 1:
            return y
        return -y
    return x.sum(axis=1)      # only meaningful for a matrix


def by_mode_else(x, mode):
    if mode != "scalar":
        y = x.sum(axis=1)
    else:
        if x > 0:
            return x
        else:
            return -x
    return y


def by_mode_raising(x, mode):
    if mode == "scalar":
        if x > 0:
            return x
        raise ValueError("negative")
    return x.sum(axis=1)


def break_decided_in_python(x, mode):
    for _ in range(3):
        if mode == "a":
            if x > 0:
                x = x + 1
                break
            else:
                x = x - 1
                break
        x = x.sum(axis=1)
    return x


def while_true_break(x, mode):
    while True:
        if mode == "a":
            if x > 0:
                x = x + 1
            break
        x = x.sum(axis=1)
    return x


def continue_decided_in_python(x, mode):
    total = x * 0
    for i in range(3):
        if mode == "a":
            if x > i:
                total = total + i
                continue
            else:
                continue
        total = total + x.sum(axis=1)
    return total


CASES = [
    (recursive_abs, (1.5, 3), [-2.0, 0.5, 3.0]),
    (recursive_abs, (-1.5, 0), [-2.0, 0.5, 3.0]),
    (recursive_first_above, (1.5, 2), [-2.0, 0.5, 3.0]),
    (recursive_first_above, (-1.5, 0), [-2.0, 0.5, 3.0]),
    (by_mode, (0.25, "scalar"), [-2.0, 0.25, 3.0]),
    (by_mode_else, (-0.5, "scalar"), [-2.0, 0.25, 3.0]),
    (break_decided_in_python, (1.5, "a"), [-2.0, 0.5, 3.0]),
    (break_decided_in_python, (-1.5, "a"), None),
    (while_true_break, (1.5, "a"), [-2.0, 0.5, 3.0]),
    (continue_decided_in_python, (1.5, "a"), [-2.0, 0.5, 3.0]),
]


@pytest.mark.parametrize("fn, args, batch", CASES)
def test_code_after_a_python_exit_is_not_traced(fn, args, batch):
    expected = fn(*args)
    assert_same_python(expected, autograph.convert(fn)(*args))
    static = jax.jit(autograph.convert(fn), static_argnums=1)
    np.testing.assert_allclose(static(jnp.float32(args[0]), args[1]), expected)
    np.testing.assert_allclose(
        autograph.to_graph(fn, static_argnums=1)(jnp.float32(args[0]), args[1]), expected)
    if batch is not None:
        out = jax.vmap(lambda x: autograph.convert(fn)(x, args[1]))(jnp.asarray(batch))
        np.testing.assert_allclose(out, [fn(x, args[1]) for x in batch])


def test_the_other_mode_still_works():
    m = jnp.arange(6.0).reshape(2, 3)
    for fn in (by_mode, by_mode_else, by_mode_raising):
        np.testing.assert_allclose(
            jax.jit(autograph.convert(fn), static_argnums=1)(m, "matrix"), fn(m, "matrix"))


def test_python_exit_leaves_no_flag_to_stage():
    # The flag set in both branches of the staged `if` stays Python: nothing after
    # it is staged (one cond in the program, and no recursion).
    jaxpr = jax.make_jaxpr(autograph.convert(recursive_abs), static_argnums=1)(1.0, 5)
    assert str(jaxpr).count("cond[") == 1
    code = autograph.to_code(by_mode)
    assert "did_return" not in code          # the rest is the `else`: no flag at all


def test_a_raise_on_one_branch_of_a_python_exit():
    with pytest.raises(ValueError, match="negative"):
        autograph.convert(by_mode_raising)(-1.0, "scalar")
