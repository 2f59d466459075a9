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
