"""assert: Python's assert for Python values; a run-time check naming the line when traced."""

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import autograph
from autograph.errors import ConversionError
from autograph.runtime import StagedAssertionError
from tests.differential import check

MESSAGES = []


def inverse(x):
    assert x != 0, 'Do not pass zero!'
    return 1 / x


def bare_assert(x):
    assert x > 0
    return x


def lazy_message(x):
    assert x > 0, MESSAGES.append(x) or "not positive"
    return x


def traced_message(x):
    assert x < 10, x
    return x


def all_non_negative(xs, n):
    total = 0.0
    for i in range(n):
        assert xs[i] >= 0, "negative entry"
        total += xs[i]
    return total


def vector_condition(x):
    assert x > 0
    return x


def batched_inverse(xs):
    return jax.vmap(autograph.convert(inverse))(xs)


def line_of(fn, k):
    return f"{__file__}:{fn.__code__.co_firstlineno + k}"


def test_python_values_plain_assert():
    check(inverse, 2.0, vmap=[1.0, 2.0, 4.0])
    # (pytest rewrites the asserts of test modules, so compare with Python's own text)
    with pytest.raises(AssertionError) as converted:
        autograph.convert(inverse)(0)
    assert converted.value.args == ("Do not pass zero!",)
    assert type(converted.value) is AssertionError
    with pytest.raises(AssertionError) as bare:
        autograph.convert(bare_assert)(-1)
    assert bare.value.args == ()


def test_message_evaluated_only_on_failure():
    MESSAGES.clear()
    assert autograph.convert(lazy_message)(1) == 1
    assert MESSAGES == []
    with pytest.raises(AssertionError, match="not positive"):
        autograph.convert(lazy_message)(-1)
    assert MESSAGES == [-1]


def test_to_graph_raises_with_message_and_line():
    f = autograph.to_graph(inverse)
    assert float(f(jnp.float32(4.0))) == 0.25
    with pytest.raises(AssertionError) as info:
        f(jnp.float32(0.0))
    assert isinstance(info.value, StagedAssertionError)
    text = str(info.value)
    assert "Do not pass zero!" in text
    assert line_of(inverse, 1) in text
    with pytest.raises(AssertionError) as info:
        autograph.to_graph(bare_assert)(jnp.int32(-3))
    assert line_of(bare_assert, 1) in str(info.value)


def test_traced_message_shows_its_value():
    with pytest.raises(AssertionError, match=r"^12 \["):
        autograph.to_graph(traced_message)(jnp.int32(12))


def test_check_inside_a_staged_loop():
    xs = jnp.array([1.0, 2.0, 3.0])
    check(all_non_negative, xs, 3)
    with pytest.raises(AssertionError, match="negative entry") as info:
        autograph.to_graph(all_non_negative)(jnp.array([1.0, -2.0, 3.0]), 3)
    assert line_of(all_non_negative, 3) in str(info.value)


def test_vmap_checks_each_example():
    out = autograph.to_graph(batched_inverse)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(out, [1.0, 0.5])
    with pytest.raises(AssertionError, match="Do not pass zero!"):
        autograph.to_graph(batched_inverse)(jnp.array([1.0, 0.0, 2.0]))


def test_inside_users_own_jit_and_vmap():
    f = jax.jit(autograph.convert(inverse))
    assert float(f(jnp.float32(2.0))) == 0.5
    with pytest.raises(Exception) as info:   # JAX's JaxRuntimeError from the callback
        jax.block_until_ready(f(jnp.float32(0.0)))
    text = str(info.value)
    assert "AssertionError" in text and "Do not pass zero!" in text
    assert line_of(inverse, 1) in text
    with pytest.raises(Exception, match="Do not pass zero!"):
        jax.block_until_ready(jax.vmap(autograph.convert(inverse))(jnp.array([1.0, 0.0])))
    ok = jax.vmap(autograph.convert(inverse))(jnp.array([1.0, 4.0]))
    np.testing.assert_allclose(ok, [1.0, 0.25])


def test_under_users_checkify():
    err, out = jax.jit(checkify.checkify(autograph.convert(inverse)))(jnp.float32(2.0))
    assert err.get() is None and float(out) == 0.5


def test_ambiguous_condition_names_the_line():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(vector_condition)(jnp.ones(3))
    assert line_of(vector_condition, 1) in str(info.value)
    assert "jnp.all" in str(info.value)


def test_python_dash_o_removes_asserts(tmp_path):
    module = tmp_path / "optimized_module.py"
    module.write_text(textwrap.dedent("""
        def inverse(x):
            assert x != 0, 'Do not pass zero!'
            return 1 / x
    """))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import autograph, optimized_module
        print(autograph.convert(optimized_module.inverse)(0.0) if False else 'skip')
        print('assert_stmt' in autograph.to_code(optimized_module.inverse))
        try:
            autograph.convert(optimized_module.inverse)(0)
        except ZeroDivisionError:
            print('no assert')
    """)
    run = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True,
                         text=True, timeout=120, env={"JAX_PLATFORMS": "cpu",
                                                     "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["skip", "False", "no", "assert"]


def test_generated_code():
    assert autograph.to_code(inverse) == (
        "def inverse(x):\n"
        "    ag__.assert_stmt(x != 0, lambda: 'Do not pass zero!')\n"
        "    return 1 / x\n")
    assert "ag__.assert_stmt(x > 0)\n" in autograph.to_code(bare_assert)


def checked_collatz(n):
    steps = 0
    while n != 1:
        assert n > 0, "collatz needs a positive start"
        if n % 2 == 0:
            n = n // 2
        else:
            assert n < 10**6, "overflow risk"
            n = 3 * n + 1
        steps += 1
    return steps


def report_and_check(x):
    print("x:", x)
    assert x > 0, "x must be positive"
    return x * x


def batched_report(xs):
    return jax.vmap(autograph.convert(report_and_check))(xs)


def test_checks_inside_staged_while_and_if():
    check(checked_collatz, 27)
    assert int(autograph.to_graph(checked_collatz)(jnp.int32(27))) == 111
    with pytest.raises(AssertionError, match="collatz needs a positive start") as info:
        autograph.to_graph(checked_collatz)(jnp.int32(-4))
    assert line_of(checked_collatz, 3) in str(info.value)


def test_vmap_with_assert_and_print(capfd):
    out = jax.vmap(autograph.convert(report_and_check))(jnp.array([1.0, 2.0]))
    jax.effects_barrier()
    np.testing.assert_allclose(out, [1.0, 4.0])
    assert sorted(capfd.readouterr().out.splitlines()) == ["x: 1.0", "x: 2.0"]
    out = autograph.to_graph(batched_report)(jnp.array([3.0, 4.0]))
    jax.effects_barrier()
    np.testing.assert_allclose(out, [9.0, 16.0])
    assert sorted(capfd.readouterr().out.splitlines()) == ["x: 3.0", "x: 4.0"]
    with pytest.raises(AssertionError, match="x must be positive"):
        autograph.to_graph(batched_report)(jnp.array([3.0, -4.0]))
    jax.effects_barrier()
    capfd.readouterr()


def test_grad_through_assert_and_print(capfd):
    g = jax.grad(autograph.convert(report_and_check))(jnp.float32(3.0))
    jax.effects_barrier()
    assert float(g) == 6.0
    assert capfd.readouterr().out == "x: 3.0\n"
    g = jax.jit(jax.grad(autograph.convert(report_and_check)))(jnp.float32(2.0))
    jax.effects_barrier()
    assert float(g) == 4.0


def raise_then_assert(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    if s > 1:
        raise ValueError(f"bad s={s}")
    assert s < 1.2, f"s={s:.2f}"
    return s


def test_a_traced_raise_before_a_failing_assert_is_the_error_raised():
    # Both checks fail for x > 0: Python raises the first, so must the compiled call.
    with pytest.raises(ValueError, match="bad s=1.5"):
        raise_then_assert(2.0)
    with pytest.raises(ValueError, match="bad s=1.5"):
        jax.block_until_ready(autograph.to_graph(raise_then_assert)(2.0))
    # (under the user's own jit, JAX's error shows the one raised)
    with pytest.raises(Exception, match="ValueError: bad s=1.5"):
        jax.block_until_ready(jax.jit(autograph.convert(raise_then_assert))(2.0))
    assert float(autograph.to_graph(raise_then_assert)(-1.0)) == 0.5
