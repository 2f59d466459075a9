"""Names that closures share with the function: late binding, cells, ``nonlocal``.

Each function runs as written, converted with Python values, compiled
(``to_graph`` and ``jit(convert(f))``) and, where it takes a number first, under
``vmap`` (``tests/differential.py``).
"""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import ConversionError
from tests.differential import assert_same_python, check


def line_of(fn, k):
    return fn.__code__.co_firstlineno + k


# --- late binding: closures see the variable, not its value at creation -------------------


def lambdas_made_per_iteration():
    fs = []
    for i in range(3):
        fs.append(lambda: i)  # noqa: B023 - late binding is the point
    return [g() for g in fs]


def lambdas_per_iteration_scaled(n):
    fs = []
    for i in range(3):
        fs.append(lambda: i * n)  # noqa: B023
    return fs[0]() + fs[1]() + fs[2]()


def closure_over_a_variable_the_loop_rebinds(n):
    x = 0
    read = lambda: x  # noqa: E731
    out = 0
    for i in range(n):
        x = i * 10
        out = out + read()
    return out


def closure_read_in_a_while(n):
    x = 0
    read = lambda: x  # noqa: E731
    s = 0
    while x < n:
        x = x + 1
        s = s + read()
    return s


def closure_read_after_a_branch(x):
    y = 0.0
    get = lambda: y  # noqa: E731
    if x > 0:
        y = x * 2.0
    else:
        y = -x
    return get() + 1.0


def nested_def_reads_what_a_branch_assigns(x):
    scale = 1.0

    def scaled(v):
        return v * scale

    if x > 1:
        scale = 3.0
    return scaled(x)


def generator_sees_later_value(n):
    k = 1
    gen = (k * v for v in range(3))
    for _ in range(n):
        k = k + 1
    return sum(gen)


def test_lambdas_made_per_iteration_share_the_loop_variable():
    assert autograph.convert(lambdas_made_per_iteration)() == [2, 2, 2]
    check(lambdas_per_iteration_scaled, 2)


def test_closures_see_what_loops_and_branches_assign():
    check(closure_over_a_variable_the_loop_rebinds, 3, vmap=[0, 1, 4])
    check(closure_read_in_a_while, 3, vmap=[0, 2, 5])
    check(closure_read_after_a_branch, 2.0, vmap=[-1.0, 0.5, 3.0])
    check(closure_read_after_a_branch, -3.0)
    check(nested_def_reads_what_a_branch_assigns, 2.0, vmap=[0.0, 2.0, 5.0])
    assert_same_python(generator_sees_later_value(4),
                       autograph.convert(generator_sees_later_value)(4))


# --- nonlocal writers --------------------------------------------------------------------


def nonlocal_writer_called_from_the_loop(n):
    x = 0

    def inc():
        nonlocal x
        x += 1

    for _ in range(n):
        inc()
        x = x + 100
    return x


def nonlocal_writer_called_from_a_branch(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v

    if x > 0:
        add(x)
    else:
        add(-2.0 * x)
    add(1.0)
    return total


def nonlocal_writer_in_a_while_condition(n):
    calls = 0

    def more():
        nonlocal calls
        calls += 1
        return calls < n

    while more():
        pass
    return calls


def nested_function_with_its_own_loop(n):
    acc = 0

    def run():
        nonlocal acc
        for i in range(n):
            acc = acc + i

    run()
    run()
    return acc


def test_nonlocal_writers():
    check(nonlocal_writer_called_from_the_loop, 3, vmap=[0, 1, 5])
    check(nonlocal_writer_called_from_a_branch, 2.0, vmap=[-1.0, 3.0])
    check(nonlocal_writer_called_from_a_branch, -1.5)
    check(nested_function_with_its_own_loop, 4, vmap=[0, 3])
    assert autograph.convert(nonlocal_writer_in_a_while_condition)(4) == 4


def test_a_staged_condition_that_assigns_through_a_closure_is_refused():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(nonlocal_writer_in_a_while_condition))(4)
    message = str(excinfo.value)
    assert "'calls'" in message and "condition" in message
    assert f":{line_of(nonlocal_writer_in_a_while_condition, 8)}" in message


# --- bindings made in one iteration and read in the next -----------------------------


def first_iteration_binding(xs):
    for i, v in enumerate(xs):
        if i == 0:
            t = v
        else:
            t = t + v
    return t


def first_iteration_binding_in_a_while(n):
    i = 0
    while i < n:
        if i == 0:
            t = 10
        else:
            t = t + i
        i += 1
    return t


def test_a_name_bound_in_an_earlier_iteration():
    check(first_iteration_binding, [1, 2, 3])
    check(first_iteration_binding, [1.5, 2.0])
    assert_same_python(first_iteration_binding_in_a_while(4),
                       autograph.convert(first_iteration_binding_in_a_while)(4))
    with pytest.raises(UnboundLocalError):
        autograph.convert(first_iteration_binding)([])


# --- a nested def reading a traced loop's index ------------------------------------------


def nested_def_reads_the_index(n):
    s = 0
    for i in range(n):
        def get():
            return i * 2  # noqa: B023
        s = s + get()
    return s


def lambda_reads_the_index_in_a_while(n):
    s = 0
    k = 0
    while k < n:
        k = k + 1
        f = lambda: k  # noqa: E731, B023
        s = s + f()
    return s


def test_nested_function_reading_a_traced_loops_index():
    check(nested_def_reads_the_index, 4, vmap=[0, 1, 5])
    check(lambda_reads_the_index_in_a_while, 3, vmap=[0, 2, 4])


def index_read_after_the_loop_by_a_closure(n):
    s = 0
    for i in range(n):
        s = s + i
    get = lambda: i  # noqa: E731
    return get()


def test_a_closure_reading_the_index_after_a_traced_loop_is_refused():
    assert autograph.convert(index_read_after_the_loop_by_a_closure)(3) == 2
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(index_read_after_the_loop_by_a_closure))(3)
    assert "'i'" in str(excinfo.value)


# --- closures over names that may be unbound ---------------------------------------------


def closure_over_maybe_unbound(c):
    if c:
        v = 1
    f = lambda: v  # noqa: E731
    try:
        return f()
    except NameError:
        return -1


def test_a_closure_over_an_unbound_name_raises_name_error():
    for c in (True, False):
        assert autograph.convert(closure_over_maybe_unbound)(c) == closure_over_maybe_unbound(c)


def test_to_code_keeps_parameters_for_functions_without_cells():
    code = autograph.to_code(first_iteration_binding)
    assert "cells=" not in code and "nonlocal" not in code
    code = autograph.to_code(closure_over_a_variable_the_loop_rebinds)
    assert "cells=lambda: (x,)" in code and "nonlocal x" in code


def test_staged_loops_keep_closures_right_under_grad():
    def loss(w):
        x = 0.0
        read = lambda: x  # noqa: E731
        for i in range(3):
            x = x + w * i
            x = x + read()
        return x

    value, grad = jax.value_and_grad(autograph.convert(loss))(2.0)
    expected, expected_grad = jax.value_and_grad(loss)(2.0)
    assert jnp.allclose(value, expected) and jnp.allclose(grad, expected_grad)


# --- loop `else` and names bound before a `break` -----------------------------------------


def bound_in_break_and_else(n):
    for i in range(n):
        if i == 3:
            r = i * 10
            break
    else:
        r = -1
    return r


def bound_in_break_and_else_while(n):
    i = 0
    while i < n:
        i += 1
        if i == 3:
            r = 10.0
            break
    else:
        r = 20.0
    return r + i


def break_and_else_after_a_try(n, x):
    for i in range(4):
        try:
            raise ValueError(i)
        except ValueError as e:
            x = x + e.args[0]
        if i == n:
            r = x
            break
    else:
        r = 7
    return r


def flag_set_before_the_binding(n):
    found = False
    for i in range(n):
        if i == 3:
            found = True
            if n > 5:
                r = 1
    if not found:
        r = 2
    return r


def test_a_name_bound_before_break_and_in_else():
    check(bound_in_break_and_else, 5, vmap=[0, 2, 4, 6])
    check(bound_in_break_and_else, 2)
    check(bound_in_break_and_else_while, 5, vmap=[0, 2, 4, 6])
    check(break_and_else_after_a_try, 1, 3, vmap=[0, 1, 5])


def test_a_flag_does_not_vouch_for_a_name_bound_after_it():
    # r is unbound after the loop when it finds 3 with n <= 5: Python raises, and a
    # staged loop cannot tell, so it refuses rather than make up a value.
    assert autograph.convert(flag_set_before_the_binding)(7) == 1
    with pytest.raises(UnboundLocalError):
        autograph.convert(flag_set_before_the_binding)(4)
    with pytest.raises(ConversionError):
        jax.jit(autograph.convert(flag_set_before_the_binding))(7)


# --- what the fuzzer found ----------------------------------------------------------------


def closure_over_maybe_unbound_in_a_loop(a, n):
    z = a
    for i in range(n):
        if 1 > 2:
            u = i
        read = lambda: u  # noqa: E731, B023
        try:
            z = z + read()
        except NameError:
            z = z - 1
    return z


def first_binding_in_a_staged_static_loop(n):
    z = n % 7
    for i in range(1, 3):
        if i == 1:
            t = 5
        else:
            t = t + i
        z = (z + t) % 79
    return z


def test_found_by_the_fuzzer():
    # A cell carried unbound through a staged loop stays unbound (it held None).
    check(closure_over_maybe_unbound_in_a_loop, 3, 2, vmap=[0, 1, 5])
    # A static loop staged from its start binds t in the first iteration.
    check(first_binding_in_a_staged_static_loop, 3, vmap=[0, 2, 9])
