"""What a staged branch or loop cannot honour reaches the runtime call from conversion.

The control-flow converter passes ``in_try``, ``assigns_global``/``assigns_nonlocal``
and ``deletes`` where they hold (only there: other code is generated as before),
and tracing then reads no source and no bytecode.
"""

from __future__ import annotations

import ast
import dis
import sys

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError
from tests.autograph.test_errors import try_around_condition as if_in_try


def line_of(fn, k):
    return fn.__code__.co_firstlineno + k


def value_in_try(x):
    try:
        y = 1.0 if x > 0 else 2.0
    except ZeroDivisionError:
        y = 3.0
    return y


def loop_in_try(x):
    try:
        while x < 10:
            x = x * 2
    except ArithmeticError:
        pass
    return x


total = 0


def for_writes_global(xs):
    global total
    for v in xs:
        total = total + v
    return xs


def while_writes_global(x):
    global total
    while x < 3:
        total = total + 1
        x = x + 1
    return x


def deletes_carried(x, n):
    y = x
    i = 0
    while i < n:
        del y
        y = i * 1.0
        i += 1
    return y


def plain(x):
    while x < 10:
        x = x * 2
    return x


def checked(x):
    if x > 0:
        raise ValueError("positive")
    return x


def check_in_a_try(x):
    try:
        y = checked(x)
    except ValueError:
        y = 0.0
    return y


def check_in_a_try_whose_finally_returns(x):
    y = x
    try:
        assert x < 5, "big"
        y = x + 1
    finally:
        return y   # noqa: B012 - discards the AssertionError in Python


def test_keywords_only_where_they_hold():
    assert f", in_try={line_of(if_in_try, 1)})" in autograph.to_code(if_in_try)
    assert f"lambda: 2.0, in_try={line_of(value_in_try, 1)})" in autograph.to_code(
        value_in_try)
    assert (f"(x,), compares=('x', 10), in_try={line_of(loop_in_try, 1)})"
            in autograph.to_code(loop_in_try))
    assert "(), assigns_global='total')" in autograph.to_code(for_writes_global)
    assert "(y, i), compares=('i', 'n'), deletes='y')" in autograph.to_code(deletes_carried)
    code = autograph.to_code(plain)
    assert code.endswith("x = ag__.while_stmt(loop_test, loop_body, (x,), compares=('x', 10))"
                         "\n    return x\n")


@pytest.mark.parametrize("fn, args, k, words", [
    # An `except` for what Python raises on values, around traced `x`: refused at the
    # `try` (docs/try_and_staging.md).
    (value_in_try, (jnp.float32(1.0),), 1, "an error Python raises on values"),
    (loop_in_try, (jnp.float32(1.0),), 1, "an error Python raises on values"),
    (while_writes_global, (jnp.float32(1.0),), 2, "'total' is declared `global`"),
])
def test_staged_they_are_refused_at_the_user_s_line(fn, args, k, words):
    with pytest.raises(ConversionError, match=words) as info:
        jax.jit(autograph.convert(fn))(*args)
    assert f"{__file__}:{line_of(fn, k)}" in str(info.value)


def test_a_static_loop_writing_a_global_runs_unrolled_as_under_jit():
    global total
    total = 0.0
    jax.jit(for_writes_global)(jnp.ones(3))
    expected = total
    total = 0.0
    jax.jit(autograph.convert(for_writes_global))(jnp.ones(3))
    assert type(total) is type(expected) and str(total) == str(expected)
    total = 0


def test_as_python_they_run_as_the_original():
    global total
    assert autograph.convert(value_in_try)(1.0) == value_in_try(1.0) == 1.0
    assert autograph.convert(loop_in_try)(1.0) == loop_in_try(1.0)
    total = 0
    autograph.convert(for_writes_global)([1, 2])
    assert total == 3


def test_tracing_reads_no_source_and_no_bytecode(monkeypatch):
    """Converted first, then traced with the parser and the disassembler watched: the
    runtime calls neither, for the staged loops and branches nor for their errors,
    nor for a traced check under an `except` or in a `try` whose `finally` returns.
    (The boundary's notes, at error time, may read the generated code.)"""
    originals = (plain, if_in_try, deletes_carried, check_in_a_try,
                 check_in_a_try_whose_finally_returns)
    functions = [autograph.convert(fn) for fn in originals]
    for fn in originals:
        autograph.to_code(fn)
    callers = []

    def watched(real):
        def call(*args, **kwargs):
            callers.append(sys._getframe(1).f_globals.get("__name__", ""))
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(ast, "parse", watched(ast.parse))
    monkeypatch.setattr(dis, "get_instructions", watched(dis.get_instructions))
    monkeypatch.setattr(dis, "_parse_exception_table", watched(dis._parse_exception_table))
    assert float(jax.jit(functions[0])(jnp.float32(1.0))) == plain(1.0)
    assert not callers
    with pytest.raises(ConversionError, match="an error Python raises on values"):
        jax.jit(functions[1])(jnp.float32(1.0))
    with pytest.raises(ConversionError, match="`del y`"):
        jax.jit(functions[2])(jnp.float32(1.0), jnp.int32(3))
    # A traced check in a callee, under the caller's `except` (raised while tracing,
    # refused there), and a traced assert in a `try` whose `finally` returns.
    with pytest.raises(ConversionError, match="cannot see errors"):
        jax.jit(functions[3])(jnp.float32(1.0))
    with pytest.raises(ConversionError, match="the `finally` of a `try`"):
        jax.jit(functions[4])(jnp.float32(1.0))
    assert not [c for c in callers if c.startswith("autograph.runtime")], callers
