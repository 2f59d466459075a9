"""A loop carry whose dtype changes in a staged ``while`` or ``for`` over a traced
range: a StagingTypeError naming the variable, both types and the fix (issue 16.5),
as the scan path gives; a Python scalar that only widens still stages."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import StagingTypeError
from tests.differential import check


def while_int32_becomes_float(n):
    x = jnp.int32(0)
    i = 0
    while i < n:
        x = x + 0.5
        i += 1
    return x


def traced_range_int32_becomes_float(n):
    x = jnp.int32(0)
    for _ in range(n):
        x = x + 0.5
    return x


def while_python_int_widens(n):
    x = 0
    i = 0
    while i < n:
        x = x + 0.5
        i += 1
    return x


def static_range_int32_becomes_float(n):
    x = jnp.int32(0)
    for _ in range(3):
        x = x + 0.5 * n
    return x


@pytest.mark.parametrize("fn, offset", [(while_int32_becomes_float, 3),
                                        (traced_range_int32_becomes_float, 2)])
def test_dtype_change_names_the_variable_both_types_and_the_fix(fn, offset):
    assert autograph.convert(fn)(3) == fn(3) == 1.5
    for run in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(StagingTypeError) as info:
            run(3)
        message = str(info.value)
        assert "'x' changes type" in message
        assert "int32[] before the loop" in message and "float32[]" in message
        assert "give it its final type before the loop" in message
        assert f"{__file__}:{fn.__code__.co_firstlineno + offset}" in message
        assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_python_scalar_that_widens_still_stages():
    check(while_python_int_widens, 3, vmap=[0, 1, 4])


def test_a_static_loop_still_runs_as_jit_of_the_original_does():
    check(static_range_int32_becomes_float, 3)
