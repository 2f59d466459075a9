"""Converted code keeps the original's names: a top-level function is compiled under
its own name (declared global in the factory), others renamed after compiling."""

from __future__ import annotations

import types

from autograph.transpiler import Transpiler


def countdown(n):
    total = 0
    while n > 0:
        scale = (lambda k: k * 2)
        total += scale(n)
        n -= 1
    if total > 100:
        return countdown(0) + total
    return total


def outer():
    def inner(n):
        return 0 if n == 0 else inner(n - 1) + 1
    return inner


class Holder:
    def method(self, n):
        for i in range(n):
            n += i
        return n


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _qualnames(fn):
    return sorted({c.co_qualname for c in _codes(fn.__code__)})


def test_a_top_level_function_and_its_helpers_have_the_original_names():
    converted = Transpiler().convert(countdown)
    assert converted.__code__.co_name == "countdown"
    assert converted.__code__.co_qualname == "countdown"
    names = _qualnames(converted)
    assert "countdown.<locals>.<lambda>" in names         # the user's, as in the original
    assert any(n.startswith("countdown.<locals>.loop_body") for n in names)
    assert all(n == "countdown" or n.startswith("countdown.<locals>.") for n in names)
    # the recursion reads the global, as the original does
    codes = list(_codes(converted.__code__))
    assert any("countdown" in c.co_names for c in codes)
    assert not any("countdown" in c.co_freevars + c.co_cellvars for c in codes)
    assert converted(20) == countdown(20) and converted(3) == countdown(3)


def test_a_nested_recursive_function_and_a_method_keep_their_names():
    inner = outer()
    converted = Transpiler().convert(inner)
    assert converted.__code__.co_qualname == "outer.<locals>.inner"
    assert converted(5) == inner(5) == 5
    method = Transpiler().convert(Holder.method)
    assert method.__code__.co_qualname == "Holder.method"
    assert all(n.startswith("Holder.method") for n in _qualnames(method))
    assert method(Holder(), 4) == Holder().method(4)
