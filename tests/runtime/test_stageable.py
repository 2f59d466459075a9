"""``state.check_stageable``: what only fails once a branch or loop is staged."""

from __future__ import annotations

import pytest

from autograph.errors import ConversionError
from autograph.runtime import stageable
from autograph.runtime.tracing import Location


def line_of(fn, k):
    return fn.__code__.co_firstlineno + k


def with_try_except(x):
    try:
        if x:
            pass
    except ValueError:
        pass


def with_try_finally(x):
    try:
        if x:
            pass
    finally:
        pass


def defines_in_try():
    try:
        def inner(x):
            if x:
                pass
        return inner
    except ValueError:
        pass


def test_enclosing_try_sees_try_except_only():
    assert stageable.enclosing_try(__file__, line_of(with_try_except, 2)) == line_of(
        with_try_except, 1)
    assert stageable.enclosing_try(__file__, line_of(with_try_except, 5)) is None  # the handler
    assert stageable.enclosing_try(__file__, line_of(with_try_finally, 2)) is None


def test_enclosing_try_stops_at_function_boundaries():
    assert stageable.enclosing_try(__file__, line_of(defines_in_try, 3)) is None


def test_enclosing_try_of_unknown_file():
    assert stageable.enclosing_try("<no such file>", 3) is None


def test_check_stageable_names_the_try():
    where = Location(__file__, line_of(with_try_except, 2))
    with pytest.raises(ConversionError, match=f"`try` at line {line_of(with_try_except, 1)}"):
        stageable.check_stageable((), where, "if")


def test_check_stageable_finds_outer_writes_in_nested_helpers():
    def body():
        def inner():
            global _GLOBAL
            _GLOBAL = 1
        return inner

    where = Location(__file__, 1)
    with pytest.raises(ConversionError, match="'_GLOBAL' is declared `global`"):
        stageable.check_stageable((body,), where, "for loop")


def test_check_stageable_allows_writes_to_the_body_s_own_cells():
    def body(acc):
        def add():
            nonlocal acc
            acc = acc + 1
        add()
        return acc

    stageable.check_stageable((body,), Location(__file__, 1), "for loop")
