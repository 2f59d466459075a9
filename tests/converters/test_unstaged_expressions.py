"""Comprehension tests and formatted f-string fields are checked for traced
operands (converters/unstaged_expressions.py)."""

import jax
import jax.numpy as jnp
import pytest

import autograph


def positives(xs):
    return [x + 1 for x in xs if x > 0]


def kept_max(x):
    return max(i for i in range(3) if x > i)


def labelled(x):
    label = f"{x:.3f}"
    return x + len(label)


def static_parts(x, names):
    keys = {n: i for i, n in enumerate(names) if n != "b"}
    assert f"{len(keys):>3}|" == "  2|"
    return x * len(keys), f"{names[0]}" == "a"


def unlabelled(x):
    label = f"{x}"     # the tracer's text (JitTracer(~float32[])), not the value's
    return x + len(label)


def printed(x):
    print(f"x = {x:.2f}")
    return x


def format_method(x):
    return len("{}".format(x))  # noqa: UP032 - the form under test


def percent_formatted(x):
    return len("%s|%s" % (1, x))  # noqa: UP031 - the form under test


def format_keyword(x):
    return len("{v}".format(v=[x]))  # noqa: UP032 - the form under test


def formats_python_values(x):
    n = 3
    return (x + len("v=%d" % n)  # noqa: UP031 - the forms under test
            + len("{k}".format(k=2)) + len("{} {}".format(*[1, 2])))  # noqa: UP032


@pytest.mark.parametrize("fn, arg, line, match", [
    (format_method, 1.5, 1, "formats a traced value"),
    (percent_formatted, 1.5, 1, "formats a traced value"),
    (format_keyword, 1.5, 1, "formats a traced value"),
    (positives, jnp.array([1.0, -1.0]), 1, "`if` of this comprehension"),
    (kept_max, 1.5, 1, "`if` of this comprehension"),
    (labelled, 1.5, 1, "formats a traced value"),
    (unlabelled, 1.5, 1, "formats a traced value"),
])
def test_a_traced_operand_is_refused_at_the_users_line(fn, arg, line, match):
    # Python runs them (jax.jit of the original raises JAX's own errors).
    autograph.convert(fn)(arg)
    with pytest.raises(autograph.ConversionError, match=match) as info:
        autograph.to_graph(fn)(arg)
    assert f"{__file__}:{fn.__code__.co_firstlineno + line}" in str(info.value)


def test_python_operands_run_as_python():
    assert autograph.convert(positives)([1.0, -1.0]) == positives([1.0, -1.0]) == [2.0]
    assert autograph.convert(kept_max)(1.5) == kept_max(1.5) == 1
    assert autograph.convert(labelled)(1.5) == labelled(1.5)
    names = ("a", "b", "c")
    assert autograph.convert(static_parts)(2.0, names) == static_parts(2.0, names)
    assert autograph.convert(unlabelled)(1.5) == unlabelled(1.5)
    out = jax.jit(autograph.convert(static_parts), static_argnums=1)(2.0, names)
    assert float(out[0]) == 4.0 and bool(out[1])


def test_format_and_percent_of_python_values_run_as_python():
    assert autograph.to_graph(formats_python_values)(1.5) == formats_python_values(1.5)
    assert "v=%d' % n)" in autograph.to_code(formats_python_values).replace(
        "ag__.formattable(n)", "n")


def test_printed_fields_are_formatted_at_run_time(capsys):
    autograph.to_graph(printed)(1.5)
    jax.effects_barrier()
    assert capsys.readouterr().out == "x = 1.50\n"


def test_generated_code():
    assert "if ag__.comprehension_test(x > 0)]" in autograph.to_code(positives)
    assert "f'{ag__.formattable(x):.3f}'" in autograph.to_code(labelled)
    code = autograph.to_code(static_parts)
    assert "{ag__.formattable(ag__.len_(keys)):>3}|" in code
    assert "f'{ag__.formattable(names[0])}'" in code
    assert "formattable" not in autograph.to_code(printed)
