"""runtime/builtins.py: the builtin itself for Python values; traced overloads otherwise."""

import jax
import jax.numpy as jnp
import pytest

from autograph.runtime import (
    TracedRange,
    bool_,
    float_,
    int_,
    len_,
    max_,
    min_,
    range_,
    reversed_,
    sum_,
)


def test_python_values_are_the_builtins():
    assert int_("12") == 12 and int_("12", base=8) == 10 and int_(2.9) == 2
    assert float_("1.5") == 1.5 and bool_([]) is False and bool_() is False
    assert min_(3, 1, 2) == 1 and max_([1, 5, 2]) == 5
    assert min_([], default=7) == 7 and max_(["a", "bb"], key=len) == "bb"
    assert sum_([1, 2, 3]) == 6 and sum_([[1], [2]], []) == [1, 2]
    assert list(reversed_([1, 2, 3])) == [3, 2, 1]
    assert len_([1, 2]) == 2
    for fn, args in [(int_, ([1],)), (min_, ([],)), (sum_, (["a"],)), (len_, (3,))]:
        with pytest.raises((TypeError, ValueError)):
            fn(*args)


def test_traced_values():
    @jax.jit
    def f(x, n):
        return (min_(x, 1.0), max_(x, 0.0, -1.0), int_(x), float_(n), bool_(n),
                len_(range_(n)), sum_(jnp.stack([x, x])))

    out = f(jnp.float32(2.5), jnp.int32(3))
    assert [float(v) for v in out] == [1.0, 2.5, 2.0, 3.0, 1.0, 3.0, 5.0]
    assert isinstance(jax.jit(lambda n: (range_(n), 0)[1])(jnp.int32(2)), jax.Array)
    assert isinstance(range_(3), range) and not isinstance(range_(3), TracedRange)
