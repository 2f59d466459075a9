"""``match`` statements in converted code: Python's result, jumps inside cases included.

The ``match`` itself runs as Python (its subject and patterns are Python values);
``return``, ``break`` and ``continue`` inside its cases go through the same flags as
inside an ``if``, and what the cases hold (an ``if`` on a traced value, a loop) is
staged as anywhere else. A ``match`` on a traced subject is JAX's error, with a note
that says to write the cases as ``if``/``elif``.
"""

import jax
import jax.numpy as jnp
import pytest

import autograph
from tests.differential import check


def returns_from_cases(x, mode):
    match mode:
        case "double":
            if x > 0:
                return x * 2
            x = x - 1
        case "negate" | "minus":
            return -x
        case [scale, offset]:
            return x * scale + offset
        case {"power": p}:
            for _ in range(p - 1):
                if x > 1000:
                    return x
                x = x * x
        case _:
            x = x + 1
    return x + 0.5


def jumps_in_cases_in_a_loop(items):
    total = 0
    for kind, value in items:
        match kind:
            case "skip":
                continue
            case "stop":
                break
            case "return":
                if value > 0:
                    return value * 100
            case _:
                total += value
    else:
        total = total * 10
    return total


def captures_live_after_the_loop(xs):
    last = None
    for x in xs:
        match x:
            case [first, *rest]:
                last = (first, rest)
            case {"k": value, **others}:
                last = (value, others)
            case int(n) if n > 2:
                last = n
            case _:
                pass
    return last, first


def match_with_static_subject_in_traced_code(x, n):
    i = 0
    while i < n:
        match n:
            case 3:
                x = x + 1.0
            case _:
                x = x * 2.0
        i += 1
    match n % 2:
        case 0:
            if x > 5:
                return x
        case 1:
            return -x
    return x + 100.0


def match_on_traced_subject(x):
    match x:
        case 1:
            return x + 1
        case _:
            return x


@pytest.mark.parametrize("mode", ["double", "negate", "minus", (2, 3), {"power": 3},
                                  "other", [1], {"power": 1}])
@pytest.mark.parametrize("x", [3, -3, 2.5])
def test_returns_from_cases_python_values(x, mode):
    check(returns_from_cases, x, mode, compiled=False)


@pytest.mark.parametrize("mode", ["double", "negate", "other"])
def test_returns_from_cases_traced_value_static_subject(mode):
    for x in (3.0, -3.0):
        expected = returns_from_cases(x, mode)
        got = jax.jit(autograph.convert(returns_from_cases), static_argnums=1)(x, mode)
        assert float(got) == expected


@pytest.mark.parametrize("items", [
    [("a", 1), ("skip", 5), ("b", 2)],
    [("a", 1), ("stop", 5), ("b", 2)],
    [("a", 1), ("return", 5), ("b", 2)],
    [("a", 1), ("return", -5), ("b", 2)],
    [],
])
def test_break_continue_return_in_cases(items):
    check(jumps_in_cases_in_a_loop, items, compiled=False)


def test_pattern_captures_are_variables_of_the_function():
    check(captures_live_after_the_loop, [[1, 2, 3], {"k": 3, "z": 4}, 7, 1], compiled=False)
    check(captures_live_after_the_loop, [{"k": 3}, [5]], compiled=False)
    with pytest.raises(UnboundLocalError):
        autograph.convert(captures_live_after_the_loop)([{"k": 1}])


@pytest.mark.parametrize("n", [2, 3])
def test_match_on_static_value_inside_staged_code(n):
    for x in (1.0, 3.0, -4.0):
        expected = match_with_static_subject_in_traced_code(x, n)
        assert autograph.convert(match_with_static_subject_in_traced_code)(x, n) == expected
        compiled = jax.jit(autograph.convert(match_with_static_subject_in_traced_code),
                           static_argnums=1)
        assert float(compiled(x, n)) == expected


def test_match_on_traced_subject_says_to_use_if():
    assert autograph.convert(match_on_traced_subject)(1) == 2
    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(autograph.convert(match_on_traced_subject))(jnp.int32(1))
    note = "\n".join(info.value.__notes__)
    line = match_on_traced_subject.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in note
    assert "match" in note and "`if`/`elif`" in note


def test_generated_code_keeps_the_match():
    code = autograph.to_code(returns_from_cases)
    assert "match mode:" in code and "case 'negate' | 'minus':" in code
    assert "did_return = True" in code
