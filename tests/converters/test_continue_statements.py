"""``continue``: differential tests over every loop form."""

import numpy as np
import pytest

import autograph
from tests.differential import check

XS = [1.0, -2.0, 3.0, -1.0, 5.0, 6.0, -7.0, 8.0]


def while_continue(n):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        total += i
    return total


def static_range_continue(x):
    total = 0.0
    for i in range(8):
        if x[i] < 0:
            continue
        total += x[i]
    return total


def traced_range_continue(n):
    total = 0
    for i in range(n):
        if i % 2 == 1:
            continue
        total += i * i
    return total


def array_continue(x):
    total = 0.0
    skipped = 0
    for v in x:
        if v < 0:
            skipped += 1
            continue
        total += v
    return total, skipped


def nested_continue(x):
    total = 0.0
    for i in range(3):
        if x[i] < 0:
            continue
        for j in range(4):
            if x[j] > x[i]:
                continue
            total += x[j]
        total += 1.0
    return total


def continue_and_break(x):
    total = 0.0
    for v in x:
        if v < 0:
            continue
        if v > 5.5:
            break
        total += v
    return total


def continue_deep(x):
    total = 0.0
    for v in x:
        if v > 0:
            if v > 5:
                continue
            total += 1.0
        total += v
    return total


def continue_deep_nested(x):
    total = 0.0
    for i in range(3):
        for v in x:
            if v > 0:
                if v > x[i]:
                    continue
                total += 1.0
            total += v
        if total > 20:
            continue
        total = total * 0.5
    return total


def continue_in_python_list(x):
    total = 0.0
    for w in [1.0, 2.0, 3.0]:
        if w == 2.0:
            continue
        total += w * x[0]
    return total


def while_continue_python(words):
    out = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word:
            continue
        out.append(word.upper())
    return out


@pytest.mark.parametrize("fn, arg, batch", [
    (while_continue, 10, [0, 4, 10]),
    (traced_range_continue, 7, [0, 3, 8]),
])
def test_int_loops(fn, arg, batch):
    check(fn, arg, vmap=batch)


@pytest.mark.parametrize("fn", [static_range_continue, array_continue, nested_continue,
                                continue_and_break, continue_in_python_list, continue_deep,
                                continue_deep_nested])
def test_array_loops(fn):
    x = np.array(XS, np.float32)
    check(fn, x, vmap=[x, x[::-1], np.abs(x)])


def test_python_values():
    words = ["a", "", "b"]
    assert autograph.convert(while_continue_python)(words) == while_continue_python(words)


def test_a_continue_ending_the_iteration_needs_no_flag():
    code = autograph.to_code(static_range_continue)
    assert "did_continue" not in code
    assert "extra_test" not in code


def test_a_continue_with_statements_after_its_if_keeps_its_flag():
    code = autograph.to_code(continue_deep)
    assert "did_continue = False" in code
    assert "ag__.not_(did_continue)" in code
