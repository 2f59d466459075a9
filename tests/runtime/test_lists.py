"""The list, item-assignment and iteration operators, called directly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import runtime as ag
from autograph.runtime.iterables import Scanned
from autograph.runtime.lists import TensorList, TypedList, stack
from tests.differential import check


def test_python_list_operators_mutate_and_return_the_same_list():
    lst = [1, 2]
    assert ag.list_append(lst, 3) is lst and lst == [1, 2, 3]
    same, item = ag.list_pop(lst)
    assert same is lst and item == 3 and lst == [1, 2]
    assert ag.list_pop(lst, 0) == (lst, 1)
    assert ag.len_(lst) == 1 and ag.len_("abc") == 3
    with pytest.raises(IndexError):
        ag.list_pop([])


def test_other_append_receivers_are_called_as_they_are():
    from collections import deque
    d = deque([1])
    assert ag.list_append(d, 2) is d and list(d) == [1, 2]


def test_set_element_type_outside_a_trace_returns_the_list():
    lst = []
    assert ag.set_element_type(lst, jnp.float32) is lst


def test_set_element_type_under_a_trace_remembers_the_type():
    def f(x):
        z = ag.set_element_type([], jnp.float32, (2,))
        assert type(z) is TypedList and z.element.shape == (2,)
        return stack(z).shape[0] + x

    assert jax.jit(f)(1) == 1


def test_tensor_list_reads_writes_and_pops():
    lst = TensorList(jnp.arange(5.0), jnp.int32(3))
    assert lst[0] == 0 and lst[-1] == 2 and lst[jnp.int32(-2)] == 1
    lst = ag.setitem(lst, -1, jnp.float32(9.0))
    assert lst[2] == 9
    lst, item = ag.list_pop(lst)
    assert item == 9 and int(ag.len_(lst)) == 2
    lst = ag.list_append(lst, jnp.float32(7))  # outside staged loops the buffer grows
    assert int(ag.len_(lst)) == 3 and lst[2] == 7 and lst.capacity == 6
    with pytest.raises(TypeError, match=r"autograph.stack\(lst\)"):
        len(lst)
    with pytest.raises(TypeError, match="same shape"):
        ag.list_append(lst, jnp.ones(2))


def _jax_indexing_read(buffer, length, index):
    """What a read of a staged list gave through JAX's own indexing: a negative
    index counted from the traced length, then ``buffer[index]``."""
    return buffer[jnp.where(index < 0, index + length, index)]


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.int8, jnp.uint8])
def test_reads_at_a_traced_length_are_jax_indexing_reads(dtype):
    buffer = jnp.arange(10.0, 16.0)
    read = jax.jit(lambda length, i: TensorList(buffer, length)[i])
    reference = jax.jit(_jax_indexing_read)
    for length in (0, 1, 4, 6):
        for i in range(-9, 9):
            if i < 0 and dtype == jnp.uint8:
                continue
            index = jnp.asarray(i, dtype)
            assert read(jnp.int32(length), index) == reference(buffer, jnp.int32(length),
                                                               index)
            # A Python index (past the capacity too: JAX's indexing of it, as before).
            static = jax.jit(lambda length, i=i: TensorList(buffer, length)[i])
            assert static(jnp.int32(length)) == reference(buffer, jnp.int32(length),
                                                          jnp.int32(i))


def test_a_read_at_a_traced_length_is_a_dynamic_slice():
    lst = TensorList(jnp.zeros((5, 2)), jnp.int32(3))
    for index in (-1, 2, jnp.int32(-2)):
        jaxpr = jax.make_jaxpr(lambda length, i=index: TensorList(lst.buffer, length)[i])(
            lst.length).jaxpr
        names = {eqn.primitive.name for eqn in jaxpr.eqns}
        assert names <= {"add", "lt", "select_n", "dynamic_slice", "squeeze", "slice"}, names
    np.testing.assert_array_equal(TensorList(jnp.arange(6.0).reshape(3, 2), jnp.int32(2))[-1],
                                  [2.0, 3.0])


def test_tensor_list_is_a_pytree():
    lst = TensorList(jnp.zeros((4, 2)), jnp.int32(1))
    leaves, treedef = jax.tree_util.tree_flatten(lst)
    assert len(leaves) == 2
    back = jax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(back, TensorList) and back.buffer.shape == (4, 2)
    doubled = jax.jit(lambda t: ag.list_append(t, jnp.ones(2)))(lst)
    assert int(doubled.length) == 2


def test_stack_of_a_tensor_list_is_its_padded_buffer():
    lst = TensorList(jnp.array([1.0, 2.0, 0.0, 0.0]), jnp.int32(2))
    np.testing.assert_array_equal(stack(lst), [1, 2, 0, 0])
    np.testing.assert_array_equal(stack([1.0, 2.0]), [1, 2])


def test_setitem_dispatch():
    x = jnp.zeros(3)
    y = ag.setitem(x, 1, 5.0)
    assert y is not x and y[1] == 5 and x[1] == 0
    assert ag.setitem(y, 1, 2.0, op="+")[1] == 7
    assert ag.setitem(y, 1, 2.0, op="-")[1] == 3
    n = np.zeros(3)
    assert ag.setitem(n, ag.index[0:2], 1.0) is n and n.tolist() == [1, 1, 0]
    d = {"k": [1]}
    assert ag.setitem(d, "k", [2], op="+") is d and d == {"k": [1, 2]}


def test_enumerate_and_zip_stay_python_for_python_iterables():
    assert isinstance(ag.enumerate_([1, 2]), enumerate)
    assert list(ag.enumerate_("ab", 1)) == [(1, "a"), (2, "b")]
    assert list(ag.zip_([1, 2], "ab")) == [(1, "a"), (2, "b")]
    assert isinstance(ag.zip_(np.ones(2), np.ones(2)), zip)


def test_enumerate_and_zip_of_traced_arrays_are_scanned():
    def f(xs, ys):
        e = ag.enumerate_(xs, 2)
        z = ag.zip_(xs, ys[:3], e)
        assert isinstance(e, Scanned) and isinstance(z, Scanned)
        assert z.length == 3
        return ag.for_stmt(z, lambda item, s: s + item[0] * item[2][0], (0.0,))

    out = jax.jit(f)(jnp.arange(3.0), jnp.ones(5))
    assert out == sum(x * (i + 2) for i, x in enumerate(range(3)))
    with pytest.raises(ValueError, match="argument 2 is longer than argument 1"):
        jax.jit(lambda a, b: ag.zip_(a, b, strict=True).xs)(jnp.ones(2), jnp.ones(3))


# -- a list whose items a loop writes keeps its length (issue 26.7) ---------------------

def writes_items_in_a_while(a, b, x):
    y = [a, b]
    while x > 0:
        x -= 1
        y[0] += 2
    return y


def writes_items_in_a_traced_for(a, b, n):
    y = [a, b]
    for k in range(n):
        y[k % 2] += 2
        if y[0] > 4:
            y[1] = y[1] - 1
    return y


def reads_items_in_the_condition(a, b):
    y = [a, b]
    while y[1] <= 12:
        y[0] += 1
        y[1] *= 2
    return y


@pytest.mark.parametrize("fn, args", [(writes_items_in_a_while, (1, 2, 3)),
                                      (writes_items_in_a_traced_for, (1, 2, 5)),
                                      (reads_items_in_the_condition, (1, 2))])
def test_a_list_with_item_writes_only_keeps_its_length(fn, args):
    check(fn, *args)
    out = autograph.to_graph(fn)(*args)
    assert type(out) is list and len(out) == 2


def powers_listed(xs):
    out = []
    p = 1
    for x in xs:
        out.append(p)
        p = p * x
    return out


def powers_listed_traced_count(n):
    out = []
    p = 1
    for _ in range(n):
        autograph.set_loop_options(maximum_iterations=5)
        out.append(p)
        p = p * 1.5
    return out


def zeros_between(xs):
    out = [jnp.float32(0)]
    for x in xs:
        out.append(x)
        out.append(0)
    return out


def test_elements_of_another_dtype_are_not_cast_into_the_first_ones_buffer():
    """Python's list holds 1, then 1.5 and 2.25: a staged buffer of the first
    element's dtype would truncate the others (was: [1, 1, 2], silently). The loop
    runs as Python, as jax.jit of the original does, with its types."""
    xs = jnp.array([1.5, 1.5, 1.5])
    expected = jax.jit(powers_listed)(xs)
    assert powers_listed([1.5, 1.5, 1.5]) == [1, 1.5, 2.25]
    for compiled in (autograph.to_graph(powers_listed), jax.jit(autograph.convert(powers_listed))):
        got = compiled(xs)
        assert [float(g) for g in got] == [1, 1.5, 2.25]
        assert [g.dtype for g in got] == [e.dtype for e in expected]


def test_elements_of_another_dtype_in_a_loop_that_cannot_unroll_are_refused():
    with pytest.raises(autograph.ConversionError, match="holds int32 elements") as raised:
        autograph.to_graph(powers_listed_traced_count)(jnp.int32(3))
    assert raised.value.filename == __file__
    assert raised.value.lineno == powers_listed_traced_count.__code__.co_firstlineno + 5


def test_a_weak_python_scalar_that_keeps_its_value_shares_the_buffer():
    xs = jnp.ones(2)
    assert zeros_between([1.0, 1.0]) == [0.0, 1.0, 0, 1.0, 0]
    got = autograph.to_graph(zeros_between)(xs)
    assert [float(g) for g in got] == [0.0, 1.0, 0.0, 1.0, 0.0]


# -- as many appends in both branches of a staged if: the length stays known ----------

def normalized_rows(m, eps=1e-6):
    out = []
    for row in m:
        n = jnp.sqrt(jnp.sum(row * row))
        if n < eps:
            out.append(row)
        else:
            out.append(row / n)
    return jnp.stack(out)


def labelled_by_sign(xs):
    out = []
    for x in xs:
        if x > 1:
            out.append(x)
            out.append(x * 2)
        elif x > 0:
            out.append(x + 10)
            out.append(x - 10)
        else:
            out.append(-x)
            out.append(x * 0)
    return out


def appended_in_one_branch(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x)
    return autograph.stack(out)


def test_an_append_in_both_branches_keeps_the_length_known():
    """``if n < eps: out.append(row) else: out.append(row / n)`` appends once whatever
    the traced condition: the list after the loop is Python's list, and
    ``jnp.stack`` of it works (was: a TensorList of traced length, whose
    ``jnp.stack`` raised a TypeError that named no line of the user's)."""
    m = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]], np.float32)
    expected = normalized_rows(m)
    for compiled in (autograph.to_graph(normalized_rows),
                     jax.jit(autograph.convert(normalized_rows))):
        np.testing.assert_allclose(compiled(jnp.asarray(m)), expected, rtol=1e-6)
    np.testing.assert_allclose(autograph.convert(normalized_rows)(m), expected)


def test_branches_of_an_elif_chain_that_agree_keep_the_length_known():
    xs = [2.0, 0.5, -1.0, 3.0]
    expected = labelled_by_sign(xs)
    for compiled in (autograph.to_graph(labelled_by_sign),
                     jax.jit(autograph.convert(labelled_by_sign))):
        got = compiled(jnp.asarray(xs))
        assert type(got) is list and len(got) == 8
        assert [float(g) for g in got] == pytest.approx([float(e) for e in expected])


def test_an_append_in_one_branch_leaves_the_length_traced():
    xs = jnp.array([1.0, -1.0, 2.0])
    got = autograph.to_graph(appended_in_one_branch)(xs)
    np.testing.assert_array_equal(got[:2], [1.0, 2.0])   # padded past its length
    with pytest.raises(autograph.ConversionError, match="length is traced"):
        autograph.to_graph(_kept_positive)(xs)


def _kept_positive(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x)
    return out
