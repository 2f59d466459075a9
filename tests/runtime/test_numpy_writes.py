"""Item writes into NumPy arrays that something else holds too (runtime/slices.py's
``held``, stageable.check_item_writes).

Python writes ``a[i] = v`` into the NumPy array itself, so the caller that passed it
in, another name (``b = a``), a view (``row = m[0]``) or a list it was put in sees
the change. A traced value cannot go into a NumPy array: the update makes a new JAX
array, which only ``a`` sees. Where something else holds the array, that is refused
at the user's line (``jax.jit`` of the original fails there too); an array that only
its own name holds stages as a new array, with Python's values. Before, the caller
silently kept the old values (``fill_caller``: Python ``[2, 0, 2, 0]``, compiled
``[0, 0, 0, 0]``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph


def fill_even(a, v):
    for i in range(a.shape[0]):
        if i % 2 == 0:
            a[i] = v
    return a


def fill_caller(v):
    buf = np.zeros(4, np.float32)
    fill_even(buf, v)   # the result is dropped: Python's buf is written in place
    return buf


def fill_upto(a, n, v):
    i = 0
    while i < n:
        a[i] = v
        i += 1


def fill_upto_caller(n, v):
    buf = np.zeros(5, np.float32)
    fill_upto(buf, n, v)
    return buf


def set_first(a, v):
    a[0] = v   # not returned: the caller's array is the only way out


def set_first_caller(v):
    buf = np.zeros(2, np.float32)
    set_first(buf, v)
    return buf


def write_through_a_view(v):
    m = np.zeros((2, 2), np.float32)
    row = m[0]
    row[1] = v
    return m


def write_through_asarray(v):
    p = np.zeros(2, np.float32)
    a = np.asarray(p)
    a[1] = v
    return p


def write_after_listing(v):
    a = np.zeros(2, np.float32)
    held = [a]
    a[0] = v
    return held[0]


def write_in_loop_after_listing(n, v):
    a = np.zeros(2, np.int32)
    held = [a]
    k = n % 3
    while k > 0:
        k -= 1
        a[1] = v + k
    return held[0][1]


def local_buffer(x):
    out = np.zeros(3, np.float32)
    for i in range(3):
        out[i] = x[i] * 2
    return out


REFUSED = [
    # (function, Python arguments, the line of the refused statement)
    (fill_caller, (2.0,), (fill_even, 3)),
    (fill_upto_caller, (3, 2.0), (fill_upto, 2)),
    (set_first_caller, (2.0,), (set_first, 1)),
    (write_through_a_view, (2.0,), (write_through_a_view, 3)),
    (write_through_asarray, (2.0,), (write_through_asarray, 3)),
    (write_after_listing, (2.0,), (write_after_listing, 3)),
    (write_in_loop_after_listing, (4, 7), (write_in_loop_after_listing, 4)),
]


@pytest.mark.parametrize("fn,args,where", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_a_traced_write_into_a_held_numpy_array_is_refused_at_the_line(fn, args, where):
    expected = fn(*args)
    np.testing.assert_array_equal(autograph.convert(fn)(*args), expected)   # Python's own
    owner, line = where
    traced = [jnp.asarray(a) for a in args]
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match="NumPy array") as raised:
            compiled(*traced)
        assert raised.value.filename == __file__
        assert raised.value.lineno == owner.__code__.co_firstlineno + line


def test_a_numpy_array_only_its_name_holds_stages_with_pythons_values():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    expected = local_buffer(x)
    np.testing.assert_array_equal(autograph.convert(local_buffer)(x), expected)
    np.testing.assert_array_equal(autograph.to_graph(local_buffer)(jnp.asarray(x)), expected)
    np.testing.assert_array_equal(jax.jit(autograph.convert(local_buffer))(jnp.asarray(x)),
                                  expected)


def test_a_helper_writes_into_the_callers_array_in_python_mode():
    buf = np.zeros(4, np.float32)
    autograph.convert(fill_even)(buf, 3.0)
    np.testing.assert_array_equal(buf, [3.0, 0.0, 3.0, 0.0])


def put_seven_where_positive(a):
    buf = np.zeros(3, np.int32)

    def put(i):
        buf[i] = 7   # a Python value, into the enclosing function's array

    for i in range(3):
        if a > i:
            put(i)
    return buf.sum()


def count_into_a_closure_array(xs):
    seen = np.zeros(2, np.int32)

    def note(k):
        seen[k] += 1

    total = 0.0
    for x in xs:
        total = total + x
        note(0)
    return total, seen[0]


def test_a_staged_if_that_writes_into_a_numpy_array_it_does_not_carry_is_refused():
    """Both branches of a staged ``if`` are traced whatever the condition: a helper's
    ``buf[i] = 7`` there wrote for every input (Python 7, compiled 21, silently).
    The NumPy array is watched like a list (side_effects.py): refused at the line."""
    assert put_seven_where_positive(1) == 7
    assert autograph.convert(put_seven_where_positive)(1) == 7
    for compiled in (autograph.to_graph(put_seven_where_positive),
                     jax.jit(autograph.convert(put_seven_where_positive))):
        with pytest.raises(autograph.ConversionError, match="NumPy array 'buf'") as raised:
            compiled(jnp.int32(1))
        assert raised.value.filename == __file__


def test_a_static_loop_that_writes_into_a_numpy_array_runs_unrolled():
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    expected = count_into_a_closure_array(xs)
    for compiled in (autograph.to_graph(count_into_a_closure_array),
                     jax.jit(autograph.convert(count_into_a_closure_array))):
        total, seen = compiled(jnp.asarray(xs))
        assert float(total) == float(expected[0]) and int(seen) == int(expected[1]) == 3
