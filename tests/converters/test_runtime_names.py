"""Every ``ag__.X`` a converter can emit exists in the namespace generated code gets."""

import ast
import re
from pathlib import Path

import autograph
from autograph import converters, runtime
from autograph.context import ConversionOptions
from autograph.converters import builtin_functions
from autograph.transpiler import Transpiler

_RUNTIME_ATTRIBUTE = re.compile(r"\bag__\.([A-Za-z_]\w*)")


def _emitted_names():
    """``ag__.X`` in the converters' templates (string constants), and the modules
    that build such a name at run time (an f-string ``f"ag__.{...}"``)."""
    names, dynamic = set(), set()
    for path in Path(converters.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(_RUNTIME_ATTRIBUTE.findall(node.value))
            if isinstance(node, ast.JoinedStr) and any(
                    isinstance(part, ast.Constant) and part.value.endswith("ag__.")
                    for part in node.values):
                dynamic.add(path.stem)
    return names, dynamic


def test_every_emitted_runtime_name_is_in_the_namespace():
    names, dynamic = _emitted_names()
    # The one place that builds names: its tables are the names it can build.
    assert dynamic == {"builtin_functions"}
    names |= set(builtin_functions.REPLACED.values())
    names |= set(builtin_functions.REPLACED_AS_ITERABLE.values())
    names.discard("math_")   # (the prefix of f"ag__.math_{name}")
    names |= {f"math_{n}" for n in builtin_functions.MATH if hasattr(__import__("math"), n)}
    assert {"if_stmt", "for_stmt", "converted_call", "ld", "and_", "range_"} <= names
    namespace = Transpiler()._runtime_cell(ConversionOptions()).cell_contents
    missing = {n for n in names if not hasattr(namespace, n)}
    assert not missing, f"emitted but not in autograph.runtime.__all__: {sorted(missing)}"


def test_the_namespace_is_the_runtimes_exports_and_converted_call():
    namespace = Transpiler()._runtime_cell(ConversionOptions()).cell_contents
    public = {k for k in vars(namespace) if not k.startswith("__")}
    assert public == set(runtime.__all__) | {"converted_call"}
    for name in runtime.__all__:
        assert getattr(namespace, name) is getattr(runtime, name)


def test_a_fresh_namespace_sees_a_patched_export_and_its_undoing(monkeypatch):
    # (The exports are read into one dict per process; a patch must still be seen.)
    original = runtime.not_
    Transpiler()._runtime_cell(ConversionOptions())

    def patched(x):
        return not x

    monkeypatch.setattr(runtime, "not_", patched)
    assert Transpiler()._runtime_cell(ConversionOptions()).cell_contents.not_ is patched
    monkeypatch.undo()
    namespace = Transpiler()._runtime_cell(ConversionOptions()).cell_contents
    assert namespace.not_ is original


def uses_many_operators(x, xs):
    total = 0
    for i, v in enumerate(xs):
        if v > 0 and not i == 2:
            total += v
        else:
            total -= abs(v) if v < -1 else 0
    while total > 10:
        total = total // 2
    assert total < 100, "too big"
    print(len(xs), max(total, 0))
    return total


def test_generated_code_runs_in_that_namespace(capsys):
    xs = [1, -3, 5, 20]
    assert autograph.convert(uses_many_operators)(1, xs) == uses_many_operators(1, xs) == 9
    assert capsys.readouterr().out == "4 9\n4 9\n"
