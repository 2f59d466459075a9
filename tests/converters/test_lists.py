"""Lists in converted code: appends, pops, reads and writes, grown in staged loops."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import set_element_type, set_loop_options, stack
from autograph.errors import ConversionError
from tests.differential import check


def build(n):
    z = []
    for i in range(n):
        z.append(i)
    return stack(z)


def scaled(x):
    z = []
    for i in range(6):
        z.append(x * i)
    return stack(z)


def doubled_rows(xs):
    z = []
    for x in xs:
        z.append(x * 2)
    return stack(z)


def bounded_range(n):
    z = []
    for i in range(n):
        set_loop_options(maximum_iterations=8)
        z.append(i * 2)
    return len(z), jnp.sum(stack(z))


def fibonacci(n):
    f = [0, 1]
    i = 2
    while i < n:
        set_loop_options(maximum_iterations=40)
        f.append(f[-1] + f[-2])
        i += 1
    return f[-1], len(f), jnp.sum(stack(f))


def positives(xs):
    z = []
    for x in xs:
        if x > 0:
            z.append(x)
    return len(z), jnp.sum(stack(z))


def push_pop(xs):
    z = [0.0, 1.0]
    for x in xs:
        z.append(x)
        z.append(x + 1)
        top = z.pop()
        z[0] = z[0] + top
        z.pop()
        z.append(top * 2)
    return z[0], len(z), z[len(z) - 1], z[1]


def read_traced_index(xs, k):
    z = []
    for x in xs:
        z.append(x * x)
    return z[k], z[-1]


def declared(xs):
    z = []
    set_element_type(z, jnp.float32)
    for _ in xs:
        z.append(1)
    return stack(z)


def nested(xs):
    z = []
    for x in xs:
        for j in range(3):
            z.append(x + j)
    return stack(z)


def carried_python_list(x):
    params = [x, x * 2]
    for _ in range(3):
        params = [params[0] + 1, params[1] * 2]
    return params


def python_list(n):
    z = []
    for i in range(n):
        z.append(i * i)
    last = z.pop()
    return z, last, len(z)


def appended_then_stacked(x):
    z = []
    for i in range(5):
        z.append(jnp.sin(x * i))
    return jnp.sum(stack(z) ** 2)


def unbounded(n):
    z = []
    for i in range(n):
        z.append(i)
    return stack(z)


def unbounded_while(x):
    z = []
    while x > 0:
        z.append(x)
        x -= 1
    return stack(z)


def empty_read_first(xs):
    z = []
    for x in xs:
        if len(z) > 0:
            y = z[-1]
        else:
            y = x
        z.append(y)
    return stack(z)


def empty_read_first_while(xs, n):
    z = []
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=5)
        if len(z) > 0:
            y = z[-1]
        else:
            y = xs[i]
        z.append(y)
        i = i + 1
    return stack(z)


XS = np.array([1.0, -2.0, 3.0, 0.5, -1.0], np.float32)


def test_list_built_in_a_static_range_is_stacked_by_one_scan():
    check(scaled, 2.0, vmap=[1.0, 2.0, 3.0])
    jaxpr = jax.make_jaxpr(autograph.convert(scaled))(1.0)
    assert str(jaxpr).count("scan[") == 1


def test_list_built_over_an_array():
    check(doubled_rows, XS)
    check(doubled_rows, np.arange(6.0, dtype=np.float32).reshape(3, 2))


def test_python_int_list_stays_python():
    check(build, 5, compiled=False)
    np.testing.assert_array_equal(autograph.to_graph(build, static_argnums=0)(5),
                                  build(5))
    check(python_list, 5, compiled=False)


def test_traced_range_with_a_bound_pads_the_buffer():
    check(bounded_range, 5)
    out = autograph.to_graph(_bounded_stack)(3)
    np.testing.assert_array_equal(out, [0, 2, 4, 0, 0, 0, 0, 0])


def _bounded_stack(n):
    z = []
    for i in range(n):
        set_loop_options(maximum_iterations=8)
        z.append(i * 2)
    return stack(z)


def test_fibonacci_in_a_bounded_while():
    check(fibonacci, 12, vmap=[3, 7, 12])
    last, length, total = autograph.to_graph(fibonacci)(12)
    assert (int(last), int(length), int(total)) == (89, 12, 232)


def test_appends_under_a_staged_if():
    check(positives, XS)


def test_pop_write_and_read():
    check(push_pop, np.arange(4.0, dtype=np.float32))


def test_read_at_a_traced_index():
    # After the loop `z` is the Python list Python has; a traced index reads it as
    # an array (autograph/runtime/lookups.py: its items are traced scalars of one kind).
    check(read_traced_index, XS, 2)
    check(read_traced_index, XS, -2)
    assert autograph.to_graph(read_traced_index, static_argnums=1)(XS, 2)[0] == XS[2] ** 2
    with pytest.raises(IndexError, match="list index out of range"):
        autograph.to_graph(read_traced_index)(XS, len(XS))


def test_declared_element_type_casts_appends():
    assert autograph.to_graph(declared)(XS).dtype == jnp.float32
    check(declared, XS)


def test_nested_loops_appending_to_one_list():
    check(nested, np.arange(3.0, dtype=np.float32))


def test_list_that_keeps_its_length_stays_a_python_list():
    check(carried_python_list, 1.0)
    assert isinstance(autograph.to_graph(carried_python_list)(1.0), list)


def test_grad_through_a_loop_that_appends_and_stacks():
    for x in (0.3, 1.7):
        expected = jax.grad(appended_then_stacked)(x)
        actual = jax.grad(autograph.convert(appended_then_stacked))(x)
        np.testing.assert_allclose(actual, expected, rtol=1e-5)
    actual = jax.jit(jax.grad(autograph.convert(appended_then_stacked)))(0.3)
    np.testing.assert_allclose(actual, jax.grad(appended_then_stacked)(0.3), rtol=1e-5)


def test_unbounded_growing_list_names_list_line_and_fix():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(unbounded)(4)
    message = str(info.value)
    line = unbounded.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in message
    assert "'z'" in message and "maximum_iterations" in message
    assert f"line {line + 1}" in message  # the append


def test_unbounded_while_growing_list():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(unbounded_while)(3.0)
    line = unbounded_while.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(info.value)
    assert "set_loop_options(maximum_iterations=N)" in str(info.value)


def test_empty_list_read_before_any_append_asks_for_its_type():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(empty_read_first_while)(XS, 5)
    assert "set_element_type(z" in str(info.value)


def test_empty_list_read_before_any_append_in_a_static_loop_runs_unrolled():
    check(empty_read_first, XS)


def test_golden_code_for_the_list_example():
    assert autograph.to_code(build) == GOLDEN_BUILD


GOLDEN_BUILD = """\
def build(n):
    z = []

    def loop_body(i, z):
        z = ag__.list_append(z, i)
        return z
    z = ag__.for_stmt(ag__.range_(n), loop_body, (z,))
    return stack(z)
"""


def pops_and_len(lst):
    lst.append(3)
    lst.pop()
    x = lst.pop(0)
    set_element_type(lst, jnp.int32)
    return x, len(lst)


def test_golden_code_for_list_statements():
    assert autograph.to_code(pops_and_len) == """\
def pops_and_len(lst):
    lst = ag__.list_append(lst, 3)
    lst, _ = ag__.list_pop(lst)
    lst, x = ag__.list_pop(lst, 0)
    lst = set_element_type(lst, jnp.int32)
    return (x, ag__.len_(lst))
"""


def test_list_statements_mutate_the_same_python_list():
    lst = [1, 2]
    assert autograph.convert(pops_and_len)(lst) == (1, 1)
    assert lst == [2]


def geometric(x, n):
    z = [x]
    i = 1
    while i < n:
        set_loop_options(maximum_iterations=10)
        z.append(z[-1] * x)
        i += 1
    return jnp.sum(stack(z))


def test_grad_through_a_bounded_while_that_appends():
    expected = jax.grad(geometric)(0.5, 4)
    actual = jax.grad(autograph.convert(geometric))(0.5, jnp.int32(4))
    np.testing.assert_allclose(actual, expected, rtol=1e-5)
    check(geometric, 0.5, 4)


GLOBAL_LOG = []
GLOBAL_TABLE = {}


def appends_to_a_global(x):
    GLOBAL_LOG.append(x)
    GLOBAL_TABLE["last"] = x
    return len(GLOBAL_LOG)


def make_closure_appender():
    log = []

    def append(x):
        log.append(x)
        log[0] = "first"
        return log

    return append


def test_appends_and_item_assignment_on_non_locals_stay_mutations():
    GLOBAL_LOG.clear()
    assert autograph.convert(appends_to_a_global)(5) == 1
    assert GLOBAL_LOG == [5] and GLOBAL_TABLE == {"last": 5}
    code = autograph.to_code(appends_to_a_global)
    assert "GLOBAL_LOG =" not in code and "GLOBAL_TABLE =" not in code
    append = autograph.convert(make_closure_appender())
    append(1)
    assert append(2) == ["first", 2]


def class_body_appends(x):
    lst = []

    class Config:
        lst.append(x)
        table = {}
        table[0] = x

    return lst, hasattr(Config, "lst"), Config.table[0]


def test_a_class_body_is_not_the_functions_scope():
    # Rewriting `lst.append(x)` there as `lst = ...` would make `lst` a class
    # attribute (and an unbound name in the class body).
    check(class_body_appends, 3)
