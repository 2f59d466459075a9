"""The calls converter: only calls that could reach user code go through converted_call."""

import functools
import heapq
import math
from bisect import insort
from math import sqrt

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph
from autograph import set_loop_options


def helper(x):
    return x + 1


def mixed_calls(x, fns, kw):
    a = jnp.sin(x) + np.float32(2) + lax.abs(x) + jax.nn.relu(x) + math.pi
    b = helper(x) + fns[0](x, k=2) + sqrt(4.0) + len(fns)
    c = x.sum() + helper(helper(x))
    return a + b + c + helper(*fns[1:], **kw)


def test_golden_mixed_calls():
    assert autograph.to_code(mixed_calls) == (
        "def mixed_calls(x, fns, kw):\n"
        "    a = jnp.sin(x) + np.float32(2) + lax.abs(x) + jax.nn.relu(x) + math.pi\n"
        "    b = ag__.converted_call(helper)(x) + ag__.converted_call(fns[0])(x, k=2)"
        " + ag__.math_sqrt(4.0) + ag__.len_(fns)\n"
        "    c = ag__.converted_call(x.sum)() + ag__.converted_call(helper)("
        "ag__.converted_call(helper)(x))\n"
        "    return a + b + c + ag__.converted_call(helper)(*fns[1:], **kw)\n")


def shadowed_library_names(x, np):
    jnp = np

    def inner(math):
        return math.floor(x)
    return jnp.sin(x) + np.cos(x) + inner(x)


def test_locally_bound_library_names_are_user_values():
    code = autograph.to_code(shadowed_library_names)
    assert "ag__.converted_call(jnp.sin)(x)" in code
    assert "ag__.converted_call(np.cos)(x)" in code
    assert "ag__.converted_call(math.floor)(x)" in code


def print_is_a_builtin(x):
    print(x)
    return range(3), abs(x), super


def test_builtins_stay():
    code = autograph.to_code(print_is_a_builtin)
    assert "converted_call" not in code


def with_directive(n):
    s = 0
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=10)
        s += i
        i += 1
    return s, functools.reduce(max, [1, 2]), autograph.stack([1, 2])


def test_directives_and_library_functions_imported_by_name_stay():
    code = autograph.to_code(with_directive)
    assert "converted_call" not in code
    assert "maximum_iterations=10" in code


def heap_of(xs):
    heap = []
    for x in xs:
        heapq.heappush(heap, x)
        insort(heap, x)
    return heap, math.floor(heapq.nsmallest(1, heap)[0])


def test_library_functions_that_change_a_list_in_place_go_through_converted_call():
    """``heapq.heappush``, ``bisect.insort`` (imported by name too) change their first
    argument: the runtime refuses that where a staged region made the list doubtful
    (tests/runtime/test_carried_state.py). The other library calls stay as written."""
    code = autograph.to_code(heap_of)
    assert "ag__.converted_call(heapq.heappush)(heap, x)" in code
    assert "ag__.converted_call(insort)(heap, x)" in code
    assert "math_floor(heapq.nsmallest(1, heap)[0])" in code
    assert autograph.convert(heap_of)([3, 1, 2]) == heap_of([3, 1, 2])


def calls_in_lambda_and_nested(x):
    f = lambda v: helper(v)  # noqa: E731

    def g(v):
        return helper(v)
    return f(x) + g(x) + (lambda w: w)(x)


def test_golden_nested_and_lambdas():
    assert autograph.to_code(calls_in_lambda_and_nested) == """\
def calls_in_lambda_and_nested(x):
    f = lambda v: ag__.converted_call(helper)(v)

    def g(v):
        return ag__.converted_call(helper)(v)
    return ag__.converted_call(f)(x) + ag__.converted_call(g)(x) + (lambda w: w)(x)
"""


def test_recursive_false_leaves_every_call():
    shallow = autograph.convert(mixed_calls, recursive=False)
    assert "converted_call" not in autograph.to_code(shallow)


class Base:
    def f(self, x):
        return x


class Child(Base):
    def f(self, x):
        if x > 0:
            x = super().f(x) + 1
        return x


def test_zero_argument_super_names_class_and_self():
    code = autograph.to_code(Child.f)
    assert "ag__.converted_call(super(__class__, self).f)(x)" in code
    assert jax.jit(autograph.convert(Child().f))(2.0) == 3.0
    assert autograph.convert(Child().f)(-2.0) == -2.0
