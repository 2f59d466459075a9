"""runtime/printing.py: Python's print for Python values, a staged print for traced ones."""

import contextlib
import io
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.runtime import print_


def test_python_values_are_printed_by_print():
    out = io.StringIO()
    print_(1, "a", [2], sep="-", end="$", file=out)
    assert out.getvalue() == "1-a-[2]$"
    with pytest.raises(TypeError) as original:
        print(1, sep=3)
    with pytest.raises(TypeError) as ours:
        print_(1, sep=3)
    assert str(ours.value) == str(original.value)


def test_traced_values_printed_at_run_time():
    out = io.StringIO()

    @jax.jit
    def f(x):
        print_("before", file=out)
        print_(x, x + 1, sep="/", end=";", file=out)
        print_("after", file=out)
        return x

    assert out.getvalue() == ""     # nothing printed while tracing
    f(jnp.int32(1))
    jax.effects_barrier()
    assert out.getvalue() == "before\n1/2;after\n"
    f(jnp.int32(5))
    jax.effects_barrier()
    assert out.getvalue() == "before\n1/2;after\nbefore\n5/6;after\n"


def listed(x):
    vals = [0.5, 1.5]
    n = 0
    if x > 0:
        vals = [x, x + 1]
        n = 2
    print(vals, (n, "s"), {"k": x})
    print(f"{[x, n]}", "%s" % ([n],), "{v}".format(v=(x,)))  # noqa: UP031, UP032 - each form
    return x


def test_python_numbers_in_a_printed_list_show_as_numbers(capsys):
    """A list, tuple or dict of values that are Python numbers in the original shows
    them as numbers, staged too (out13: ``[Array(1.5, dtype=float32), ...]``)."""
    listed(1.5)
    expected = capsys.readouterr().out
    autograph.to_graph(listed)(1.5)
    jax.effects_barrier()
    assert capsys.readouterr().out == expected == (
        "[1.5, 2.5] (2, 's') {'k': 1.5}\n[1.5, 2] [2] (1.5,)\n")

    @jax.jit
    def strong(x):
        print_([x])
        return x

    strong(jnp.float32(1.5))   # a float32 array in Python too: shown as an array
    jax.effects_barrier()
    assert capsys.readouterr().out == "[Array(1.5, dtype=float32)]\n"


def int_or_float(x):
    k = 3
    if x > 1:
        k = 4.0
    print(k, f"{k}", f"{k:>5}")
    return k


def test_a_number_whose_type_a_traced_condition_decided_prints_as_that_type():
    # Python prints `3` where the branch is not taken, `4.0` where it is; the staged
    # value is a float32 either way, its type the branch's (python_ints.Either).
    for x in (0.0, 2.0):
        expected = io.StringIO()
        with contextlib.redirect_stdout(expected):
            int_or_float(x)
        got = io.StringIO()
        with contextlib.redirect_stdout(got):
            autograph.to_graph(int_or_float)(x)
            jax.effects_barrier()
        assert got.getvalue() == expected.getvalue()


def warned_in_catch_warnings(x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("careful", stacklevel=1)
    return x * 2, len(caught), caught[0].lineno


def warned_in_a_staged_branch(x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if x > 0:
            warnings.warn("careful", stacklevel=1)
    return x * 2, len(caught)


def test_a_warning_in_the_function_s_catch_warnings_is_caught_by_it():
    # Made while tracing, as jax.jit of the original makes it (made when the program
    # runs, the `with` had ended: nothing was recorded and the warning escaped).
    expected = warned_in_catch_warnings(1.0)
    assert jax.jit(warned_in_catch_warnings)(1.0)[1:] == expected[1:]
    assert autograph.to_graph(warned_in_catch_warnings)(1.0)[1:] == expected[1:]
    with pytest.raises(autograph.ConversionError, match="catch_warnings"):
        autograph.to_graph(warned_in_a_staged_branch)(1.0)
    assert autograph.convert(warned_in_a_staged_branch)(1.0) == (2.0, 1)


def printed_in_printoptions(x):
    with np.printoptions(precision=2):
        if x.sum() > 0:
            x = x * 2
        print(x, f"{x}")
    return x


def test_a_staged_print_inside_np_printoptions_shows_arrays_with_them(capsys):
    # The print is made when the program runs, after the `with` has ended: the
    # options in force while tracing it are the ones Python's print would use.
    x = jnp.array([1.23456, 2.0])
    printed_in_printoptions(x)
    expected = capsys.readouterr().out
    assert expected == "[2.47 4.  ] [2.47 4.  ]\n"
    autograph.to_graph(printed_in_printoptions)(x)
    jax.effects_barrier()
    assert capsys.readouterr().out == expected
    autograph.to_graph(printed_to_stdout)(x)   # outside the with: NumPy's defaults
    jax.effects_barrier()
    assert capsys.readouterr().out == "[2.46912 4.     ]\n"


def printed_to_stdout(x):
    if x.sum() > 0:
        x = x * 2
    print(x)
    return x


SWAPPED = io.StringIO()


def swaps_stdout_by_hand(x):
    print("before", x)
    old = sys.stdout
    sys.stdout = SWAPPED
    print("inside", x)
    if x > 0:
        print("positive", x)
    sys.stdout = old
    print("after", x)
    return x


def test_a_stdout_swapped_by_hand_gets_the_staged_print():
    # (staged, "inside" went to the stdout in force when the program ran: the caller's)
    def printed(run, x):
        SWAPPED.seek(0)
        SWAPPED.truncate()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run(x)
            jax.effects_barrier()
        return out.getvalue(), SWAPPED.getvalue()

    compiled = autograph.to_graph(swaps_stdout_by_hand)
    jitted = jax.jit(autograph.convert(swaps_stdout_by_hand))
    for x in (2.0, -1.0):
        expected = printed(swaps_stdout_by_hand, x)
        assert printed(autograph.convert(swaps_stdout_by_hand), x) == expected
        assert printed(compiled, jnp.float32(x)) == expected
        assert printed(jitted, x) == expected
    assert "ag__.set_stdout(sys, SWAPPED)" in autograph.to_code(swaps_stdout_by_hand)


def python_numbers_formatted(x):
    m = 1.5
    k = 3
    if x > 0:
        m = m + 1.0
        k = k + 1
    print("%r" % m, "%r|%s" % (m, k), "%.2f" % m,  # noqa: UP031 - the % form under test
          "%d %x %5.1f" % (k, k, k), "%d" % m)  # noqa: UP031
    n = m * 2
    print(f"{n!r}", "%r" % n, repr(n), [n], n, f"{n:.3f}")  # noqa: UP031
    return x


def test_a_python_number_staging_made_traced_is_formatted_as_python_formats_it():
    # (staged, `%r` of m and repr of `m * 2` printed `Array(2.5, dtype=float32)`)
    def printed(run, x):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run(x)
            jax.effects_barrier()
        return out.getvalue()

    for x in (4.0, -1.0):
        expected = printed(python_numbers_formatted, x)
        assert printed(autograph.convert(python_numbers_formatted), x) == expected
        assert printed(autograph.to_graph(python_numbers_formatted), jnp.float32(x)) == expected
        assert printed(jax.jit(autograph.convert(python_numbers_formatted)), x) == expected
