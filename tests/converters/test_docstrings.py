"""Each converter's docstring example is its specification: converted alone (with
only the converters it needs), the "Before:" code gives the "After:" code."""

import importlib
import pkgutil

import pytest

from autograph import converters
from autograph.converters import directives
from tests.converters.harness import convert_with, normalized

CONVERTERS = [
    module for module in (importlib.import_module(f"{converters.__name__}.{info.name}")
                          for info in pkgutil.iter_modules(converters.__path__))
    if hasattr(module, "transform")
]
# What a converter's example needs run before it.
NEEDS = {"lists": [directives]}


def examples(doc: str) -> list:
    """The ``(before, after)`` code pairs of a docstring: an indented block after a
    line ending in "Before:", then one after a line "After:"."""
    lines = doc.splitlines()

    def block(start):
        end = start
        while end < len(lines) and (not lines[end].strip() or lines[end].startswith("    ")):
            end += 1
        return "\n".join(lines[start:end]), end

    pairs, i = [], 0
    while i < len(lines):
        if lines[i].rstrip().endswith("Before:"):
            before, i = block(i + 1)
            assert lines[i].strip() == "After:", f"no 'After:' where expected: {lines[i]!r}"
            after, i = block(i + 1)
            pairs.append((before, after))
        else:
            i += 1
    return pairs


def _name(module):
    return module.__name__.rsplit(".", 1)[-1]


def test_every_converter_has_an_example():
    assert len(CONVERTERS) >= 12
    for module in CONVERTERS:
        assert examples(module.__doc__), f"{_name(module)} has no Before:/After: example"


@pytest.mark.parametrize("module", CONVERTERS, ids=_name)
def test_the_docstring_example_is_what_the_converter_does(module):
    for before, after in examples(module.__doc__):
        got = convert_with([*NEEDS.get(_name(module), []), module], before)
        assert normalized(got) == normalized(after), f"converted:\n{got}"


def test_the_harness_runs_only_the_converters_given():
    from autograph.converters import control_flow, lists

    code = "z = []\nfor x in xs:\n    z.append(x)\n"
    assert "ag__.list_append" in convert_with([lists], code)
    assert "for x in xs" in convert_with([lists], code)
    assert "ag__.for_stmt" in convert_with([control_flow], code)
    assert "z.append(x)" in convert_with([control_flow], code)
