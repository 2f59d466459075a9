"""``converted_call``: each call form reaches a converted callee, library code runs as is.

Every callee has control flow on its argument, so the compiled runs of ``check``
only pass when the callee was converted.
"""

import builtins
import colorsys
import functools
import json
import linecache
import math
import subprocess
import sys
import textwrap
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import autograph
from autograph.call_policy import AS_IS
from autograph.context import ConversionOptions
from autograph.transpiler import Transpiler
from tests.differential import check


def clip_pos(x):
    if x > 0:
        y = x * 2
    else:
        y = x * 0
    return y


# -- plain, nested, closures ----------------------------------------------------------


def calls_plain(x):
    return clip_pos(x) + 1


def calls_chain(x):
    return calls_plain(x) + calls_plain(-x)


def calls_nested(x):
    scale = 3

    def inner(v):
        if v > 1:
            v = v * scale
        return v

    return inner(x) + inner(x - 2)


def make_scaler(k):
    def scale(x):
        if x > 0:
            x = x * k
        return x
    return scale


SCALE_BY_2 = make_scaler(2)


def calls_closure(x):
    return SCALE_BY_2(x) + make_scaler(5)(x)


def test_plain_function():
    check(calls_plain, 3, vmap=[-2, 0, 5])
    check(calls_plain, -3)
    check(calls_chain, 2.5)


def test_nested_function_and_closure():
    check(calls_nested, 4, vmap=[0, 2, 4])
    check(calls_nested, 1)
    check(calls_closure, 3, vmap=[-1, 1])
    check(calls_closure, -3)


# -- lambdas --------------------------------------------------------------------------

TWO_LAMBDAS = (lambda v: clip_pos(v) * 2, lambda v: clip_pos(-v) * 3)
SAME_ARGS = [lambda v: v + 1 if v > 0 else v - 1, lambda v: v * 2 if v > 0 else -v]


def calls_lambdas(x):
    return TWO_LAMBDAS[0](x) + TWO_LAMBDAS[1](x)


def calls_local_lambda(x):
    f = lambda v: clip_pos(v) + 1  # noqa: E731
    return f(x) + (lambda w: clip_pos(w * 2))(x)


def calls_same_line_lambdas(x):
    return SAME_ARGS[0](x) * 10 + SAME_ARGS[1](x)


def test_lambdas():
    check(calls_lambdas, 2, vmap=[-1, 3])
    check(calls_lambdas, -2)
    check(calls_local_lambda, 3, vmap=[-3, 3])


def test_several_lambdas_on_one_line_are_told_apart():
    first, second = (autograph.to_code(f) for f in SAME_ARGS)
    assert first == "lambda v: ag__.if_exp(v > 0, lambda: v + 1, lambda: v - 1)\n"
    assert second == "lambda v: ag__.if_exp(v > 0, lambda: v * 2, lambda: -v)\n"
    for lam in SAME_ARGS:
        check(lam, 2.0, vmap=[-1.0, 1.0])
    check(calls_same_line_lambdas, 2.0, vmap=[-1.0, 0.0, 3.0])
    check(calls_same_line_lambdas, -2)


# -- methods ----------------------------------------------------------------------------


class Base:
    def __init__(self, k):
        self.k = k

    def step(self, x):
        if x > self.k:
            x = x - self.k
        else:
            x = x + self.k
        return x


class Child(Base):
    def step(self, x):
        y = super().step(x)
        if y > 0:
            y = y * 2
        return y

    def run(self, x):
        return self.step(x) + self.twice(x) + Child.halve(x) + self.make(x).k

    @staticmethod
    def twice(x):
        if x > 0:
            x = x * 2
        return x

    @staticmethod
    def halve(x):
        while x > 1:
            x = x / 2
        return x

    @classmethod
    def make(cls, k):
        if k > 0:
            k = k + 1
        return cls(k)


def calls_methods(x):
    c = Child(1)
    return c.run(x) + c.step(x) + Base.step(c, x)


def test_methods_super_static_and_class_methods():
    check(calls_methods, 3.0, vmap=[-2.0, 0.5, 5.0])
    check(calls_methods, -1.0)


def test_bound_method_converted_at_top_level():
    c = Child(2)
    check(c.step, 5.0)
    check(c.run, -1.0)
    assert "converted_call(super(__class__, self).step)(x)" in autograph.to_code(Child.step)


# -- partial, __call__, decorators -------------------------------------------------------


def scaled(x, factor):
    if x > 1:
        x = x * factor
    return x


def calls_partial(x):
    f = functools.partial(scaled, factor=3)
    return f(x) + functools.partial(scaled, x)(2)


class Dense:
    """An Equinox / Flax-NNX style module: parameters and a ``__call__``."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        if x > 0:
            x = x * self.w
        else:
            x = x - self.w
        return x


class Sequential:
    def __init__(self, *layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


MODEL = Sequential(Dense(2.0), Dense(-1.0), Dense(3.0))


def calls_module(x):
    return MODEL(x)


CALLED = []


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLED.append(fn.__name__)
        return fn(*args, **kwargs)
    return wrapper


@logged
def decorated(x):
    while x < 10:
        x = x * 2 + 1
    return x


def calls_decorated(x):
    return decorated(x)


def takes_f(x, f=1, args=2, kwargs=3):
    if x > 0:
        x = x + f + args + kwargs
    return x


def calls_with_keywords(x):
    return takes_f(x, f=10, kwargs=100) + takes_f(x, **{"args": 20})


def test_keywords_named_like_the_operator_parameters():
    check(calls_with_keywords, 1, vmap=[-1, 1])


def test_partial():
    check(calls_partial, 2, vmap=[0, 3])


def test_callable_object():
    check(calls_module, 1.5, vmap=[-1.0, 2.0])
    check(calls_module, -2.0)


def test_functools_wraps_decorator_keeps_its_behaviour():
    CALLED.clear()
    assert autograph.convert(calls_decorated)(3) == calls_decorated(3) == 15
    assert CALLED == ["decorated", "decorated"]
    check(calls_decorated, 2)


# -- what is not converted ----------------------------------------------------------------


def runs_original_code():
    """True when the caller runs its original code object (it was not converted)."""
    caller = sys._getframe(1)
    while caller.f_code.co_filename != __file__:      # skip converted_call's frame
        caller = caller.f_back
    return caller.f_code is globals()[caller.f_code.co_name].__code__


@autograph.do_not_convert
def left_alone(x):
    return runs_original_code(), x


def converted_helper(x):
    return runs_original_code(), left_alone(x)


def calls_at_depth(x):
    return converted_helper(x)


def test_do_not_convert_is_honoured_at_any_depth():
    helper_original, (inner_original, _) = autograph.convert(calls_at_depth)(1)
    assert helper_original is False
    assert inner_original is True


def traced_if(x):
    if x > 0:
        x = x + 1
    return x


def calls_traced_if(x):
    return traced_if(x)


def test_recursive_false_converts_only_the_top_function():
    shallow = autograph.convert(calls_traced_if, recursive=False)
    assert shallow(2) == 3
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(shallow)(2)
    assert "converted_call" not in autograph.to_code(shallow)
    assert jax.jit(autograph.convert(calls_traced_if))(2) == 3


def calls_library(x):
    f = jnp.tanh
    g = math.floor
    return f(x) + np.float32(g(2.5)) + jnp.linalg.norm(jnp.array([x, x]))


def test_library_and_builtins_run_as_they_are():
    check(calls_library, 0.5)
    t = Transpiler()
    options = ConversionOptions()
    for fn in (json.dumps, textwrap.dedent, autograph.stack, jnp.linalg.norm, jnp.sin,
               np.linalg.norm, len, math.floor, Child):
        if isinstance(fn, types.FunctionType):
            assert t.callee(fn, options) is AS_IS, fn
        else:
            assert t.callable_kind(type(fn)) is AS_IS, fn
    assert t.callee(clip_pos, options) is not AS_IS
    assert t.callable_kind(Dense) is Dense.__call__


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def sums_a_generator(n):
    total = 0
    for v in countdown(n):
        total += v
    return total


def test_generators_called_from_converted_code_run_as_they_are():
    check(sums_a_generator, 4, compiled=False)
    assert Transpiler().callee(countdown, ConversionOptions()) is AS_IS


CONVERTED_CLIP = autograph.convert(clip_pos)


def calls_converted(x):
    return CONVERTED_CLIP(x) + clip_pos(x)


def test_already_converted_functions_are_called_as_they_are():
    check(calls_converted, 2.0, vmap=[-1.0, 1.0])
    t = Transpiler()
    options = ConversionOptions()
    converted = t.convert(clip_pos)
    assert t.callee(converted, options) is AS_IS
    assert t.callee(CONVERTED_CLIP, options) is AS_IS


def test_user_lists_extend_the_policy():
    t = Transpiler()
    options = ConversionOptions()
    t.policy.never_convert(__name__)
    assert t.callee(clip_pos, options) is AS_IS
    t.policy.always_convert(__name__)
    assert t.callee(clip_pos, options) is not AS_IS
    assert t.callee(colorsys.rgb_to_yiq, options) is AS_IS
    t.policy.always_convert("colorsys")
    assert t.callee(colorsys.rgb_to_yiq, options) is not AS_IS


# -- source that cannot be read ----------------------------------------------------------


def test_exec_defined_function_raises_conversion_error():
    namespace = {}
    exec("def made_by_exec(x):\n    return x + 1\n", namespace)
    with pytest.raises(autograph.ConversionError, match="cannot read the source") as info:
        autograph.convert(namespace["made_by_exec"])(1)
    assert "do_not_convert" in str(info.value)


def test_c_function_at_top_level_raises_conversion_error():
    with pytest.raises(autograph.ConversionError, match="Python function"):
        autograph.convert(math.floor)


def test_python_dash_c_raises_conversion_error():
    program = textwrap.dedent("""
        import autograph
        def f(x):
            return x
        try:
            autograph.convert(f)(1)
        except autograph.ConversionError as e:
            print("ConversionError:", e)
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120, env={"JAX_PLATFORMS": "cpu", "PATH": ""})
    assert "ConversionError: cannot read the source" in out.stdout, out.stderr


NOTEBOOK_CELL = """
def cell_helper(x):
    if x > 0:
        x = x * 3
    return x

def cell_main(x):
    return cell_helper(x) + (lambda v: cell_helper(-v))(x)
"""


def test_notebook_cell_functions_convert():
    filename = "<ipython-input-7-0123456789ab>"
    lines = NOTEBOOK_CELL.splitlines(keepends=True)
    linecache.cache[filename] = (len(NOTEBOOK_CELL), None, lines, filename)
    try:
        namespace = {"__name__": "__main__"}
        exec(compile(NOTEBOOK_CELL, filename, "exec"), namespace)
        check(namespace["cell_main"], 2.0, vmap=[-1.0, 1.0])
        assert "converted_call(cell_helper)(x)" in autograph.to_code(namespace["cell_main"])
    finally:
        linecache.cache.pop(filename, None)


# -- functions passed to JAX's higher-order functions are converted ---------------------


def signed_sum(w, xs):
    total = 0.0
    for x in xs:
        if x > 0:
            total = total + w * x
        else:
            total = total - w * x
    return total


def train_with_grad(w, xs):
    for _ in range(3):
        g = jax.grad(signed_sum)(w, xs)
        w = w - 0.1 * g
    return w


def scan_with_python_if(xs):
    def body(c, x):
        if x > 0:
            c = c + x
        return c, c

    return lax.scan(body, 0.0, xs)[0]


TRACES = []


def traced_once(x, ys):
    TRACES.append(1)   # runs while jax.jit traces
    return signed_sum(x, ys)


def jit_inside(x):
    f = jax.jit(traced_once)
    return f(x, jnp.ones(3)) + f(x, -jnp.ones(3))


def test_grad_of_a_user_function_is_converted():
    xs = jnp.array([1.0, -2.0, 3.0])
    check(train_with_grad, 1.0, xs)
    jaxpr = jax.make_jaxpr(autograph.convert(train_with_grad))(1.0, xs).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["scan"]   # nothing unrolled
    assert "converted_call(jax.grad)(signed_sum)" in autograph.to_code(train_with_grad)


def test_lax_scan_body_with_python_if():
    xs = jnp.array([1.0, -2.0, 3.0])
    assert float(autograph.to_graph(scan_with_python_if)(xs)) == 4.0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        scan_with_python_if(xs)   # the original cannot do it


def test_jit_of_a_user_function_compiles_once_across_calls():
    TRACES.clear()
    converted = autograph.convert(jit_inside)
    assert float(converted(2.0)) == 12.0
    assert float(converted(3.0)) == 18.0
    # One converted traced_once object serves both calls in jit_inside and both
    # calls of jit_inside, so jax.jit traced it once.
    assert len(TRACES) == 1
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jit_inside(2.0)   # unconverted, the `if` in signed_sum cannot be traced


# -- a module-level function calling itself by its global name ------------------------


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def power(x, n):
    if n == 0:
        return jnp.ones_like(x)
    if x < 0:                                   # traced: staged in every recursive call
        return x * power(-x, n - 1)
    return x * power(x, n - 1)


def test_global_self_recursion():
    assert autograph.convert(factorial)(5) == 120
    assert "ag__.converted_call(factorial)(n - 1)" in autograph.to_code(factorial)
    staged = autograph.to_graph(power, static_argnums=1)
    for x, n in ((1.5, 3), (-2.0, 2), (-2.0, 3)):
        np.testing.assert_allclose(staged(jnp.float32(x), n), power(x, n), rtol=1e-6)
    autograph.set_debug(store_source=True)
    try:
        assert autograph.convert(factorial)(6) == 720
    finally:
        autograph.set_debug(store_source=False)


def _printed_through_an_alias(x):
    out = print
    say = functools.partial(print, "val:", sep="")
    if x > 0:
        x = x * 2
    out("x", x)
    say(x)
    builtins.print("b", x)
    return x


def test_print_reached_other_than_by_its_name_is_staged_too(capsys):
    # `out = print; out(x)`, `functools.partial(print, ...)`, `builtins.print`: the
    # call operator gives the staged print (they printed the tracer while tracing).
    _printed_through_an_alias(1.0)
    expected = capsys.readouterr().out
    assert expected == "x 2.0\nval:2.0\nb 2.0\n"
    autograph.to_graph(_printed_through_an_alias)(1.0)
    jax.effects_barrier()
    assert capsys.readouterr().out == expected
