"""A staged loop whose Python-number start meets a weakly typed tracer
(runtime/loop_probe.py, ``may_stay_weak``).

``jax.jit`` of the original unrolls ``s = 0; for ...: s = s + x`` for ``x`` a Python
float argument (a weakly typed tracer): ``s`` comes out a *weak* float32, which a
later ``s * bf16_array`` keeps in bfloat16. JAX's own loops promote such a start to
a strong float32 (and the later product to float32). The staged loop keeps it weak,
as Python's unrolled value is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from tests.runtime.test_trace_counts import RUNS, tick


def over_a_range(x, s):
    total = 0
    for _ in range(3):
        total = total + s
    return total * x


def over_an_array(x, s):
    total = 0
    for row in x:
        total = total + s + row * 0
    return total


def nested(x, s):
    total = 0
    for _ in range(2):
        for _ in range(2):
            total = total + s
    return total * x


def int_start_int_weak(x, n):
    total = 0
    for _ in range(3):
        total = total + n
    return total * x


def bool_start(x, s):
    flag = False
    for _ in range(3):
        flag = flag + s
    return flag * x


def strong_step(x, s):
    total = 0
    for i in range(3):
        total = total + x[i]
    return total * s


CASES = [(over_a_range, 2.5), (over_an_array, 2.5), (nested, 0.5),
         (int_start_int_weak, 2), (bool_start, 1.5), (strong_step, 2.5)]


def _types(tree):
    return [(jax.typeof(v).dtype, jax.typeof(v).weak_type, np.asarray(v, float).tolist())
            for v in jax.tree.leaves(tree)]


@pytest.mark.parametrize("fn,s", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_loop_gives_the_dtype_and_weak_type_jit_of_the_original_gives(fn, s):
    x = jnp.arange(1.0, 4.0, dtype=jnp.bfloat16)
    expected = _types(jax.jit(fn)(x, s))
    assert _types(autograph.to_graph(fn)(x, s)) == expected
    assert _types(jax.jit(autograph.convert(fn))(x, s)) == expected


@pytest.mark.parametrize("fn,s", CASES, ids=[f.__name__ for f, _ in CASES])
def test_with_python_values_it_is_the_original(fn, s):
    x = np.arange(1.0, 4.0, dtype=np.float32)
    got = autograph.convert(fn)(x, s)
    np.testing.assert_array_equal(got, fn(x, s))
    assert type(got) is type(fn(x, s))


def test_the_weak_result_keeps_a_later_product_in_bfloat16():
    def scale(x, s):
        total = 0
        for _ in range(4):
            total = total + s
        return x * total

    x = jnp.ones(3, jnp.bfloat16)
    assert jax.jit(scale)(x, 0.5).dtype == jnp.bfloat16
    assert autograph.to_graph(scale)(x, 0.5).dtype == jnp.bfloat16


def counted(x, s):
    total = 0
    for _ in range(3):
        tick("weak body")
        total = total + s
    return total * x


def counted_same(x, s):
    total = 0
    for _ in range(3):
        tick("same body")
        total = total + s
    return total * x


def test_a_promoting_weak_start_runs_the_body_twice_as_jax_would():
    # One probe, one trace; JAX's loop alone traces a promoting start twice too.
    RUNS.clear()
    jax.make_jaxpr(autograph.convert(counted))(jnp.ones(3), 2.5)
    assert RUNS["weak body"] == 2, dict(RUNS)


def counted_same_float(x, s):
    total = 0.0
    for _ in range(3):
        tick("same float body")
        total = total + s
    return total * x


def test_a_weak_tracer_of_the_start_s_own_dtype_is_not_probed_for():
    # 0.0 + s for a weak float s stays a weak float: JAX's loop traces it once, and
    # so do we.
    RUNS.clear()
    jax.make_jaxpr(autograph.convert(counted_same_float))(jnp.ones(3), 2.0)
    assert RUNS["same float body"] == 1, dict(RUNS)
    # 0 + n for a weak int n: no probe either; the one more run is int_overflow's
    # abstract step, which a loop carrying a Python int takes to evaluate its
    # counters (here total reads n, so it is not one).
    RUNS.clear()
    jax.make_jaxpr(autograph.convert(counted_same))(jnp.ones(3), 2)
    assert RUNS["same body"] == 2, dict(RUNS)


def bool_start_in_a_traced_loop(x, s):
    flag = True
    for _ in range(x):
        flag = flag + s
    return flag


def test_a_bool_start_that_becomes_a_float_in_a_traced_loop_is_named_at_its_line():
    # JAX's loop never promotes a bool start (its bool is not weakly typed): the error
    # names the variable and the line, where JAX's names a carry position.
    assert bool_start_in_a_traced_loop(3, 0.5) == 2.5
    with pytest.raises(autograph.ConversionError, match=r"'flag' changes type") as info:
        autograph.to_graph(bool_start_in_a_traced_loop)(jnp.int32(3), 0.5)
    assert f"{__file__}:{bool_start_in_a_traced_loop.__code__.co_firstlineno + 2}" \
        in str(info.value)


# A weak tracer the body reaches through an attribute or a global, not a closure
# cell: jax.jit of the original keeps the unrolled start weak, so must the loop.

class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def total(self, x):
        total = 0
        for _ in range(3):
            total = total + self.scale
        return total * x


class Config:
    pass


SCALE = None
CONFIG = Config()


def through_an_attribute(x, s):
    return Scaler(s).total(x)


def through_a_closed_over_object(x, s):
    box = Scaler(s)
    total = 0
    for _ in range(3):
        total = total + box.scale
    return total * x


def through_a_chain_of_attributes(x, s):
    box = Scaler(Scaler(s))
    total = 0
    for _ in range(3):
        total = total + box.scale.scale
    return total * x


def through_a_global(x, s):
    global SCALE
    SCALE = s
    total = 0
    for _ in range(3):
        total = total + SCALE
    SCALE = None
    return total * x


def through_a_global_s_attribute(x, s):
    CONFIG.scale = s
    total = 0
    for _ in range(3):
        total = total + CONFIG.scale
    del CONFIG.scale
    return total * x


def through_a_nested_loop(x, s):
    box = Scaler(s)
    total = 0
    for _ in range(2):
        for _ in range(2):
            total = total + box.scale
    return total * x


REACHED = [(through_an_attribute, 2.5), (through_a_closed_over_object, 2.5),
           (through_a_chain_of_attributes, 0.5), (through_a_global, 2.5),
           (through_a_global_s_attribute, 1.5), (through_a_nested_loop, 0.5)]


@pytest.mark.parametrize("fn,s", REACHED, ids=[f.__name__ for f, _ in REACHED])
def test_a_weak_tracer_reached_through_an_attribute_or_a_global_keeps_the_start_weak(fn, s):
    x = jnp.arange(1.0, 4.0, dtype=jnp.bfloat16)
    expected = _types(jax.jit(fn)(x, s))
    assert _types(autograph.to_graph(fn)(x, s)) == expected
    assert _types(jax.jit(autograph.convert(fn))(x, s)) == expected
