"""if_stmt and if_exp called directly, as generated code calls them."""

import jax
import jax.numpy as jnp
import pytest

from autograph import ConversionError
from autograph.runtime import Undefined, if_exp, if_stmt


def test_python_condition_runs_one_branch_only():
    calls = []

    def if_true(y):
        calls.append("true")
        return y + 1

    def if_false(y):
        calls.append("false")
        return y - 1

    assert if_stmt(True, if_true, if_false, (1,)) == 2
    assert if_stmt([], if_true, if_false, (1,)) == 0  # Python truthiness
    assert calls == ["true", "false"]


def test_traced_condition_stages_lax_cond():
    def f(x):
        return if_stmt(x > 0, lambda y: y * 2, lambda y: -y, (x,))

    assert float(jax.jit(f)(3.0)) == 6.0 and float(jax.jit(f)(-3.0)) == 3.0
    assert "cond" in str(jax.make_jaxpr(f)(1.0))


def test_several_outputs_and_none_state():
    def f(x):
        return if_stmt(x > 0, lambda a, b: (a + 1, b), lambda a, b: (a, b + 1), (x, x))

    assert [float(v) for v in jax.jit(f)(1.0)] == [2.0, 1.0]

    def effects_only(x):
        return if_stmt(x > 0, lambda: None, lambda: None, ())

    assert jax.jit(effects_only)(1.0) is None


def test_undefined_inputs_stay_out_of_lax_cond():
    def f(x):
        def if_true(y):
            return x
        def if_false(y):
            return -x
        return if_stmt(x > 0, if_true, if_false, (Undefined("y"),))

    assert float(jax.jit(f)(-2.0)) == 2.0


def test_nonscalar_condition():
    with pytest.raises(ConversionError, match="jnp.any"):
        jax.jit(lambda x: if_stmt(x > 0, lambda: None, lambda: None, ()))(jnp.ones(2))


def test_integer_condition_means_nonzero():
    f = jax.jit(lambda n: if_exp(n, lambda: 1, lambda: 2))
    assert int(f(5)) == 1 and int(f(0)) == 2


def test_if_exp_python_is_lazy():
    assert if_exp(0, lambda: 1 / 0, lambda: "ok") == "ok"


def _power_in_branch(x):
    k = 10
    if x > 0:
        k = k ** 12
    return k


def _halve_in_branch(x):
    k = 7
    if x > 0:
        k = k // 2
    return k


def _divide_by_zero_in_branch(x):
    k = 1
    if x > 0:
        k = k // 0
    return k


def _kind_in_branch(x):
    k = 3
    kind = 0
    if x > 0:
        kind = 1 if isinstance(k, int) else 2
    return kind


def test_a_branch_computes_with_the_python_scalars_of_the_state_as_python_does():
    """Python ints of the state reach each branch as Python ints: 10 ** 12 is not
    wrapped to int32 and 1 // 0 is not a JAX integer division (both were silent
    differences), and what stays within range is the same weak int as before."""
    import autograph
    with pytest.raises(OverflowError):
        autograph.to_graph(_power_in_branch)(jnp.float32(1.0))
    with pytest.raises(ZeroDivisionError):
        autograph.to_graph(_divide_by_zero_in_branch)(jnp.float32(1.0))
    for x, want in ((1.0, 3), (-1.0, 7)):
        out = autograph.to_graph(_halve_in_branch)(jnp.float32(x))
        assert int(out) == want and out.dtype == jnp.int32 and out.weak_type
    assert int(autograph.to_graph(_kind_in_branch)(jnp.float32(1.0))) == 1
