"""Reading a live function's source with the user's lines."""

import pytest

from autograph import ConversionError, parsing


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
