"""What a block need not carry (issue 26.8) and annotated names in cells (26.10):
original vs converted (Python) vs compiled (to_graph and inside jax.jit)."""

import re

import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import ConversionError
from tests.differential import check

# --- a staged if does not carry what is dead after it ----------------------------------


def stacked_after_return(c):
    t = jnp.int32(3)
    if c > 0:
        return t
    t = jnp.stack([t, t + 1])
    return jnp.sum(t)


def tuple_in_one_branch(x):
    t = x * 2
    if x > 1:
        t = (t, t + 1)
        y = t[1] - t[0]
    else:
        y = -t
    return y


def unbound_before_and_dead_after(x, n):
    if x > 0:
        return x
    for _j in range(n):
        for i in range(2):
            if i == 0:
                q = x - 1
            x = x + q
    return x


@pytest.mark.parametrize("c", [1, -1])
def test_dead_variable_of_another_shape_after_an_early_return(c):
    check(stacked_after_return, c)


@pytest.mark.parametrize("x", [3, 0])
def test_dead_variable_of_another_type_in_one_branch(x):
    check(tuple_in_one_branch, x)


@pytest.mark.parametrize("x,n", [(2, 3), (-2, 3), (-2, 0)])
def test_variable_unbound_before_and_dead_after_a_staged_if(x, n):
    check(unbound_before_and_dead_after, x, n)


def test_a_dead_variable_enters_the_branch_that_assigns_it_as_a_default():
    code = autograph.to_code(stacked_after_return)
    assert "def if_false(retval, *, t=t):" in code
    assert "retval = ag__.if_stmt(c > 0, if_true, if_false, (ag__.Undefined('retval'),))" in code


def walrus_in_test(x):
    t = x
    if (t := t + 1) > 2:
        t = t * 2
        y = t
    else:
        y = 0
    return y


@pytest.mark.parametrize("x", [5, 0])
def test_a_name_the_test_binds_is_still_carried(x):
    # The test runs after the helpers are defined: a default would hold the old value.
    check(walrus_in_test, x)
    assert "t=t" not in autograph.to_code(walrus_in_test)


def dict_changed_in_a_branch(x):
    d = {"v": 1, "w": 2}
    y = x
    if x > 0:
        d["v"] += x
        y = d["v"] * 2
    else:
        d = {"v": 0, "w": 0}
    return y


def dict_given_to_a_function_in_a_branch(x):
    def bump(dd):
        dd["v"] += 1

    d = {"v": x}
    y = 0
    if x > 0:
        bump(d)
        y = d["v"]
        d = {"v": y * 0}
    return y


def array_added_to_in_a_branch(x):
    a = np.zeros(2, np.int32)
    alias = a
    y = 0
    if x > 0:
        a += x
        y = a[0]
    return y + alias[1]


@pytest.mark.parametrize("x", [3, -3])
def test_a_dead_object_the_branch_changes_in_place_is_still_carried(x):
    # Passed as a default, the branch would change the object itself while tracing.
    check(dict_given_to_a_function_in_a_branch, x)
    # Changed in place in one branch and rebound in the other: Python's `d` is then the
    # old dict or a new one depending on the traced condition, which only another
    # holder of the old dict could tell apart; nothing else holds it here, so it stages
    # (tests/runtime/test_carried_state.py has the refused form, with `e = d`).
    check(dict_changed_in_a_branch, x)
    assert not re.search(r"shared=\([^)]*'d'", autograph.to_code(dict_changed_in_a_branch))
    assert "d=d" not in autograph.to_code(dict_changed_in_a_branch)
    assert "d=d" not in autograph.to_code(dict_given_to_a_function_in_a_branch)
    assert "a=a" not in autograph.to_code(array_added_to_in_a_branch)
    assert autograph.convert(array_added_to_in_a_branch)(x) == array_added_to_in_a_branch(x)


# --- first-iteration bindings nested in a traced loop ----------------------------------


def first_iteration_binding(a, n):
    b = 0
    for j in range(n):
        for i in range(2):
            if i == 0:
                q = a + j
            b = b + q
    return b


def read_before_bound_on_a_traced_path(a, n):
    b = 0
    for j in range(n):
        if a > 100:
            b = q  # noqa: F821 - bound by an earlier iteration
        q = a + j  # noqa: F841
    return b


@pytest.mark.parametrize("a,n", [(5, 3), (5, 0), (-1, 1)])
def test_binding_in_the_first_iteration_of_a_static_inner_loop(a, n):
    check(first_iteration_binding, a, n)


def test_a_read_that_may_come_first_is_refused_at_the_loop_line():
    assert autograph.convert(read_before_bound_on_a_traced_path)(5, 3) == 0
    with pytest.raises(UnboundLocalError, match="'q'"):
        autograph.convert(read_before_bound_on_a_traced_path)(500, 3)
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(read_before_bound_on_a_traced_path)(5, 3)
    message = str(info.value)
    line = read_before_bound_on_a_traced_path.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in message
    assert "'q' may be read before it is assigned" in message
    assert "zero times" not in message


def return_in_a_staged_if_of_a_static_loop(x):
    for i in range(3):
        if x > i:
            return i
        z = i
    return z


@pytest.mark.parametrize("x", [-5, 0, 1, 3])
def test_a_static_loop_returning_from_a_staged_if(x):
    # z is read after the loop only when no return happened: every iteration bound it.
    check(return_in_a_staged_if_of_a_static_loop, x)


def always_returns_in_a_loop(a):
    for _ in range(3):
        try:
            if a > 0:
                a = a + 1
        finally:
            return a  # noqa: B012 - the loop always returns
    out = [a]
    for k in range(2):
        out = out + [out[-1] + k]
    return sum(out)


@pytest.mark.parametrize("a", [2, -2])
def test_code_after_a_loop_that_always_returns_is_still_converted_as_reachable(a):
    # Python never runs it, but it stays in the converted code (behind the return
    # flag), and staged, it is traced: its names are not taken for bound.
    check(always_returns_in_a_loop, a)


# --- annotated names that closures read (26.10) ----------------------------------------


def annotated_after_return(n):
    if n > 5:
        return 0
    x: int = n
    g = lambda: x + 1  # noqa: E731
    return g()


def bare_annotation_after_return(n):
    if n > 5:
        return 0
    x: int
    x = n * 2

    def g():
        return x + 1
    return g()


def class_annotation_kept(n):
    if n > 5:
        return 0
    x: int = n

    class Box:
        x: int = 7
    g = lambda: x + Box.x  # noqa: E731
    return g(), Box.__annotations__["x"] is int


@pytest.mark.parametrize("n", [3, 7])
def test_annotated_name_read_by_a_lambda_after_a_return(n):
    check(annotated_after_return, n)


@pytest.mark.parametrize("n", [3, 7])
def test_bare_annotation_of_a_name_a_function_reads(n):
    check(bare_annotation_after_return, n)


def test_a_class_body_keeps_its_annotations():
    assert autograph.convert(class_annotation_kept)(3) == class_annotation_kept(3) == (10, True)
    assert autograph.convert(class_annotation_kept)(7) == 0
