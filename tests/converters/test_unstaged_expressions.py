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


@pytest.mark.parametrize("fn, arg, line, match", [
    (positives, jnp.array([1.0, -1.0]), 1, "`if` of this comprehension"),
    (kept_max, 1.5, 1, "`if` of this comprehension"),
    (labelled, 1.5, 1, "f-string formats a traced value"),
    (unlabelled, 1.5, 1, "f-string formats a traced value"),
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
