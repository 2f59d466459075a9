"""print: Python's print for Python values; the same text at run time for traced ones."""

import builtins
import io
import sys

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError
from tests.differential import check


def show(x, y):
    print("x =", x, "y =", y)
    return x + y


def show_layout(x):
    print(x, "a", 2, sep=", ", end=" |\n")
    print()
    print(x, end="")
    print("!")
    return x


def show_in_loop(n):
    total = 0
    for i in range(n):
        total += i
        print("step", i, "total", total)
    return total


def nested_print(n):
    if n >= 0:
        while n < 5:
            n += 1
            print(n)
    return n


def show_to_stderr(x):
    print("err", x, file=sys.stderr)
    return x


def show_pytree(x):
    print("pair", (x, 1))
    return x


def shadowed_print(x):
    print = list           # noqa: A001  a local named print is not the builtin
    return print((x,))


def flushed(x):
    print(x, flush=True)
    return x


def run_compiled(fn, *args):
    out = autograph.to_graph(fn)(*args)
    jax.effects_barrier()
    return out


def test_python_values_use_python_print(capsys):
    check(show, 1, 2, compiled=False)
    assert capsys.readouterr().out == "x = 1 y = 2\n" * 2
    autograph.convert(show_layout)("p")
    assert capsys.readouterr().out == "p, a, 2 |\n\np!\n"


def test_traced_values_same_layout(capfd):
    show_layout("p")
    expected = capfd.readouterr().out
    assert expected == "p, a, 2 |\n\np!\n"
    run_compiled(show, jnp.int32(1), jnp.int32(2))
    assert capfd.readouterr().out == "x = 1 y = 2\n"
    run_compiled(show_layout, jnp.float32(1.5))
    assert capfd.readouterr().out == "1.5, a, 2 |\n\n1.5!\n"
    show_layout(jnp.float32(1.5))
    assert capfd.readouterr().out == "1.5, a, 2 |\n\n1.5!\n"


def test_order_follows_the_program_in_a_staged_loop(capfd):
    show_in_loop(3)
    expected = capfd.readouterr().out
    assert expected.splitlines() == ["step 0 total 0", "step 1 total 1", "step 2 total 3"]
    assert int(run_compiled(show_in_loop, jnp.int32(3))) == 3
    assert capfd.readouterr().out == expected
    jax.jit(autograph.convert(show_in_loop))(jnp.int32(3))
    jax.effects_barrier()
    assert capfd.readouterr().out == expected


def test_nested_while_example(capfd):
    nested_print(2)
    expected = capfd.readouterr().out
    assert expected == "3\n4\n5\n"
    assert int(run_compiled(nested_print, jnp.int32(2))) == 5
    assert capfd.readouterr().out == expected
    assert int(run_compiled(nested_print, jnp.int32(-1))) == -1
    assert capfd.readouterr().out == ""


def test_file_argument(capfd):
    run_compiled(show_to_stderr, jnp.int32(7))
    captured = capfd.readouterr()
    assert captured.err == "err 7\n" and captured.out == ""
    buffer = io.StringIO()
    autograph.convert(show)(1, 2)     # Python print with default file
    assert capfd.readouterr().out == "x = 1 y = 2\n"
    del buffer


def test_pytree_argument(capfd):
    show_pytree(jnp.int32(3))          # the original, on the concrete value
    expected = capfd.readouterr().out
    assert expected == "pair (Array(3, dtype=int32), 1)\n"
    run_compiled(show_pytree, jnp.int32(3))
    assert capfd.readouterr().out == expected


def test_flush_and_shadowed_print(capfd):
    run_compiled(flushed, jnp.int32(4))
    assert capfd.readouterr().out == "4\n"
    assert autograph.convert(shadowed_print)(3) == [3]
    assert "ag__.print_" not in autograph.to_code(shadowed_print)


def test_vmap_prints_each_example(capfd):
    out = jax.vmap(autograph.convert(show))(jnp.arange(3), jnp.arange(3))
    jax.effects_barrier()
    assert out.tolist() == [0, 2, 4]
    assert sorted(capfd.readouterr().out.splitlines()) == [
        "x = 0 y = 0", "x = 1 y = 1", "x = 2 y = 2"]


def test_generated_code():
    assert autograph.to_code(show) == (
        "def show(x, y):\n"
        "    ag__.print_('x =', x, 'y =', y)\n"
        "    return x + y\n")


def show_through_builtins(x):
    if x > 0:
        x = x * 2
    builtins.print(f"x = {x:.2f}")
    return x


def test_builtins_print_is_converted_as_print_is():
    assert "ag__.print_(ag__.format_(" in autograph.to_code(show_through_builtins)
    check(show_through_builtins, 1.5)


def show_signs(xs):
    for i, x in enumerate(xs):
        print(f"{i:>2d} | {x:6.2f} | {'+' if x > 0 else '-':>3}")
        print("above" if x > 1 else "below", "{}".format("big" if x > 2 else "small"))
    assert xs[0] < 10, f"{'positive' if xs[0] > 0 else 'negative'} and too large"
    return xs.sum()


def test_text_a_traced_condition_chooses_is_printed_when_the_program_runs(capfd):
    xs = [1.5, -2.25, 3.0]
    show_signs(jnp.asarray(xs))
    expected = capfd.readouterr().out
    assert expected.splitlines()[:2] == [" 0 |   1.50 |   +", "above small"]
    autograph.convert(show_signs)(jnp.asarray(xs))     # Python values (concrete arrays)
    assert capfd.readouterr().out == expected
    run_compiled(show_signs, jnp.asarray(xs))
    assert capfd.readouterr().out == expected
    jax.jit(autograph.convert(show_signs))(jnp.asarray(xs))
    jax.effects_barrier()
    assert capfd.readouterr().out == expected
    assert "ag__.chosen_text(x > 0, '+', '-')" in autograph.to_code(show_signs)
    with pytest.raises(AssertionError, match="^positive and too large"):
        run_compiled(show_signs, jnp.asarray([11.0, 0.0]))


def chosen_outside_print(x):
    label = "+" if x > 0 else "-"
    return label


def test_text_a_traced_condition_chooses_outside_print_is_refused():
    assert autograph.convert(chosen_outside_print)(1.0) == "+"
    with pytest.raises(ConversionError, match="holds a str") as info:
        autograph.to_graph(chosen_outside_print)(jnp.float32(1.0))
    assert f"{__file__}:{chosen_outside_print.__code__.co_firstlineno + 1}" in str(info.value)
