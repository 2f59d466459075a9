"""Multi-line string literals keep their exact values through conversion, wherever
the definition holding them is indented (issue 21, class 5)."""

from __future__ import annotations

import ast

import gast
import pytest

import autograph
from autograph import parsing
from tests.autograph import multiline_strings as m
from tests.autograph.test_cache import load_module
from tests.differential import assert_same_python, check

S = m.Strings()

PYTHON_CASES = [
    ("indented lines", S.indented_lines, ()),
    ("lines at column zero", S.lines_at_column_zero, ()),
    ("docstring and string", S.docstring_and_string, ()),
    ("f-string", S.fstring, (3,)),
    ("bytes and raw", S.bytes_and_raw, ()),
    ("continuation at column zero", S.continuation_at_column_zero, (4,)),
    ("implicit concatenation", S.implicit_concatenation, ()),
    ("string inside a branch", S.string_inside_branch, (2,)),
    ("string inside a branch, else", S.string_inside_branch, (-2,)),
]


@pytest.mark.parametrize(("label", "fn", "args"), PYTHON_CASES,
                         ids=[c[0] for c in PYTHON_CASES])
def test_strings_keep_their_value(label, fn, args):
    assert_same_python(fn(*args), autograph.convert(fn)(*args))


@pytest.mark.parametrize(("label", "fn"), [
    ("static method", m.Strings.static),
    ("nested function", m.make_nested()),
    ("function with an inner one", m.outer_with_inner),
    ("method of a nested class", m.Outer.Inner().deep),
    ("lambda returned by a method", S.returns_a_lambda()),
    ("lambda in a dict literal", m.TABLE["first"]),
    ("lambda in a dict literal, column zero", m.TABLE["second"]),
])
def test_strings_keep_their_value_compiled(label, fn):
    check(fn, 3)
    check(fn, -1)


def test_docstring_is_kept():
    converted = autograph.convert(m.Strings.docstring_and_string)
    assert converted.__doc__ == m.Strings.docstring_and_string.__doc__


def test_generated_code_shows_the_string_unchanged():
    code = autograph.to_code(S.lines_at_column_zero)
    assert "'first\\nsecond\\n  third'" in code


def _nodes_by_position(tree):
    return {(type(n).__name__, n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
            for n in ast.walk(tree) if hasattr(n, "end_col_offset")}


@pytest.mark.parametrize("fn", [m.Strings.fstring, m.Strings.continuation_at_column_zero,
                                m.Outer.Inner.deep, m.make_nested()])
def test_lines_and_columns_are_exactly_the_files(fn):
    """Every node of the parsed definition has the position the same node has in a
    parse of the whole file."""
    with open(m.__file__) as f:
        whole = ast.parse(f.read())
    definition = next(n for n in ast.walk(whole) if isinstance(n, ast.FunctionDef)
                      and n.name == fn.__name__ and n.lineno == fn.__code__.co_firstlineno)
    definition.decorator_list = []
    parsed = parsing.parse_function(fn).node
    ours = _nodes_by_position(gast.gast_to_ast(parsed))
    assert ours == _nodes_by_position(definition)


TAB_SOURCE = (
    "class Tabbed:\n"
    "\tdef method(self, x):\n"
    "\t\ts = '''tab\n"
    "\t\tindented\n"
    "at zero'''\n"
    "\t\tif x > 0:\n"
    "\t\t\tx = x + len(s)\n"
    "\t\treturn x, s\n"
    "\n"
    "def factory():\n"
    "\tdef nested(x):\n"
    "\t\treturn x + len('''a\n"
    "\tb''')\n"
    "\treturn nested\n"
)


def test_tab_indented_definitions(tmp_path):
    module = load_module(tmp_path, TAB_SOURCE)
    method = module.Tabbed().method
    assert_same_python(method(2), autograph.convert(method)(2))
    assert autograph.to_graph(lambda x: method(x)[0])(2) == method(2)[0]
    check(module.factory(), 5)
    node = parsing.parse_function(module.Tabbed.method).node
    assert (node.lineno, node.col_offset) == (2, 1)
    assert node.body[1].col_offset == 2          # the `if`, after two tabs
