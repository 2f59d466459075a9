"""Scopes as Python has them: locals(), assignment expressions in conditions,
names Python unbinds (``except ... as``, ``del``), qualified names of classes."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import ConversionError
from tests.differential import assert_same_python, check


def same_in_python_mode(fn, *args):
    expected = fn(*args)
    assert_same_python(expected, autograph.convert(fn)(*args))
    return expected


# --- locals(), vars(), dir() -------------------------------------------------------------


def locals_in_a_loop_body(n):
    total = 0
    for i in range(n):
        total += i
        seen = dict(locals())
    return seen


def locals_after_early_return(x):
    if x > 0:
        return sorted(locals())
    y = x
    return sorted(vars()), dir()


def make_locals_of_a_closure(a):
    b = a + 1

    def inner(c):
        if c:
            d = b
        return locals()

    return inner


def locals_in_a_method_of_a_local_class(x):
    class C:
        y = x

        def m(self):
            return sorted(locals()), x

        z = sorted(locals())
    return C.z, C().m()


def locals_after_a_match(x):
    match x:
        case (a, b) | (b, a, 0):
            w = a - b
        case _:
            w = 0
    out = locals()
    del out["x"]
    return sorted(out.items())


def test_locals_in_class_bodies_and_match_cases():
    # (CPython's test_scope.testLocalsClass and test_patma_246: a method inside a
    # class body failed to convert; names a case pattern captures were left out)
    same_in_python_mode(locals_in_a_method_of_a_local_class, 1)
    same_in_python_mode(locals_after_a_match, (2, 1))
    same_in_python_mode(locals_after_a_match, (1, 2, 0))
    same_in_python_mode(locals_after_a_match, 3)


def test_locals_shows_the_users_names():
    seen = autograph.convert(locals_in_a_loop_body)(3)
    assert seen["i"] == 2 and seen["total"] == 3 and seen["n"] == 3
    assert set(seen) == set(locals_in_a_loop_body(3))
    same_in_python_mode(locals_after_early_return, 1)
    same_in_python_mode(locals_after_early_return, -1)
    expected = make_locals_of_a_closure(1)(True)
    assert autograph.convert(make_locals_of_a_closure(1))(True) == expected
    assert autograph.convert(make_locals_of_a_closure(1))(False) == {"b": 2, "c": False}


# --- assignment expressions in conditions --------------------------------------------------


def walrus_in_and(x):
    if x and (y := x + 1):
        return y
    return 0


def walrus_first_operand(x):
    if (y := x * 2) > 1 and y < 10:
        return y
    return -1


def walrus_in_or(x):
    y = 5
    if x > 3 or (y := x - 1) > 0:
        return y
    return -y


def walrus_in_value(x):
    r = x > 0 and (y := x * 3)  # noqa: F841
    return r


def walrus_in_while(n):
    s = 0
    while (n := n - 1) > 0:
        s += n
    return s


def walrus_in_while_with_break(n):
    s = 0
    while (n := n - 1) > 0:
        if s > 10:
            break
        s += n
    return s, n


def walrus_in_while_and(n, limit):
    s = 0
    k = 0
    while k < limit and (n := n - 1) > 0:
        s += n
        k += 1
    return s, n


def walrus_in_comprehension_condition(xs):
    found = [v for v in xs if v > 1 and (last := v)]
    return found, last


def test_assignment_expressions_in_and_or():
    for x in (0, 1, 5):
        same_in_python_mode(walrus_in_and, x)
        same_in_python_mode(walrus_first_operand, x)
        same_in_python_mode(walrus_in_or, x)
        same_in_python_mode(walrus_in_value, x)
    check(walrus_first_operand, 2, vmap=[0, 1, 4, 7])
    check(walrus_in_or, 5)
    check(walrus_in_or, 1)
    same_in_python_mode(walrus_in_comprehension_condition, [0, 2, 3])


def test_staged_branch_binding_by_an_and_operand_is_refused_only_where_used_after():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(walrus_in_and))(2)
    assert "'y'" in str(excinfo.value)


def test_assignment_expressions_in_while_conditions():
    check(walrus_in_while, 5, vmap=[0, 1, 4, 6])
    check(walrus_in_while_with_break, 8, vmap=[0, 3, 8])
    check(walrus_in_while_and, 6, 3)
    check(walrus_in_while_and, 2, 3)


# --- names Python unbinds -----------------------------------------------------------------


def except_as_in_a_loop():
    out = []
    for i in range(2):
        try:
            raise ValueError(i)
        except ValueError as e:
            out.append(str(e))
    return out


def except_as_unbinds_after(x):
    e = 1
    if x:
        try:
            raise KeyError(x)
        except KeyError as e:  # noqa: F841 - unbinds `e`
            pass
    try:
        return e
    except NameError:
        return "unbound"


def del_in_a_loop(n):
    total = 0
    for i in range(n):
        tmp = i * 2
        total += tmp
        del tmp
    return total


def del_then_read_after(n):
    tmp = 0
    for i in range(n):
        tmp = i
        del tmp
    try:
        return tmp
    except NameError:
        return -1


def test_names_python_unbinds_are_not_state():
    same_in_python_mode(except_as_in_a_loop)
    same_in_python_mode(except_as_unbinds_after, 0)
    same_in_python_mode(except_as_unbinds_after, 3)
    check(del_in_a_loop, 4, vmap=[0, 1, 3])
    same_in_python_mode(del_then_read_after, 0)
    same_in_python_mode(del_then_read_after, 2)


# --- classes and nested functions defined in converted code -------------------------------


def class_in_a_loop(n):
    for i in range(n):
        class Step:
            def size(self):
                return i  # noqa: B023
    return Step.__qualname__, Step.size.__qualname__, Step().size()


def function_in_a_branch(x):
    if x > 0:
        def pick():
            return x
    else:
        def pick():
            return -x
    return pick.__qualname__, pick()


def test_qualified_names_are_the_users():
    same_in_python_mode(class_in_a_loop, 2)
    same_in_python_mode(function_in_a_branch, 3)
    same_in_python_mode(function_in_a_branch, -3)


def test_class_bodies_reading_loop_variables_under_jit():
    def scaled(x, n):
        for i in range(n):
            class K:
                factor = i + 1
            x = x * K.factor
        return x

    assert jax.jit(autograph.convert(scaled), static_argnums=1)(jnp.float32(1.5), 3) == 9.0
