"""Counterexamples the fuzzer found, each reduced to a plain function.

Each is checked four ways with ``tests.differential.check`` (original, convert with
Python values, to_graph, the user's jit, vmap).
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import autograph
from tests.differential import check


# Seed 37 (and most programs): a conditional expression on a traced condition raised
# ValueError from zip(strict=True) in the runtime (its names and state differ in
# length), and once past that returned its value wrapped in a 1-tuple.
def ternary_on_traced_condition(a):
    return 1 if a > 0 else 2


def test_ternary_on_traced_condition():
    check(ternary_on_traced_condition, 3, vmap=[-1, 0, 4])


def ternary_feeding_arithmetic(a, b):
    z = (b if a % 3 else a) + 1
    return z * 2


def test_ternary_feeding_arithmetic():
    check(ternary_feeding_arithmetic, 4, 5, vmap=[-2, 0, 3, 7])


# Seed 39: a loop carrying a float and a weakly typed int asked jax.core.get_aval,
# which JAX 0.10 removed (AttributeError while staging any such loop).
def loop_joining_python_and_traced_values(b):
    g = 2.75
    x = 0
    w = 0
    while w < b % 3 + 2:
        w += 1
        x = x if g <= 2.5 else w
        g = g * -1.0 % 64.0
    return x, g


def test_loop_joining_python_and_traced_values():
    check(loop_joining_python_and_traced_values, 4, vmap=[-1, 0, 1, 5])


# A staged loop whose carried int becomes a float must raise StagingTypeError naming
# the variable; explaining it asked jax.core.get_aval, removed in JAX 0.10, so the
# user got an AttributeError from inside the runtime.
def loop_changing_carry_type(n):
    x = jnp.int32(n) * 0
    for _ in range(n):
        x = x + jnp.float32(0.5)
    return x


def test_loop_changing_carry_type_is_explained():
    import jax

    import autograph
    from autograph.errors import StagingTypeError

    assert autograph.convert(loop_changing_carry_type)(2) == loop_changing_carry_type(2)
    with pytest.raises(StagingTypeError, match="'x'") as info:
        jax.jit(autograph.convert(loop_changing_carry_type))(2)
    line = loop_changing_carry_type.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in str(info.value)


def calls_nested_function_that_returns(x):
    def double(v):
        return v * 2

    for i in range(3):
        if x > i:
            x = double(x)
    return x


def test_nested_function_return_is_its_own():
    # The return converter saw the nested def's `return` as an early return of the
    # outer function and rewrote it into flags: the nested function returned None.
    check(calls_nested_function_that_returns, 2, vmap=[0, 1, 5])


# Long profile, seed 1000063: an inner `if` assigning `x` in both branches, inside a
# branch that does not carry `x` (it is dead after the outer `if`), passed the
# enclosing function's `x` in: UnboundLocalError inside the generated if_false.
def inner_if_redefines_dead_variable(a, b, n):
    x = b
    if a % 2:
        y = 1
    else:
        if b % 4:
            x = n
        else:
            x = 5
        x *= -1
        y = x
    x = n
    return x, y


def test_inner_if_redefines_dead_variable():
    check(inner_if_redefines_dead_variable, 2, 3, 4)
    check(inner_if_redefines_dead_variable, 3, 4, 5, vmap=[0, 1, 2, 3])


# Found with the "jumps" feature on (early return in staged loops); not fixed here:
# they are in the jump converters' design (jumps branch), reported to the lead.

def return_in_while_in_if(a, n):
    z = 0
    for _ in range(n):
        if a > z:
            w = 0
            while w < 2:
                w += 1
                return z
            z += 1
    return z


def test_return_in_while_in_if_in_traced_loop():
    check(return_in_while_in_if, 3, 4)


def loop_counter_after_early_return(a, n):
    y = 0
    if a < n:
        return y
    for _ in range(3):
        w = 0
        while w < 2:
            w += 1
            if a > 5:
                break
    return y + 1


def test_loop_counter_after_early_return():
    check(loop_counter_after_early_return, 3, 4)


def return_in_while_in_traced_for(a, n):
    x = 0
    for _ in range(n):
        w = 0
        while w < a % 4 + 1:
            w += 1
            if w > 2:
                return x
        x += 1
    return x


def test_return_in_while_in_traced_for():
    check(return_in_while_in_traced_for, 7, 3)


# Hostile-input table: conversion bugs found there, reduced.

EVENTS = []


def append_to_global_list(x):
    if x > 0:
        EVENTS.append(x)
    return len(EVENTS)


def test_append_to_global_list_keeps_it_global():
    # The list converter rebound `EVENTS = ag__.list_append(EVENTS, x)`, which made
    # EVENTS local to the function: UnboundLocalError (fixed on main the same way).
    import autograph

    EVENTS.clear()
    assert autograph.convert(append_to_global_list)(3) == 1
    assert EVENTS == [3]


TOTAL = 10


def augment_global(x):
    global TOTAL
    if x > 0:
        TOTAL += x
    return TOTAL


def test_global_in_branch():
    # The branch's state entered as Undefined('TOTAL').
    import autograph

    global TOTAL
    TOTAL = 10
    assert autograph.convert(augment_global)(3) == 13
    assert TOTAL == 13


def self_recursive(n):
    return 1 if n <= 1 else n * self_recursive(n - 1)


def test_self_recursive_function():
    # The converted def, compiled under the user's name inside the binding factory,
    # shadowed the global it calls: KeyError while binding the closure.
    import autograph

    assert autograph.convert(self_recursive)(5) == 120
    assert int(autograph.to_graph(self_recursive, static_argnums=0)(4)) == 24


def four_nested_ifs(x):
    y = 0
    if x > 0:
        y += 1
        if x > 1:
            y += 1
            if x > 2:
                y += 1
                if x > 3:
                    y += 1
    return y


def test_four_nested_ifs():
    # Generated nodes had no end column; compile() inherited one from an enclosing
    # line: "ValueError: line 9, column 16-12 is not a valid range".
    check(four_nested_ifs, 5, vmap=[0, 2, 4, 9])


def generator_inside(x):
    def gen(n):
        yield from range(n)

    total = 0
    for v in gen(x):
        total += v
    return total


def test_nested_generator_does_not_make_the_function_one():
    import autograph

    assert autograph.convert(generator_inside)(4) == 6


def return_under_python_false_branch(n):
    flag = False
    total = 0
    for i in range(n):
        if flag:
            return total
        total += i
    return total


def test_return_under_python_false_branch_in_traced_loop():
    check(return_under_python_false_branch, 5)


# bounded_grad seed 1020: a list appended in a `for` over a traced range with a `break`
# (an exit test: `_staged_range_until`) is never made a list buffer, bounded or not,
# so staging refuses the loop with "'values' changes type across an iteration".
def list_grown_in_traced_range_with_break(x, n):
    values = [x]
    for i in range(n):
        autograph.set_loop_options(maximum_iterations=40)
        values.append(jnp.sin(x) * i)
        if i > 2:
            break
    return jnp.sum(autograph.stack(values))


@pytest.mark.xfail(strict=True, raises=autograph.ConversionError,
                   reason="_staged_range_until does not stage lists (autograph/runtime/loops.py)")
def test_list_grown_in_traced_range_with_break():
    check(list_grown_in_traced_range_with_break, 0.5, 6)


# Idiom seed 27023 (int_counters): watching the closure cells of the user's helpers
# (side_effects, a helper's `nonlocal`) took another copy of the loop's own body for
# a foreign function and watched the function's own cell `a`: the loop's Python-int
# counter left int32 where the staged loop stops with Python's OverflowError, and
# the compiled program gave another number silently (the product is 30122601607).
def hashes_past_int32(a, b, n):
    x = 0
    h, s = 7, 1
    i = 0
    while i < n:
        h = (h * 65599 + i) % 2147483647
        s = s * 2 + 1
        h = (h * 65599 + i) % 97
        x = x + (s % 7)
        x = x + a * (h % 5)
        i = i + 1
    return x + h % 11


def test_a_counter_leaving_int32_in_a_traced_loop_stops_loudly():
    assert autograph.convert(hashes_past_int32)(0, 1, 2) == hashes_past_int32(0, 1, 2)
    with pytest.raises(OverflowError, match="outside 32-bit integers"):
        autograph.to_graph(hashes_past_int32)(jnp.int32(0), jnp.int32(1), jnp.int32(2))
