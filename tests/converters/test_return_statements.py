"""``return`` inside branches and loops: differential tests, errors, generated code."""

import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check

XS = [1.0, 2.0, 3.0, -1.0, 5.0, 6.0, 7.0, 8.0]


def if_else_returns(x):
    if x > 0:
        return x * 2
    else:
        return -x


def early_return(x):
    if x > 3:
        return x - 3
    y = x * x
    return y + 1


def several_returns(x):
    if x > 10:
        return 10
    if x < -10:
        return -10
    if x == 0:
        return 100
    return x


def return_in_static_range(x):
    for i in range(8):
        if x[i] < 0:
            return i
    return -1


def return_in_traced_range(n):
    total = 0
    for i in range(n):
        total += i
        if total > 6:
            return total * 10
    return total


def return_in_array_loop(x):
    total = 0.0
    for v in x:
        if v < 0:
            return total
        total += v
    return -total


def return_in_while(n):
    i = 0
    while i < 100:
        if i * i >= n:
            return i
        i += 1
    return -1


def return_in_while_true(n):
    i = n
    while True:
        i = i + 1
        if i % 7 == 0:
            return i


def return_in_nested_loops_in_if(x):
    if x[0] > 0:
        for i in range(4):
            for j in range(4):
                if x[i] + x[j] > 9.5:
                    return i * 10 + j
        return -1
    else:
        return -2


def return_and_break(x):
    total = 0.0
    for v in x:
        if v > 6.5:
            break
        if v < 0:
            return total * 100
        total += v
    return total


def return_in_for_else(x):
    for v in x:
        if v > 6.5:
            return v
    else:
        return -1.0


def returns_a_pytree(x):
    if x > 0:
        return {"value": x, "sign": 1}
    return {"value": -x, "sign": -1}


def python_only_returns(items):
    for item in items:
        if item == "stop":
            return "stopped"
        if item == "boom":
            raise ValueError("boom")
    return None


@pytest.mark.parametrize("fn, arg, batch", [
    (if_else_returns, 3.0, [-1.0, 2.0]),
    (early_return, 5.0, [1.0, 4.0, 10.0]),
    (several_returns, 4, [12, -13, 0, 5]),
    (return_in_traced_range, 3, [0, 3, 8]),
    (return_in_while, 30, [0, 10, 50]),
    (return_in_while_true, 3, [1, 9, 20]),
    (returns_a_pytree, 2.0, [-1.0, 3.0]),
])
def test_scalar_functions(fn, arg, batch):
    check(fn, arg, vmap=batch)


@pytest.mark.parametrize("fn", [return_in_static_range, return_in_array_loop,
                                return_in_nested_loops_in_if, return_and_break,
                                return_in_for_else])
def test_array_functions(fn):
    x = np.array(XS, np.float32)
    check(fn, x, vmap=[x, np.abs(x), -x, x[::-1]])
    check(fn, np.abs(x))


def test_python_inputs_keep_python_behaviour():
    converted = autograph.convert(python_only_returns)
    assert converted(["a", "stop", "boom"]) == "stopped"
    assert converted(["a"]) is None
    with pytest.raises(ValueError, match="boom"):
        converted(["a", "boom"])


def test_grad_through_return_in_array_loop():
    x = jnp.array(XS, jnp.float32)
    grad = jax.jit(jax.grad(lambda x: autograph.convert(return_in_array_loop)(x) ** 2))(x)
    # the return runs at index 3: the value is 1 + 2 + 3 = 6
    np.testing.assert_allclose(grad, [12.0, 12.0, 12.0, 0, 0, 0, 0, 0])


def value_or_nothing(x):
    if x > 0:
        return x


def int_or_pair(x):
    if x > 0:
        return x
    return x, x


def test_falling_off_the_end_on_a_traced_path_names_both_lines():
    line = value_or_nothing.__code__.co_firstlineno
    with pytest.raises(ConversionError) as exc:
        jax.jit(autograph.convert(value_or_nothing))(1.0)
    message = str(exc.value)
    assert f"{__file__}:{line + 1}" in message
    assert "float32[] (weak)" in message and "None" in message
    # The converted function's boundary names the two returns in a note.
    note = "\n".join(exc.value.__notes__)
    assert f"float32[] (weak) at line {line + 2} (`return x`)" in note
    assert f"None by falling off the end of the function defined at line {line}" in note
    assert note in "".join(traceback.format_exception(exc.value))


def test_mismatched_returns_name_both_lines():
    line = int_or_pair.__code__.co_firstlineno
    with pytest.raises(ConversionError) as exc:
        jax.jit(autograph.convert(int_or_pair))(1.0)
    assert "same pytree structure" in str(exc.value)
    note = "\n".join(exc.value.__notes__)
    assert f"line {line + 2} (`return x`)" in note
    assert f"line {line + 3} (`return x, x`)" in note


def test_mismatched_returns_still_fine_for_python_values():
    assert autograph.convert(int_or_pair)(-1.0) == (-1.0, -1.0)
    assert autograph.convert(value_or_nothing)(-1.0) is None


def only_final_return(x):
    y = x + 1
    if y > 0:
        y = y * 2
    return y


def test_no_scaffolding_for_a_final_return():
    code = autograph.to_code(only_final_return)
    assert "did_return" not in code and "retval" not in code


GOLDEN_RETURN = '''\
def return_in_static_range(x):
    did_return = False
    retval = ag__.UndefinedReturn('retval')

    def loop_test(did_return, retval):
        return ag__.not_(did_return)

    def loop_body(i, did_return, retval):

        def if_true(did_return, retval):
            retval = i
            did_return = True
            return (did_return, retval)

        def if_false(did_return, retval):
            return (did_return, retval)
        did_return, retval = ag__.if_stmt(x[i] < 0, if_true, if_false, (did_return, retval))
        return (did_return, retval)
    did_return, retval = ag__.for_stmt(ag__.range_(8), loop_body, (did_return, retval), \
extra_test=loop_test)

    def if_true(retval):
        retval = -1
        return retval

    def if_false(retval):
        return retval
    retval = ag__.if_stmt(ag__.not_(did_return), if_true, if_false, (retval,))
    return retval
'''


def test_golden_code():
    assert autograph.to_code(return_in_static_range) == GOLDEN_RETURN


def first_negative_index(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return i
    return -1


@pytest.mark.parametrize("length", [8, 64])
def test_static_range_with_traced_return_is_one_loop(length):
    x = jnp.linspace(1.0, -1.0, length)
    jaxpr = jax.make_jaxpr(autograph.convert(first_negative_index))(x).jaxpr
    loops = [e.primitive.name for e in jaxpr.eqns if e.primitive.name in ("scan", "while")]
    assert loops == ["scan"]
    assert int(autograph.to_graph(first_negative_index)(x)) == first_negative_index(x)


def masked_sum_until_return(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            return total
        total += x[i] * x[i]
    return total


def test_grad_through_static_range_with_traced_return():
    x = jnp.array([0.5, 1.5, 2.0, -0.5, 3.0], jnp.float32)
    grad = jax.jit(jax.grad(autograph.convert(masked_sum_until_return)))(x)
    np.testing.assert_allclose(grad, [1.0, 3.0, 4.0, 0.0, 0.0], rtol=1e-6)


def user_variable_named_retval(x):
    if x > 0:
        retval = x
    else:
        retval = (x, x)
    return retval


def test_a_user_variable_named_retval_gets_the_ordinary_message():
    with pytest.raises(ConversionError) as exc:
        jax.jit(autograph.convert(user_variable_named_retval))(1.0)
    assert "'retval' has a different type in the two branches" in str(exc.value)
