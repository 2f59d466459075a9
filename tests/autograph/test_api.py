"""The public API: convert, to_graph, to_code, do_not_convert, directives."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import ConversionError


def scaled_sum(x, scale=2.0, *, offset=0.0):
    """Sum of x, scaled, plus an offset."""
    total = 0.0
    for v in x:
        total = total + v
    return total * scale + offset


def countdown(n):
    while n > 0:
        n = n - 1
    return n


@autograph.convert
def decorated(x):
    if x > 0:
        x = x - 1
    return x


@autograph.convert(recursive=False)
def decorated_non_recursive(x):
    return -x if x < 0 else x


class Model:
    def __init__(self, k):
        self.k = k

    @autograph.convert
    def forward(self, x):
        if x > 0:
            y = x * self.k
        else:
            y = x
        return y

    def plain(self, x):
        while x < self.k:
            x = x + 1
        return x


def test_convert_keeps_name_doc_and_signature():
    converted = autograph.convert(scaled_sum)
    assert converted.__name__ == "scaled_sum"
    assert converted.__doc__ == scaled_sum.__doc__
    assert inspect.signature(converted) == inspect.signature(scaled_sum)


def test_defaults_and_keyword_only_arguments():
    converted = autograph.convert(scaled_sum)
    assert converted([1.0, 2.0]) == scaled_sum([1.0, 2.0])
    assert converted([1.0], 3.0, offset=1.0) == scaled_sum([1.0], 3.0, offset=1.0)
    out = autograph.to_graph(scaled_sum)(jnp.ones(3), offset=1.0)
    assert float(out) == 7.0


def test_decorator_forms():
    assert decorated(3) == 2
    assert float(jax.jit(decorated)(3.0)) == 2.0
    assert decorated_non_recursive(-2) == 2
    assert float(jax.jit(decorated_non_recursive)(-2.0)) == 2.0


def test_methods():
    model = Model(3.0)
    assert model.forward(2.0) == 6.0
    assert float(jax.jit(model.forward)(2.0)) == 6.0
    converted = autograph.convert(model.plain)
    assert converted(0) == 3
    assert float(jax.jit(converted)(jnp.float32(0.5))) == 3.5


def test_to_graph_forwards_jit_arguments():
    def power(x, n):
        y = x
        for _ in range(n - 1):
            y = y * x
        return y

    import types
    fn = types.FunctionType(power.__code__, globals(), "power")
    compiled = autograph.to_graph(fn, static_argnums=1)
    assert float(compiled(2.0, 5)) == 32.0
    donated = autograph.to_graph(countdown, donate_argnums=0)
    assert int(donated(jnp.int32(5))) == 0


def test_to_graph_result_equals_original():
    assert int(autograph.to_graph(countdown)(7)) == countdown(7)


def test_to_code_is_the_converted_source():
    code = autograph.to_code(countdown)
    assert code.startswith("def countdown(n):")
    assert "ag__.while_stmt(loop_test, loop_body, n)" not in code
    assert "n = ag__.while_stmt(loop_test, loop_body, (n,), " in code
    compile(code, "<to_code>", "exec")
    assert autograph.to_code(decorated).startswith("def decorated(x):")


def test_to_code_of_a_wrapper_and_of_a_method():
    assert "if_stmt" in autograph.to_code(Model.forward)
    assert "while_stmt" in autograph.to_code(Model(1.0).plain)


def test_do_not_convert():
    def stays(x):
        if x > 0:
            x = x + 1
        return x

    import types
    fn = autograph.do_not_convert(types.FunctionType(stays.__code__, globals(), "stays"))
    assert autograph.convert(fn) is fn
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(autograph.convert(fn))(1.0)


def test_convert_rejects_non_functions():
    with pytest.raises(ConversionError, match="takes a Python function"):
        autograph.convert(len)
    with pytest.raises(ConversionError, match="takes a Python function"):
        autograph.convert(np.sum)


def test_directive_functions_run_as_python():
    assert autograph.set_loop_options(maximum_iterations=3) is None
    lst = [1]
    assert autograph.set_element_type(lst, jnp.float32) is lst
    np.testing.assert_array_equal(autograph.stack([jnp.ones(2), jnp.zeros(2)]),
                                  np.array([[1.0, 1.0], [0.0, 0.0]]))


def bounded_search(x):
    i = 0
    while x > 1:
        autograph.set_loop_options(maximum_iterations=5)
        x = x / 2
        i += 1
    return x, i


def test_set_loop_options_bounds_a_staged_while():
    assert bounded_search(100.0) == (0.78125, 7)
    assert autograph.convert(bounded_search)(100.0) == (0.78125, 7)
    x, i = autograph.to_graph(bounded_search)(100.0)
    assert float(x) == 100.0 / 32 and int(i) == 5
    assert "maximum_iterations=5" in autograph.to_code(bounded_search)
    assert "set_loop_options" not in autograph.to_code(bounded_search)
    grad = jax.grad(lambda x: autograph.convert(bounded_search)(x)[0])(100.0)
    assert float(grad) == pytest.approx(1 / 32)
