"""Runtime calls are recognised by the annotation templates put on them (annos.py)."""

import gast
import pytest

import autograph
from autograph import templates
from autograph.analysis import annos


def test_a_template_marks_the_runtime_operators_it_makes():
    call = templates.replace_expr("ag__.and_(lambda: a, lambda: ag__.not_(b))", ag__="ag___")
    assert call.func.value.id == "ag___"
    assert annos.runtime_operator(call) == "and_"
    assert annos.runtime_operator(call.args[1].body) == "not_"


def test_the_same_text_written_by_the_user_is_not_the_runtime():
    call = gast.parse("ag__.and_(lambda: a, lambda: b)").body[0].value
    assert annos.runtime_operator(call) is None


def test_copies_keep_the_mark():
    call = templates.replace_expr("ag__.range_(n)", ag__="ag__")
    assert annos.runtime_operator(templates.copy_tree(call)) == "range_"


class _Ops:
    """A user's object whose methods are named like runtime operators."""

    @staticmethod
    def not_(value):
        return value

    @staticmethod
    def range_(n):
        return [10 * k for k in range(n)]


ag__ = _Ops()   # the runtime's usual name, taken by the user: the runtime is renamed


def user_operators_named_like_the_runtime(n):
    found = False
    total = 0
    for k in ag__.range_(n):
        if ag__.not_(k > 10):
            found = True
        total += k
    return total, found


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_users_operators_named_like_the_runtimes_stay_the_users(n):
    expected = user_operators_named_like_the_runtime(n)
    assert autograph.convert(user_operators_named_like_the_runtime)(n) == expected
    code = autograph.to_code(user_operators_named_like_the_runtime)
    assert "ag___.converted_call(ag__.range_)(n)" in code   # the user's method, converted
