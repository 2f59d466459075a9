"""API misuse fails at the call, clearly; callable objects convert their __call__
(issue 16.6). Flax NNX and Equinox modules are the common callable objects."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import autograph
from autograph import ConversionError


def absolute(x):
    if x > 0:
        return x
    return -x


def test_none_and_non_callables_fail_at_the_call():
    with pytest.raises(TypeError, match=r"convert takes the function to convert; got None"):
        autograph.convert(None)
    with pytest.raises(TypeError, match=r"convert takes the function to convert; got 3"):
        autograph.convert(3)
    with pytest.raises(TypeError, match="to_graph takes the function to compile; got None"):
        autograph.to_graph(None)
    with pytest.raises(TypeError, match="do_not_convert takes a function"):
        autograph.do_not_convert(None)
    with pytest.raises(TypeError, match="to_code takes the function to convert"):
        autograph.to_code(None)


def test_decorator_with_options_still_works():
    decorate = autograph.convert(recursive=False)
    assert decorate(absolute)(-2.0) == 2.0


def test_do_not_convert_of_a_builtin_returns_it():
    # Builtins have no source and are never converted: nothing to mark.
    assert autograph.do_not_convert(len) is len
    assert autograph.do_not_convert(str.upper) is str.upper


def test_compiled_or_class_callables_are_refused_with_a_hint():
    with pytest.raises(ConversionError, match=r"jax.jit\(autograph.convert\(f\)\)"):
        autograph.convert(jax.jit(absolute))
    with pytest.raises(ConversionError, match="convert an instance"):
        autograph.convert(dict)


def test_partial_converts_its_function():
    f = autograph.convert(functools.partial(absolute))
    assert isinstance(f, functools.partial) and f(-3.0) == 3.0
    assert float(jax.jit(f)(jnp.float32(-3.0))) == 3.0
    assert "if_stmt" in autograph.to_code(functools.partial(absolute))


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        if x > 0:
            return x * self.k
        return -x


class Linear(eqx.Module):
    weight: jax.Array

    def __call__(self, x):
        y = self.weight * x
        if y.sum() > 0:
            return y
        return -y


class Counter(nnx.Module):
    def __init__(self):
        self.weight = nnx.Param(jnp.array([1.0, -2.0, 3.0]))

    def __call__(self, x):
        y = self.weight[...] * x
        if y.sum() > 0:
            return y
        return -y


@pytest.mark.parametrize("make", [lambda: Scale(2.0),
                                  lambda: Linear(jnp.array([1.0, -2.0, 3.0])),
                                  Counter], ids=["object", "equinox", "flax-nnx"])
def test_callable_object_converts_its_call(make):
    model = make()
    converted = autograph.convert(model)
    assert converted.__self__ is model
    x = jnp.array([1.0, 1.0, 1.0]) if not isinstance(model, Scale) else 2.0
    np.testing.assert_allclose(converted(x), model(x))
    np.testing.assert_allclose(jax.jit(converted)(x), model(x))
    np.testing.assert_allclose(autograph.to_graph(model)(x), model(x))
    np.testing.assert_allclose(jax.jit(converted)(-x), model(-x))
    assert "if_stmt" in autograph.to_code(model)


def test_equinox_filter_jit_and_grad_of_a_converted_module():
    model = Linear(jnp.array([1.0, -2.0, 3.0]))
    x = jnp.array([1.0, 1.0, 1.0])
    np.testing.assert_allclose(eqx.filter_jit(autograph.convert(model))(x), model(x))
    grads = eqx.filter_grad(lambda m, x: autograph.convert(m)(x).sum())(model, x)
    expected = eqx.filter_grad(lambda m, x: m(x).sum())(model, x)
    np.testing.assert_allclose(grads.weight, expected.weight)


def test_flax_nnx_jit_of_the_converted_method():
    model = Counter()
    x = jnp.array([1.0, 1.0, 1.0])
    step = nnx.jit(autograph.convert(Counter.__call__))
    np.testing.assert_allclose(step(model, x), model(x))


class Frozen(eqx.Module):
    weight: jax.Array

    def __call__(self, x):
        return self.weight * x


def test_do_not_convert_of_an_equinox_module_marks_its_class():
    model = Frozen(jnp.array([1.0, -2.0, 3.0]))
    with pytest.raises(TypeError, match=r"mark its class: autograph.do_not_convert\(Frozen\)"):
        autograph.do_not_convert(model)
    assert autograph.do_not_convert(Frozen) is Frozen
    assert autograph.convert(model) is model
    rebuilt = jax.tree_util.tree_map(lambda w: w * 2, model)   # as transformations do
    assert autograph.convert(rebuilt) is rebuilt
