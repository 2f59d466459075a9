"""runtime/logical.py: Python's exact semantics for Python operands, logical_* when traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.runtime import and_, compare_chain, not_, or_
from tests.differential import check


def thunks(*values, seen=None):
    def make(v):
        def thunk():
            if seen is not None:
                seen.append(v)
            return v
        return thunk
    return [make(v) for v in values]


def test_python_operands():
    cases = [(0, "x"), ("", 0), (3, None), ([], [1]), (1, 2)]
    for a, b in cases:
        assert and_(*thunks(a, b)) == (a and b)
        assert or_(*thunks(a, b)) == (a or b)
    assert not_(0) is True and not_([1]) is False


def test_short_circuit_order():
    seen = []
    assert and_(*thunks(1, 0, 3, seen=seen)) == 0
    assert seen == [1, 0]
    seen.clear()
    assert or_(*thunks(0, 2, 3, seen=seen)) == 2
    assert seen == [0, 2]


def test_traced_operands():
    @jax.jit
    def f(x, y):
        return and_(lambda: x > 0, lambda: y > 0), or_(lambda: x > 0, lambda: y > 0), not_(x)

    a, o, n = f(jnp.array([1.0, -1.0, 0.0]), jnp.array([1.0, 1.0, -1.0]))
    np.testing.assert_array_equal(a, [True, False, False])
    np.testing.assert_array_equal(o, [True, True, False])
    np.testing.assert_array_equal(n, [False, False, True])


def test_traced_then_python_operand():
    # Python: `True and 1` is 1, `False or 0` is 0: the operand, not a bool.
    out = jax.jit(lambda x: and_(lambda: x > 0, lambda: 1))(jnp.float32(2.0))
    assert out.dtype == jnp.int32 and int(out) == 1 and out.weak_type
    out = jax.jit(lambda x: and_(lambda: x > 0, lambda: 1))(jnp.float32(-2.0))
    assert out.dtype == jnp.int32 and int(out) == 0
    out = jax.jit(lambda x: or_(lambda: x > 0, lambda: 0))(jnp.float32(-2.0))
    assert int(out) == 0
    # Boolean operands stay boolean.
    out = jax.jit(lambda x: or_(lambda: x > 0, lambda: False))(jnp.float32(2.0))
    assert out.dtype == jnp.bool_ and bool(out)


def test_traced_operand_value_is_pythons():
    @jax.jit
    def f(a, b):
        return or_(lambda: a, lambda: b), and_(lambda: a, lambda: b)

    for a, b in [(0.0, 2.5), (1.5, 2.5), (0.0, 0.0), (-1.0, 0.0)]:
        got_or, got_and = f(jnp.float32(a), jnp.float32(b))
        assert float(got_or) == (a or b) and float(got_and) == (a and b)
    # int32 `or` float32 promotes as NumPy does; weak operands stay weak.
    out = jax.jit(lambda a: or_(lambda: a, lambda: 1.5))(jnp.int32(0))
    assert out.dtype == jnp.float32 and float(out) == 1.5
    out = jax.jit(lambda a: or_(lambda: a, lambda: 1.5))(0)
    assert out.weak_type and float(out) == 1.5


def test_traced_then_python_chain_short_circuits_in_python():
    def never():
        raise AssertionError("`3 or ...` is Python's: its right operand is never read")

    out = jax.jit(lambda x: or_(lambda: x, lambda: 3, never))(jnp.int32(0))
    assert int(out) == 3


def test_a_traced_left_operand_refuses_right_operands_that_change_python_state():
    """Python reads the right operands only where the left does not decide; staged,
    they are traced once whatever it is: a change of Python state there is refused."""
    seen = []
    with pytest.raises(autograph.ConversionError, match="inside an `or` that is staged"):
        jax.jit(lambda x: or_(lambda: x, *thunks(3, 4, seen=seen)))(jnp.int32(0))
    assert seen == []   # put back before the error


def test_compare_chain():
    seen = []
    third = thunks(5, seen=seen)[0]
    assert compare_chain(1, "<", lambda: 3, ">", third) is False
    assert seen == [5]
    seen.clear()
    assert compare_chain(4, "<", lambda: 3, "<", third) is False
    assert seen == []
    assert compare_chain(None, "is", lambda: None, "in", lambda: [None]) is True
    out = jax.jit(lambda x: compare_chain(0, "<", lambda: x, "<=", lambda: 3))(
        jnp.array([0, 1, 3, 4]))
    np.testing.assert_array_equal(out, [False, True, True, False])


# -- `x is True` on a value that became traced (issue 26.5) -----------------------------

def passes_while_swapped_is_true(n):
    swapped = True
    passes = 0
    while swapped is True:
        passes += 1
        swapped = passes < n
    return passes


def identity_tests(x):
    done = x > 0
    count = x * 0
    a = 1 if done is not False else 2
    b = 3 if count is True else 4      # a number is no bool, traced or not
    c = 5 if True is done else 6
    return a + b + c


def test_is_true_reads_a_traced_bool_as_the_bool_it_stands_for():
    for n in (1, 3):
        check(passes_while_swapped_is_true, n)
    for x in (2, -2):
        check(identity_tests, x)


def test_is_true_in_generated_code():
    code = autograph.to_code(passes_while_swapped_is_true)
    assert "return ag__.is_(swapped, True)" in code
