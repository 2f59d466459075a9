"""analysis/compared_test.py: a ``while`` test that is one comparison of names and
number literals."""

from __future__ import annotations

import gast
import pytest

from autograph.analysis.compared_test import compared_operands


def while_test(source):
    """The test of ``while <source>: pass``."""
    return gast.parse(f"while {source}:\n    pass\n").body[0].test


@pytest.mark.parametrize("source, operands", [
    ("n != 1", ("n", 1)),
    ("i < n", ("i", "n")),
    ("0.5 >= x", (0.5, "x")),
    ("done == True", ("done", True)),
])
def test_one_comparison_of_names_and_numbers(source, operands):
    assert compared_operands(while_test(source)) == operands


@pytest.mark.parametrize("source", [
    "0 < i < n",          # chained
    "i < n and i < 3",    # a BoolOp
    "x is None",          # identity
    "i in xs",            # membership
    "len(xs) < n",        # a call
    "self.i < n",         # an attribute
    "i < -1",             # a unary minus
    "s != 'a'",           # a string literal
    "1 < 2",              # no name
    "n",                  # no comparison
])
def test_anything_else_has_no_operands(source):
    assert compared_operands(while_test(source)) is None
