"""A list grown in a staged loop keeps each element's weak type (runtime/lists.py,
``TensorList.weak``).

``jax.jit`` of the original unrolls ``for i in range(3): xs.append(0.5 * i)``: each
element is a Python float, a *weak* float32 under ``jit``, which a later
``xs[0] * bf16_array`` keeps in bfloat16. The staged loop writes the elements into a
strongly typed buffer; a read gives each element back the weak type Python's element
has. Where the kinds differ by position and the position is traced, or a weak value
would change dtype in the buffer, staging refuses: a loop of static trip count then
runs unrolled (as ``jax.jit`` of the original), a traced one raises a
``ConversionError`` at the append.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph


def index_floats(x):
    xs = []
    total = 0.0
    for i in range(3):
        total = total + x[i]
        xs.append(0.5 * i)
    return xs, total


def index_ints(x):
    xs = []
    total = x[0]
    for i in range(3):
        total = total + x[i]
        xs.append(i)
    return xs, total


def weak_tracer_appends(x, s):
    xs = []
    for i in range(3):
        xs.append(s * i)
    return xs


def later_product(x, s):
    xs = []
    for i in range(3):
        xs.append(s * i)
    return xs[0] * x, xs[2] * x, xs[-1] * x


def python_number_first(x, s):
    xs = [1.0]
    for i in range(3):
        xs.append(x[i] + s)
    return xs


def python_int_after_arrays(x, s):
    xs = [x[0]]
    total = x[0]
    for i in range(3):
        total = total + x[i]
        xs.append(0)
    return xs, total


def read_back_in_the_loop(x, s):
    xs = [s]
    total = x[0]
    for i in range(3):
        total = total + xs[-1] * x[i]
        xs.append(s * 2)
    return xs, total


def popped(x, s):
    xs = [s, s * 2]
    total = x[0]
    for i in range(2):
        v = xs.pop()
        total = total + v * x[i]
    return xs, total


def mixed_read_at_the_index(x, s):
    xs = [s]
    for i in range(2):
        xs.append(xs[i] * x[i])
    return xs


def written(x, s):
    xs = [x[0], x[1]]
    for i in range(2):
        xs[0] = s * i
        xs.append(x[i])
    return xs


def stacked(x, s):
    xs = []
    for i in range(3):
        xs.append(s * i)
    return autograph.stack(xs) * x


def power_of_the_index(x):
    total = x[0]
    p = 1.0
    for i in range(3):
        total = total + x[i]
        p = p * 0.9 ** i
    return total, p, p * x


CASES = [(index_floats,), (index_ints,), (weak_tracer_appends, 0.5), (later_product, 0.5),
         (python_number_first, 0.5), (python_int_after_arrays, 0.5),
         (read_back_in_the_loop, 0.5), (popped, 0.5), (mixed_read_at_the_index, 0.5),
         (written, 0.5), (stacked, 0.5), (power_of_the_index,)]


def _types(tree):
    return (jax.tree.structure(tree),
            [(jax.typeof(v).dtype, jax.typeof(v).weak_type) for v in jax.tree.leaves(tree)])


def _same(got, expected):
    """The same structure, dtypes and weak types; values equal up to float32 rounding
    (a Python float that the staged loop carries is computed in float32, where
    Python's own arithmetic is double: ``power_of_the_index``)."""
    assert _types(got) == _types(expected)
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(e, float), rtol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float32])
def test_the_elements_have_the_types_jit_of_the_original_gives(case, dtype):
    fn, *rest = case
    x = jnp.arange(1.0, 4.0, dtype=dtype)
    expected = jax.jit(fn)(x, *rest)
    _same(autograph.to_graph(fn)(x, *rest), expected)
    _same(jax.jit(autograph.convert(fn))(x, *rest), expected)


@pytest.mark.parametrize("case", CASES, ids=[c[0].__name__ for c in CASES])
def test_with_python_values_it_is_the_original(case):
    fn, *rest = case
    x = np.arange(1.0, 4.0, dtype=np.float32)
    expected = fn(x, *rest)
    got = autograph.convert(fn)(x, *rest)
    assert jax.tree.structure(got) == jax.tree.structure(expected)
    for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
        assert type(g) is type(e)
        np.testing.assert_array_equal(g, e)


def weak_in_a_traced_loop(n, s):
    xs = []
    for i in range(n):
        autograph.set_loop_options(maximum_iterations=4)
        xs.append(s * i)
    return autograph.stack(xs), xs[0] * jnp.ones(2, jnp.bfloat16)


def test_a_traced_loop_s_weak_elements_read_back_weak():
    stack, product = autograph.to_graph(weak_in_a_traced_loop)(jnp.int32(3), 0.5)
    assert jax.typeof(stack).weak_type and stack.dtype == jnp.float32
    assert product.dtype == jnp.bfloat16


def mixed_in_a_traced_loop(x, n):
    xs = [0.0]
    for i in range(n):
        autograph.set_loop_options(maximum_iterations=4)
        xs.append(xs[i] + x)
    return autograph.stack(xs)


def test_a_traced_loop_that_mixes_the_kinds_is_refused_at_the_user_s_line():
    with pytest.raises(autograph.ConversionError, match="Python numbers") as info:
        autograph.to_graph(mixed_in_a_traced_loop)(jnp.float32(1.0), jnp.int32(3))
    line = mixed_in_a_traced_loop.__code__.co_firstlineno
    assert any(f"{__file__}:{line + k}" in str(info.value) for k in (3, 4)), info.value


def python_int_in_a_traced_loop(x, n):
    xs = [x]
    for _ in range(n):
        autograph.set_loop_options(maximum_iterations=4)
        xs.append(0)
    return autograph.stack(xs)


def test_a_python_int_in_a_float_list_of_a_traced_loop_is_refused():
    # Python's list holds the int 0; the buffer would hold 0.0. Refused at the loop.
    with pytest.raises(autograph.ConversionError, match="'xs' changes type") as info:
        autograph.to_graph(python_int_in_a_traced_loop)(jnp.float32(1.0), jnp.int32(3))
    line = python_int_in_a_traced_loop.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(info.value)


def declared(x, n):
    xs = autograph.set_element_type([], jnp.float32)
    for _ in range(n):
        autograph.set_loop_options(maximum_iterations=4)
        xs.append(1)
    return autograph.stack(xs)


def test_a_declared_list_casts_appends_to_its_declared_dtype():
    out = autograph.to_graph(declared)(jnp.float32(1.0), jnp.int32(3))
    assert out.dtype == jnp.float32 and not jax.typeof(out).weak_type


def grown_in_one_branch(x, n, s):
    xs = [x * 1.0]
    if x > 0:
        for _ in range(n):
            autograph.set_loop_options(maximum_iterations=3)
            xs.append(s * 2)
    return autograph.stack(xs), len(xs)


def weak_grown_in_one_branch(x, n, s):
    xs = [s]
    if x > 0:
        for _ in range(n):
            autograph.set_loop_options(maximum_iterations=3)
            xs.append(s * 2)
    return autograph.stack(xs), len(xs)


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_a_list_grown_in_one_branch_of_a_staged_if_keeps_its_elements_kinds(x):
    # The other branch's Python list agrees with the grown buffer at its elements.
    stack, length = autograph.to_graph(grown_in_one_branch)(jnp.float32(x), 2, 0.5)
    assert int(length) == (3 if x > 0 else 1) and stack[0] == x
    assert not jax.typeof(stack).weak_type
    stack, length = autograph.to_graph(weak_grown_in_one_branch)(jnp.float32(x), 2, 0.5)
    assert int(length) == (3 if x > 0 else 1) and stack[0] == 0.5
    assert jax.typeof(stack).weak_type and stack.dtype == jnp.float32
