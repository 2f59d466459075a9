"""``converters/joined_numbers.py``: arithmetic on a name an ``if`` may leave a Python
number of two types is written ``ag__.number_op``; the rest stays as written."""

from __future__ import annotations

import pytest

import autograph
from autograph.converters import joined_numbers
from autograph.examples import collatz
from tests.converters.harness import convert_with


@pytest.mark.parametrize("code", [
    # one source on every path: its type is the same whichever branch ran
    "def f(n):\n    if n % 2 == 0:\n        n = n // 2\n    else:\n        n = 3 * n + 1\n"
    "    return n % 7",
    "def f(x):\n    k = 0\n    if x > 0:\n        k += 1\n    return k * 2",
    "def f(x):\n    if x > 0:\n        y = x * 2\n    else:\n        y = -x\n    return y + 1",
    # no if at all
    "def f(x):\n    m = 3\n    m = 1.5\n    return m * 2",
    # bound from a joined name through a call, not arithmetic: an int either way
    "def f(x):\n    m = 3\n    if x > 0:\n        m = 1.5\n    z = int(m)\n    return z + 1",
])
def test_names_of_one_type_on_every_path_stay_as_written(code):
    out = convert_with([joined_numbers], code)
    assert "number_op" not in out


def test_arithmetic_on_a_joined_name_and_what_is_computed_from_it():
    code = ("def f(x):\n    if x > 0:\n        m = 3\n    else:\n        m = 1.5\n"
            "    k = m * 2 + 1\n    k += 1\n    t = 4 if x > 1 else 0.5\n"
            "    return -k, abs(m), t / 2, x + 1")
    out = convert_with([joined_numbers], code)
    assert "ag__.number_op(ag__.number_op(m, '*', 2), '+', 1)" in out
    assert "k = ag__.number_op(k, '+=', 1)" in out
    assert "ag__.number_op('-', k)" in out and "ag__.number_op('abs', m)" in out
    assert "ag__.number_op(t, '/', 2)" in out
    assert "x + 1" in out


def test_the_readme_example_reads_as_before():
    assert "number_op" not in autograph.to_code(collatz)


def test_reads_that_would_not_carry_its_type_are_guarded():
    code = ("def f(x, g):\n    if x > 0:\n        m = 3\n    else:\n        m = 1.5\n"
            "    print(m, isinstance(m, int), float(m), '%s' % (m,), m > 1)\n"
            "    y = g(m, k=m)\n    z = [m, 1]\n    if m:\n        y = x\n"
            "    return m, y")
    out = convert_with([joined_numbers], code)
    assert "print(m, isinstance(m, int), float(m), '%s' % (m,), m > 1)" in out
    assert "g(ag__.one_type(m), k=ag__.one_type(m))" in out
    assert "[ag__.one_type(m), 1]" in out and "if m:" in out
    assert "return (ag__.one_type(m, returned=True), " in out


def formats_a_joined_number(x):
    m = 0
    if x > 2:
        m = 4.0
    print('%.2f' % m, '%d|%s' % (m * 2, m))  # noqa: UP031 - what is tested
    return x


def test_percent_formatting_of_a_joined_name_is_text_not_arithmetic(capsys):
    """``'%.2f' % m`` is formatting: it stays for printing.py (it was made
    ``number_op('%.2f', '%', m)``, a TypeError; print fuzz seeds 50037, 50091)."""
    code = autograph.to_code(formats_a_joined_number)
    assert "number_op('%.2f'" not in code
    for x in (1.0, 3.0):
        formats_a_joined_number(x)
        expected = capsys.readouterr().out
        autograph.to_graph(formats_a_joined_number)(x)
        assert capsys.readouterr().out == expected
