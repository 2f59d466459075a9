"""A source file edited since its module was imported is noticed, never converted
(issue 19, item 3); functions whose source still matches convert as before."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import linecache
import os
import sys
import textwrap
import types

import pytest

import autograph
from autograph import ConversionError, parsing
from autograph.transpiler import Transpiler

MODULE = '''\
import functools


def f(x):
    return x + 1


def g(x):
    y = x * 100
    if y > 0:
        y = y - 1
    return y


def decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@decorate
def h(x):
    return x - 7


TABLE = {
    "double": lambda x: x * 2,
    "square": lambda x: x * x,
}
'''


@pytest.fixture
def module_file(tmp_path, monkeypatch):
    """Write ``source`` as a fresh module, import it; returns ``(module, path)``."""
    made = []
    monkeypatch.syspath_prepend(str(tmp_path))     # importlib.reload finds it

    def load(source=MODULE, name="stale_source_module"):
        name = f"{name}_{len(made)}_{abs(hash(str(tmp_path)))}"
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        made.append(name)
        return module, path

    yield load
    for name in made:
        sys.modules.pop(name, None)


def _edit(path, text):
    """Rewrite ``path``, making sure its modification stamp changes too."""
    stamp = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))


def _convert(fn):
    return Transpiler().convert(fn)     # a fresh transpiler: nothing cached


def _assert_changed(fn, path):
    with pytest.raises(ConversionError) as info:
        _convert(fn)
    message = str(info.value)
    assert f"{path}:" in message
    assert "changed since its module was imported" in message
    assert "Reload the module" in message
    return message


def test_comment_lines_added_at_the_top(module_file):
    """The issue's case: converting g converted f's lines and returned f's result."""
    module, path = module_file()
    _edit(path, "# a\n# b\n# c\n# d\n# e\n" + MODULE)
    _assert_changed(module.g, path)
    _assert_changed(module.TABLE["square"], path)
    _assert_changed(module.h, path)


def test_reloading_the_module_converts_the_new_source(module_file):
    module, path = module_file()
    _edit(path, "# a\n# b\n# c\n# d\n# e\n" + MODULE.replace("x * 100", "x * 200"))
    _assert_changed(module.g, path)
    module = importlib.reload(module)
    assert _convert(module.g)(3) == module.g(3) == 599


@pytest.mark.parametrize(("old", "new", "why"), [
    ("x * 100", "x * 300", "constant 100"),                        # a constant, same width
    ("    y = x * 100\n", "    y = x * 100\n    y = y + 1\n", "expression at line"),
    ("y = y - 1", "y = x - 1", "uses 'y'"),                        # same names, moved
    ("y = x * 100", "z = x * 100", "uses 'y'"),                    # a name, same width
    ("y = y - 1", "y = y - 1 * 2", "expression at line"),          # an operand grown
    ("def g(x):", "def g(w):", "parameters"),
    ("def g(x):", "def k(x):", "'k'"),
])
def test_edits_inside_the_function(module_file, old, new, why):
    module, path = module_file()
    _edit(path, MODULE.replace(old, new))
    assert why in _assert_changed(module.g, path)


def test_lambda_edited_in_place(module_file):
    module, path = module_file()
    _edit(path, MODULE.replace("lambda x: x * 2", "lambda x: x * 3"))
    _assert_changed(module.TABLE["double"], path)
    assert _convert(module.TABLE["square"])(5) == 25       # its neighbour is unchanged


def test_file_now_shorter_than_the_function(module_file):
    module, path = module_file()
    _edit(path, "x = 1\n")
    _assert_changed(module.h, path)


@pytest.mark.parametrize("edit", [
    lambda src: src + "\n\ndef added_below(x):\n    return x\n",
    lambda src: src.replace("return x + 1", "return x + 2"),      # another function
    lambda src: src.replace("    if y > 0:\n", "    if y > 0:  # a comment\n"),
    lambda src: src.replace("lambda x: x * 2", "lambda x: x * 4"),  # another line
])
def test_edits_that_leave_the_function_as_it_was_still_convert(module_file, edit):
    module, path = module_file()
    _edit(path, edit(MODULE))
    assert _convert(module.g)(3) == module.g(3)
    assert _convert(module.h)(3) == module.h(3)
    assert _convert(module.TABLE["square"])(4) == 16


NO_FALSE_POSITIVES = '''\
from __future__ import annotations

import functools


def deco(arg):
    def wrap(fn):
        return fn
    return wrap


@deco(
    "multi-line decorator call"
)
@functools.lru_cache(maxsize=None)
def decorated(x):
    return x * 3


class Base:
    def value(self, x):
        return x


class Child(Base):
    __slots__ = ("__secret",)

    def __init__(self):
        self.__secret = 5

    def value(self, x):
        __local = x + self.__secret
        return super().value(__local) + 1


def outer():
    scale = 4

    def nested(x: int, *rest: float, key: str = "k", **extra) -> int:
        def deeper(y: list[int]) -> dict[str, int]:
            return {"y": y}

        total = [i * scale for i in range(x)]
        return sum(total) + len(deeper([x]))

    return nested


def folding(x):
    a = 2 ** -15 + 2 ** 10 - (-1) + ~3 + 1e3
    b = "ab" * 3 + "%s-%5s|%-3r|%.2s %%" % (x, x, x, x)
    c = ("t", 1, 2.5)[0] + b"by"[0:1].decode()
    d = x in {1, 2, 3} or x in [4, 5]
    return a, b, c, d


def fstrings(x):
    return (f"{x!r:>10} {x=}" f"{x:{x}}" + f"{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}"
            f"{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}{x}")


def matching(x):
    match x:
        case [a, *_, b]:
            return a + b
        case {"k": v, **rest}:
            return v
        case complex(real=r, imag=0.0):
            return r
        case -1 | 1 + 2j:
            return 0
        case _:
            return None


def imports_and_scopes(x):
    import os.path
    from collections import OrderedDict as OD
    from . import sibling  # noqa: F401  (parsed only, never run)
    global GLOBAL_NAME
    GLOBAL_NAME = os.path.join("a", "b")
    counter = 0

    def bump():
        nonlocal counter
        counter += 1

    class Local:
        attr: int = 3

        def method(self):
            return self.attr

    bump()
    return OD(a=x), counter, Local().method()


def everything_else(x, /, y=2, *, z=3):
    with open(__file__) as handle:
        handle.read(0)
    try:
        raise ValueError("boom")
    except ValueError as error:
        message = str(error)
    finally:
        pass
    del message
    values = {k: v for k, v in zip("ab", (x, y))}
    total = sum(v for v in values.values())
    while total > 100:
        total //= 2
    else:
        total += 0
    assert total >= 0, "negative"
    return (lambda q: q + z)(total), [*values], {**values}


class Box:
    def __init__(self, v):
        self.v = v

    def start(self):
        self.v += 1
        return self.v


def method_calls_on_multi_line_receivers(x):
    Box(
        x,
    ).start()
    y = Box(
        x,
    ).start()
    Box(
        y,
    ).start()


LAMBDAS = [lambda x: x + 1, lambda x, y=(1, -2): x * y[1],
           lambda *a, **k: (a, k)]
MULTI_LINE_LAMBDA = (lambda x:
                     x + 1
                     if x > 0
                     else x - 1)
'''


def test_no_false_positives(module_file):
    module, _ = module_file(NO_FALSE_POSITIVES, "no_false_positives")
    functions = [module.decorated.__wrapped__, module.Child.__init__, module.Child.value,
                 module.Base.value, module.outer(), module.outer, module.folding,
                 module.fstrings, module.matching, module.imports_and_scopes,
                 module.everything_else, module.MULTI_LINE_LAMBDA, *module.LAMBDAS,
                 module.method_calls_on_multi_line_receivers]
    for fn in functions:
        parsing.parse_function(fn)           # no "changed since it was imported"
    assert _convert(module.MULTI_LINE_LAMBDA)(-3) == -4
    assert _convert(module.Child.value)(module.Child(), 1) == 7
    assert _convert(module.outer())(3) == module.outer()(3)
    assert _convert(module.method_calls_on_multi_line_receivers)(2) is None


def test_functions_defined_in_a_test_module_rewritten_by_pytest():
    """pytest compiles this module from a rewritten tree (assert introspection): its
    code objects hold names like ``@py_assert1`` that no source has."""
    def with_assert(x):
        assert x > 0, "positive"
        return x + 1

    assert any(name.startswith("@py") for name in with_assert.__code__.co_varnames)
    assert _convert(with_assert)(2) == 3


def test_exec_with_a_linecache_entry_and_a_notebook_cell():
    source = textwrap.dedent('''\
        def cell_function(x):
            if x > 1:
                x = x - 1
            return x

        cell_lambda = lambda x: x * 2
    ''')
    for filename in ("<ipython-input-7-0123456789ab>", "/tmp/ipykernel_1234/987654321.py"):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            namespace = {}
            exec(compile(source, filename, "exec"), namespace)
            assert _convert(namespace["cell_function"])(5) == 4
            assert _convert(namespace["cell_lambda"])(5) == 10
            edited = "# a new first line\n" + source      # the cell run again, edited
            linecache.cache[filename] = (len(edited), None, edited.splitlines(True),
                                         filename)
            with pytest.raises(ConversionError, match="changed since"):
                _convert(namespace["cell_function"])
        finally:
            linecache.cache.pop(filename, None)


def test_function_copied_with_types_functiontype_converts(module_file):
    module, _ = module_file()
    g = module.g
    copy = types.FunctionType(g.__code__, g.__globals__, "copy", g.__defaults__, g.__closure__)
    assert _convert(copy)(2) == g(2)
    assert autograph.to_graph(copy)(2) == g(2)


def _all_functions(modules):
    seen, found = set(), []
    for module in modules:
        stack = list(vars(module).values())
        while stack:
            value = stack.pop()
            if isinstance(value, functools.partial):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                stack.extend(f for f in (value.fget, value.fset, value.fdel) if f)
            elif isinstance(value, type) and value.__module__ == module.__name__:
                if id(value) not in seen:
                    seen.add(id(value))
                    stack.extend(vars(value).values())
            elif (isinstance(value, types.FunctionType)
                  and value.__module__ == module.__name__ and id(value) not in seen):
                seen.add(id(value))
                found.append(value)
    return found


@pytest.mark.parametrize("names", [
    ("argparse", "json.decoder", "json.encoder", "textwrap", "dataclasses", "enum"),
    ("test.test_grammar", "test.test_patma", "test.test_fstring", "test.test_scope"),
])
def test_no_false_positives_over_library_code(names):
    """Every function of these modules (decorated, nested, methods, lambdas, every
    piece of syntax in CPython's grammar tests) matches its source."""
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            pytest.skip(f"{name} is not installed with this Python")
    functions = _all_functions(modules)
    assert len(functions) > 200
    changed = []
    for fn in functions:
        try:
            parsing.parse_function(fn)
        except ConversionError as error:
            if "changed since" in str(error):
                changed.append(str(error))
    assert not changed, "\n".join(changed[:5])


@pytest.mark.slow
def test_no_false_positives_over_the_standard_library_jax_and_numpy():
    """The whole sweep (``python -m tests.autograph.fingerprint_sweep``): every function
    of the standard library modules it lists, jax and numpy matches its source."""
    from tests.autograph import fingerprint_sweep

    assert fingerprint_sweep.main() == 0
