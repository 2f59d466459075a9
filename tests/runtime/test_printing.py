"""runtime/printing.py: Python's print for Python values, a staged print for traced ones."""

import io

import jax
import jax.numpy as jnp
import pytest

from autograph.runtime import print_


def test_python_values_are_printed_by_print():
    out = io.StringIO()
    print_(1, "a", [2], sep="-", end="$", file=out)
    assert out.getvalue() == "1-a-[2]$"
    with pytest.raises(TypeError) as original:
        print(1, sep=3)
    with pytest.raises(TypeError) as ours:
        print_(1, sep=3)
    assert str(ours.value) == str(original.value)


def test_traced_values_printed_at_run_time():
    out = io.StringIO()

    @jax.jit
    def f(x):
        print_("before", file=out)
        print_(x, x + 1, sep="/", end=";", file=out)
        print_("after", file=out)
        return x

    assert out.getvalue() == ""     # nothing printed while tracing
    f(jnp.int32(1))
    jax.effects_barrier()
    assert out.getvalue() == "before\n1/2;after\n"
    f(jnp.int32(5))
    jax.effects_barrier()
    assert out.getvalue() == "before\n1/2;after\nbefore\n5/6;after\n"
