"""``fingerprint.compiles_to``: the stale-source check's first, cheaper test
(compiling the parsed definition and comparing code objects)."""

from __future__ import annotations

import ast
import importlib
import math
import sys
import textwrap
import warnings

import pytest

from autograph import fingerprint, parsing
from autograph.transpiler import Transpiler

MODULE = '''\
import math


def top(x):
    return math.sqrt(x) + len([x])


def outer(k):
    def inner(x):
        return x * k + math.floor(x)
    return inner


class C:
    def method(self, x):
        return [x for _ in range(2)]

    def private(self):
        return self.__secret


def warns(x):
    y = 0
    if x is 1:
        y = 2
    return y
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    path = tmp_path / "compiles_to_sample.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("compiles_to_sample", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = importlib.import_module("compiles_to_sample")
    yield mod
    sys.modules.pop("compiles_to_sample", None)


def _definition(fn):
    code = fn.__code__
    lines = parsing.file_lines(fn)
    block = parsing._definition_lines(lines, code) or parsing._block(lines, code.co_firstlineno)
    return parsing._parse_lines(block, code.co_firstlineno, code.co_filename)[0]


@pytest.mark.parametrize("name", ["top", "nested", "method"])
def test_an_unchanged_definition_compiles_to_its_code(module, name):
    fn = {"top": module.top, "nested": module.outer(2),
          "method": module.C.method}[name]
    assert fingerprint.compiles_to(fn.__code__, _definition(fn), parsing._module_names(fn))


def test_an_edited_definition_does_not(module):
    definition = _definition(module.top)
    definition.body[0].value.op = ast.Sub()     # `+` made `-` in place
    assert not fingerprint.compiles_to(module.top.__code__, definition, ["math"])


def test_what_it_cannot_rebuild_goes_to_the_fingerprint(module):
    # (private names are mangled in the class the compile does not rebuild)
    fn = module.C.private
    assert not fingerprint.compiles_to(fn.__code__, _definition(fn))
    assert parsing.parse_function(fn).node.name == "private"


def test_without_the_module_imports_the_code_differs(module):
    # `math.sqrt(x)` on an imported module is an attribute load, not a method load
    assert not fingerprint.compiles_to(module.top.__code__, _definition(module.top), [])
    assert parsing._module_names(module.top) == ["math"]
    assert math  # (the sample imports it too)


def test_a_definition_whose_compile_warns_is_not_compiled_again(module):
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        Transpiler().convert(module.warns)
    # the converted code's own compile warns once, as before; the check adds none
    assert [str(w.message) for w in shown if w.category is SyntaxWarning] == [
        '"is" with a literal. Did you mean "=="?']


def test_compile_warns_finds_the_warning_constructs():
    def warns(source):
        tree = parsing.ast_bridge.to_gast(ast.parse(textwrap.dedent(source)))
        return parsing._compile_warns(parsing.walk_list(tree))

    assert warns("x is 1")
    assert warns("x is not (1, 2)")
    assert warns("(a, b)(c)")
    assert warns("'abc'[x]")
    assert warns("assert (x, 'message')")
    assert not warns("x is None or x is True or y is not ...")
    assert not warns("f(x)[0].g(y)")
    assert not warns("assert x, 'message'")
