"""``break``: differential tests over every loop form, ``else`` clauses, grad, jaxpr size."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import autograph
from tests.differential import check

XS = [1.0, 2.0, 3.0, -1.0, 5.0, 6.0, 7.0, 8.0]


def while_break(n):
    i = 0
    total = 0
    while i < 100:
        if i * i > n:
            break
        total += i
        i += 1
    return total, i


def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            break
    return i


def while_else(n):
    i = 0
    found = -1
    while i < 10:
        if i * 3 == n:
            found = i
            break
        i += 1
    else:
        found = 100
    return found


def static_range_break(x):
    total = 0.0
    for i in range(8):
        if x[i] < 0:
            break
        total += x[i]
    return total


def static_range_break_python_condition(x):
    total = 0.0
    for i in range(8):
        if i == 5:
            break
        total += x[i]
    return total


def traced_range_break(n):
    total = 0
    for i in range(n):
        if total > 10:
            break
        total += i
    return total


def array_break(x):
    total = 0.0
    count = 0
    for v in x:
        if v < 0:
            break
        total += v
        count += 1
    return total, count


def for_else(x):
    position = -1
    for i in range(8):
        if x[i] > 6.5:
            position = i
            break
    else:
        position = 99
    return position


def for_else_no_break(x):
    total = 0.0
    for v in x:
        total += v
    else:
        total = total * 2
    return total


def nested_break(x):
    total = 0.0
    for i in range(4):
        for j in range(4):
            if x[j] > x[i]:
                break
            total += x[j]
        if total > 10:
            break
        total += 1.0
    return total


def break_deep(x):
    total = 0.0
    for v in x:
        if v > 0:
            if v > 6.5:
                break
            total += 1.0
        total += v
    return total


def while_else_no_break(n):
    i = 0
    while i < n:
        i += 2
    else:
        i = i * 10
    return i


def break_raises_in_python(items):
    for item in items:
        if item is None:
            break
        if item < 0:
            raise ValueError(f"negative: {item}")
    return item


def break_in_python_list_loop(x):
    total = 0.0
    for w in [1.0, 2.0, 3.0, 4.0]:
        if total > 4:
            break
        total += w * x[0]
    return total


def first_stop(text):
    out = []
    for ch in text:
        if ch == ".":
            break
        out.append(ch)
    else:
        out.append("!")
    return "".join(out)


@pytest.mark.parametrize("fn, arg, batch", [
    (while_break, 20, [0, 5, 50]),
    (while_true_break, 30, [1, 10, 99]),
    (while_else, 6, [6, 7, 0]),
    (traced_range_break, 9, [0, 3, 9]),
    (while_else_no_break, 5, [0, 1, 6]),
])
def test_int_loops(fn, arg, batch):
    check(fn, arg, vmap=batch)


@pytest.mark.parametrize("fn", [static_range_break, static_range_break_python_condition,
                                array_break, for_else, for_else_no_break, nested_break,
                                break_in_python_list_loop, break_deep])
def test_array_loops(fn):
    x = np.array(XS, np.float32)
    check(fn, x, vmap=[x, x[::-1], np.abs(x)])
    check(fn, np.abs(x))


def test_python_semantics_kept():
    assert autograph.convert(first_stop)("ab.cd") == "ab"
    assert autograph.convert(first_stop)("abcd") == "abcd!"


def test_python_exceptions_kept():
    converted = autograph.convert(break_raises_in_python)
    assert converted([1, None, -1]) is None
    with pytest.raises(ValueError, match="negative: -1"):
        converted([1, -1, None])


def test_iterator_not_advanced_after_break():
    def numbers():
        yield from range(10)

    taken = []

    def consume(it):
        for v in it:
            taken.append(v)
            if v == 2:
                break
        return v

    it = numbers()
    assert _converted_module_fn(consume)(it) == 2
    assert next(it) == 3


def _converted_module_fn(fn):
    return autograph.convert(fn)


def _loop_primitives(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns
            if e.primitive.name in ("scan", "while")]


@pytest.mark.parametrize("length", [8, 64])
def test_static_range_with_traced_break_is_one_loop(length):
    x = jnp.linspace(1.0, -1.0, length)
    jaxpr = jax.make_jaxpr(autograph.convert(sum_until_negative))(x).jaxpr
    assert _loop_primitives(jaxpr) == ["scan"]
    assert len(jaxpr.eqns) < 40


def sum_until_negative(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        total += x[i] * x[i]
    return total


def _lax_sum_until_negative(x):
    def step(carry, v):
        total, done = carry
        done = jnp.logical_or(done, v < 0)
        total = jnp.where(done, total, total + v * v)
        return (total, done), None

    (total, _), _ = lax.scan(step, (0.0, False), x)
    return total


def test_grad_through_static_range_with_traced_break():
    x = jnp.array([0.5, -1.5, 2.0, -0.5, 3.0, 1.0], jnp.float32)
    x = x.at[1].set(1.5)  # the break happens at index 3
    grad = jax.jit(jax.grad(autograph.convert(sum_until_negative)))(x)  # staged: a scan
    expected = jax.grad(_lax_sum_until_negative)(x)
    np.testing.assert_allclose(grad, expected, rtol=1e-6)
    np.testing.assert_allclose(grad, [1.0, 3.0, 4.0, 0.0, 0.0, 0.0], rtol=1e-6)
    assert float(autograph.convert(sum_until_negative)(x)) == pytest.approx(
        float(_lax_sum_until_negative(x)))


GOLDEN_BREAK = '''\
def static_range_break(x):
    total = 0.0
    did_break = False

    def loop_test(total, did_break):
        return ag__.not_(did_break)

    def loop_body(i, total, did_break):

        def if_true(total, did_break):
            did_break = True
            return (total, did_break)

        def if_false(total, did_break):
            total += x[i]
            return (total, did_break)
        total, did_break = ag__.if_stmt(x[i] < 0, if_true, if_false, (total, did_break))
        return (total, did_break)
    total, did_break = ag__.for_stmt(ag__.range_(8), loop_body, (total, did_break), \
extra_test=loop_test)
    return total
'''


def test_golden_code():
    assert autograph.to_code(static_range_break) == GOLDEN_BREAK


def no_jumps(x):
    for i in range(3):
        x = x + i
    return x


def test_no_scaffolding_without_break():
    code = autograph.to_code(no_jumps)
    assert "did_break" not in code and "extra_test" not in code
