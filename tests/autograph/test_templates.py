"""Templates: placeholders replaced, user code never rewritten, every placeholder used."""

import ast

import gast
import pytest

from autograph import templates


def _source(nodes):
    module = gast.gast_to_ast(gast.Module(body=nodes, type_ignores=[]))
    return ast.unparse(ast.fix_missing_locations(module))


def test_names_statements_and_state_lists():
    body = gast.parse("state = body + test").body  # user names equal to placeholders
    nodes = templates.replace(
        """
        def fn(state):
            body
            return state
        state = ag__.run(fn, state_in)
        """,
        ag__="rt", fn="loop_body", state=["a", "b"], body=body,
        state_in=gast.parse("(a, b)").body[0].value)
    assert _source(nodes) == (
        "def loop_body(a, b):\n    state = body + test\n    return (a, b)\n"
        "a, b = rt.run(loop_body, (a, b))")


def test_single_and_empty_state():
    one = templates.replace("def f(s):\n    return s\ns = g(f)", s=["x"])
    assert _source(one) == "def f(x):\n    return x\nx = g(f)"
    none = templates.replace("def f(s):\n    return s\ns = g(f)", s=[])
    assert _source(none) == "def f():\n    return\ng(f)"


def test_unused_placeholder_is_an_error():
    with pytest.raises(ValueError, match="typo"):
        templates.replace("x = 1", typo="y")


def test_expression_template_copies_repeated_values():
    value = gast.parse("a + 1").body[0].value
    expr = templates.replace_expr("(v, v)", v=value)
    assert expr.elts[0] is not expr.elts[1]


def test_moved_value_is_inserted_once_as_it_is_and_copied_after():
    value = gast.parse("a + 1").body[0].value
    kept = gast.parse("b * 2").body[0].value
    expr = templates.replace_expr("f(v, v, w)", v=value, w=kept, moved=("v",))
    first, second, third = expr.args
    assert first is value                           # handed over: no copy
    assert second is not value and gast.dump(second) == gast.dump(value)
    assert third is not kept and gast.dump(third) == gast.dump(kept)   # not moved: copied
    assert _source([gast.Expr(value=expr)]) == "f(a + 1, a + 1, b * 2)"


def test_set_location_leaves_user_code_alone():
    user = gast.parse("x = 1").body[0]
    user.lineno, user.col_offset = 42, 4
    nodes = templates.replace("def f():\n    body", body=[user])
    origin = gast.parse("pass").body[0]
    origin.lineno, origin.col_offset, origin.end_lineno, origin.end_col_offset = 7, 0, 9, 1
    templates.set_location(nodes, origin)
    assert nodes[0].lineno == 7 and nodes[0].end_lineno == 7
    assert nodes[0].body[0].lineno == 42


def test_a_template_with_other_placeholders_builds_its_own_copy():
    # (each (template, placeholders) is written out once: a name that is a
    # placeholder in one use is a plain name in another)
    template = "def f(s):\n    body\n    return s\ns = ag__.run(f, args, k)"
    with_k = templates.replace(template, ag__="rt", s=["x", "y"], body=[],
                               args=["a", gast.parse("b + 1").body[0].value], k="key")
    assert _source(with_k) == ("def f(x, y):\n    return (x, y)\n"
                               "x, y = rt.run(f, a, b + 1, key)")
    without_k = templates.replace(template, ag__="rt", s=[], body=gast.parse("z = 1").body,
                                  args=[])
    assert _source(without_k) == "def f():\n    z = 1\n    return\nrt.run(f, k)"
    for nodes in (with_k, without_k):
        helper, call = nodes[0], nodes[-1].value
        assert gast.dump(helper) != gast.dump(templates._parse(template)[0])
        assert templates.annos.get(helper, templates.annos.STAYS_PYTHON) is False
        assert templates.annos.runtime_operator(call) == "run"
    again = templates.replace(template, ag__="rt", s=["x", "y"], body=[],
                              args=["a", gast.parse("b + 1").body[0].value], k="key")
    assert gast.dump(gast.Module(body=again, type_ignores=[])) == gast.dump(
        gast.Module(body=with_k, type_ignores=[]))
    assert again[0] is not with_k[0] and again[0].args is not with_k[0].args
