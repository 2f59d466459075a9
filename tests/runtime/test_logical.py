"""runtime/logical.py: Python's exact semantics for Python operands, logical_* when traced."""

import jax
import jax.numpy as jnp
import numpy as np

from autograph.runtime import and_, compare_chain, not_, or_


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
    out = jax.jit(lambda x: and_(lambda: x > 0, lambda: 1))(jnp.float32(2.0))
    assert out.dtype == jnp.bool_ and bool(out)
    out = jax.jit(lambda x: or_(lambda: x > 0, lambda: 0))(jnp.float32(-2.0))
    assert not bool(out)


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
