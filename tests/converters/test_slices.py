"""Item assignment in converted code: functional for JAX arrays, in place otherwise."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from tests.differential import check


def assign_forms(x, i, v):
    y = x + 0
    y[i] = v
    y[1:3] = v * 2
    y[i, ...] *= 2
    y[-1] -= v
    return y


def matrix_forms(m, i, j, v):
    y = m * 1
    y[i, j] = v
    y[:, 0] += v
    y[i] /= 2
    y[0, 1:] **= 2
    return y


def int_operators(x, v):
    y = x + 0
    y[0] //= v
    y[1] %= v
    y[2] &= v
    y[3] |= v
    y[4] ^= v
    y[5] <<= v
    y[6] >>= v
    y[7] *= v
    return y


def fill_in_loop(x):
    y = x * 0
    for i in range(x.shape[0]):
        y[i] = i * i + x[i]
    return y


def scatter_over_rows(m):
    out = m * 0
    for i, row in enumerate(m):
        out[i] = row * i
    return out


def python_containers(k):
    d = {}
    d["a"] = k
    d["a"] += 1
    lst = [1, 2, 3]
    alias = lst
    lst[0] += k
    alias[1] = 9
    lst[1:] = [7]
    return d, lst, alias is lst


X = np.arange(6.0, dtype=np.float32)
M = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def test_assignment_forms_on_arrays():
    check(assign_forms, X, 2, np.float32(5.0))
    check(assign_forms, X, -3, np.float32(1.5))


def test_matrix_assignment_forms():
    check(matrix_forms, M, 1, 2, np.float32(3.0))


def test_integer_augmented_operators():
    check(int_operators, np.arange(10, 18, dtype=np.int32), np.int32(3))


def test_item_assignment_in_a_staged_loop():
    check(fill_in_loop, X)
    check(scatter_over_rows, M)


def test_python_containers_keep_mutation_and_identity():
    check(python_containers, 4, compiled=False)
    d, lst, same = autograph.to_graph(python_containers)(4)
    assert int(d["a"]) == 5 and [int(v) for v in lst] == [5, 7] and same


def test_numpy_array_is_mutated_in_place_like_the_original():
    def poke(x):
        x[0] = 42
        return x

    x = np.zeros(3)
    assert autograph.convert(poke)(x) is x and x[0] == 42


def test_jax_array_gets_a_functional_update_under_vmap_and_grad():
    out = jax.vmap(autograph.convert(assign_forms), in_axes=(0, None, None))(
        jnp.stack([X, X + 1]), 2, jnp.float32(5.0))
    np.testing.assert_allclose(out[1], assign_forms(X + 1, 2, np.float32(5.0)))
    grad = jax.grad(lambda x: jnp.sum(autograph.convert(fill_in_loop)(x) ** 2))(jnp.ones(3))
    np.testing.assert_allclose(grad, 2 * (np.arange(3.0) ** 2 + 1))


def test_golden_code_for_item_assignment():
    assert autograph.to_code(assign_forms) == """\
def assign_forms(x, i, v):
    y = x + 0
    y = ag__.setitem(y, i, v)
    y = ag__.setitem(y, ag__.index[1:3], v * 2)
    y = ag__.setitem(y, (i, ...), 2, op='*')
    y = ag__.setitem(y, -1, v, op='-')
    return y
"""


# -- item assignment in a called function (issue 26.4) ----------------------------------

def set_first(xs, v):
    xs[0] = v


def calls_set_first(xs):
    set_first(xs, 7)
    return xs


def swap(a, i, j):
    a[i], a[j] = a[j], a[i]
    return a


def calls_swap(xs):
    xs = swap(xs, 0, 1)
    return xs


def test_an_item_write_the_caller_would_not_see_is_refused_at_the_line():
    assert autograph.convert(calls_set_first)([1, 2]) == [7, 2]    # a list: in place
    assert_refused_compiled(calls_set_first, set_first.__code__.co_firstlineno + 1,
                            "never see")


def assert_refused_compiled(fn, line, match):
    """``fn`` given an array raises a ConversionError at ``line`` of this file, under
    ``to_graph`` and inside the user's ``jax.jit``."""
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match=match) as info:
            compiled(jnp.array([1, 2]))
        assert f"{__file__}:{line}:" in str(info.value)


def test_an_item_write_into_a_returned_parameter_stages():
    assert autograph.convert(calls_swap)([1, 2]) == [2, 1]
    for compiled in (autograph.to_graph(calls_swap), jax.jit(autograph.convert(calls_swap))):
        np.testing.assert_array_equal(compiled(jnp.array([1, 2])), [2, 1])
    assert "shared='xs'" in autograph.to_code(set_first)
    assert "shared" not in autograph.to_code(swap)


# -- item assignment into a name another name holds too (issue 26.4's residue) -----------

def write_through_alias(xs):
    y = xs[:]
    z = y
    y[0] = 7
    return z[0] + z[1]


def write_without_alias(xs):
    y = xs[:]
    y[0] = 7
    return y[0] + y[1]


def test_an_item_write_an_alias_would_not_see_is_refused_at_the_line():
    assert autograph.convert(write_through_alias)([1, 2]) == write_through_alias([1, 2])
    assert_refused_compiled(write_through_alias,
                            write_through_alias.__code__.co_firstlineno + 3,
                            "'z' would never see")
    # A NumPy array changes in place: the alias sees it, as in Python.
    assert autograph.convert(write_through_alias)(np.array([1, 2])) == 9
    assert "alias='z'" in autograph.to_code(write_through_alias)


def test_an_item_write_without_an_alias_stages():
    assert autograph.convert(write_without_alias)([1, 2]) == 9
    for compiled in (autograph.to_graph(write_without_alias),
                     jax.jit(autograph.convert(write_without_alias))):
        assert int(compiled(jnp.array([1, 2]))) == 9
    assert "alias=" not in autograph.to_code(write_without_alias)
