"""Reading a live function's source with the user's lines."""

import os
import threading
from pathlib import Path

import gast
import pytest

import autograph
from autograph import ConversionError, parsing
from autograph.transpiler import Transpiler
from tests.autograph.test_cache import load_module


class Holder:
    @staticmethod
    def method(x):
        if x:
            return 1
        return 2


def decorated_twice(x):
    return x


def test_lines_and_columns_are_the_users():
    parsed = parsing.parse_function(Holder.method)
    assert parsed.filename == __file__
    assert parsed.node.lineno == Holder.method.__code__.co_firstlineno + 1
    if_node = parsed.node.body[0]
    assert if_node.lineno == parsed.node.lineno + 1
    assert if_node.col_offset == 8  # indented in the class body, as in the file
    assert parsed.node.decorator_list == []


def test_unreadable_source_is_a_conversion_error():
    namespace = {}
    exec("def made_by_exec(x):\n    return x\n", namespace)
    with pytest.raises(ConversionError, match="cannot read the source.*made_by_exec"):
        parsing.parse_function(namespace["made_by_exec"])


def test_lambda_whose_first_line_parses_alone_is_read_whole():
    from tests.autograph.multiline_strings import CONTINUED

    node = parsing.parse_function(CONTINUED).node
    assert isinstance(node.body[0].value, gast.IfExp)
    for x in (3, -4):
        assert autograph.convert(CONTINUED)(x) == CONTINUED(x)
        assert autograph.to_graph(CONTINUED)(x) == CONTINUED(x)


def _lambda_table_module(tmp_path, name, count, scale=1):
    lines = ["TABLE = {\n"]
    lines += [f"    'k{i}': lambda x: x * {i * scale} + 1 if x > {i} else x - {i},\n"
              for i in range(count)]
    lines.append("}\n")
    module = load_module(tmp_path, "".join(lines), name)
    return module, Path(module.__file__)


def test_lambdas_of_one_file_share_one_parse_of_it(tmp_path):
    """A dict literal with a lambda per line: no line parses alone, so the file is
    parsed whole, once for all of its lambdas (issue 19, item 2)."""
    module, path = _lambda_table_module(tmp_path, "lambda_table", 60)
    transpiler = Transpiler()
    before = parsing.FILE_LAMBDAS.parses
    for i, fn in enumerate(module.TABLE.values()):
        converted = transpiler.convert(fn)
        assert converted(i + 1) == fn(i + 1) and converted(i - 1) == fn(i - 1)
    assert parsing.FILE_LAMBDAS.parses == before + 1

    stamp = os.stat(path).st_mtime_ns           # a new version of the file: parsed again
    module, path = _lambda_table_module(tmp_path, "lambda_table", 60, scale=2)
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
    for i, fn in enumerate(module.TABLE.values()):
        assert Transpiler().convert(fn)(i + 1) == fn(i + 1) == (i + 1) * 2 * i + 1
    assert parsing.FILE_LAMBDAS.parses == before + 2


def test_lambdas_converted_from_many_threads(tmp_path):
    module, _ = _lambda_table_module(tmp_path, "lambda_table_threads", 40)
    functions = list(module.TABLE.values())
    transpiler = Transpiler()
    errors, results = [], {}

    def work(offset):
        try:
            for i in range(len(functions)):
                k = (i + offset) % len(functions)
                results[k] = transpiler.convert(functions[k])(k + 1)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(5 * t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {k: fn(k + 1) for k, fn in enumerate(functions)}


def test_file_parses_kept_are_bounded(tmp_path):
    cache = parsing.FileLambdas(max_files=2, max_lines=1000)
    files = []
    for k in range(3):
        lines = [f"f{k} = lambda x: x + {k}\n"]
        files.append((str(tmp_path / f"file{k}.py"), lines))
        assert cache.lambdas_by_line(*files[-1])[1][0].lineno == 1
    assert cache.parses == 3
    cache.lambdas_by_line(*files[2])
    assert cache.parses == 3                                   # kept: no new parse
    cache.lambdas_by_line(*files[0])
    assert cache.parses == 4                                   # dropped: parsed again
    big = (str(tmp_path / "big.py"), ["x = 1\n"] * 1500)
    cache.lambdas_by_line(*big)
    assert len(cache._entries) == 1                            # over max_lines: alone


def test_private_names_are_mangled_as_in_their_class():
    from tests.autograph.multiline_strings import _Private

    obj = _Private(4)
    for x in (1, 5):
        assert autograph.convert(obj.apply)(x) == obj.apply(x)
        assert autograph.to_graph(obj.apply)(x) == obj.apply(x)
    assert autograph.convert(_Private.double)(7) == 14
    assert "self._Private__scale" in autograph.to_code(_Private.apply)


def test_a_class_nested_in_a_method_mangles_with_its_own_name():
    from tests.autograph.multiline_strings import _Private

    obj = _Private(4)
    assert autograph.convert(obj.nested_class)(3) == obj.nested_class(3) == 8
    assert "self.__factor" in autograph.to_code(_Private.nested_class)


def test_a_class_body_s_implicit_cell_is_not_taken_for_a_changed_source():
    from tests.autograph.multiline_strings import _Private

    obj = _Private(4)
    assert autograph.convert(obj.uses_class_cell)(5) == obj.uses_class_cell(5) == 6
