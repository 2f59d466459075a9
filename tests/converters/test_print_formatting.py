"""f-strings, ``str.format`` and ``%`` in ``print``: the printed text is Python's.

Each function is run as the original (the oracle: on Python values, and eagerly on
the concrete JAX arrays), converted with Python values, compiled (``to_graph`` and
the user's own ``jax.jit``), and under ``vmap``; the captured text must be equal.
"""

import jax
import jax.numpy as jnp
import pytest

import autograph


def log_step(step, loss):
    print(f"step {step}: loss {loss:.3f}")
    return loss


def specs(n, x):
    print(f"[{n:>5}] [{n:<4}|{n:^7}] {n:+d} {n:05d} {n:x} {n:#b} {x:10.4f} {x:e} {x:g} "
          f"{x:.1%} {x=:.2f}")
    return x


def conversions(n, x):
    print(f"{x!r} {x!s} {n!r:>30} {x!a}")
    return x


def str_format(n, x):
    print("{} of {:>4}: {:.2f} {x:+.1f} {{braces}}".format(n, 10, x, x=x),  # noqa: UP032
          "{0}-{0}".format(n))  # noqa: UP032
    return x


def percent(n, x):
    print("%d items, %.3f each, %5.1f%%, %s|%r" % (n, x, x * 100, n, "s"),  # noqa: UP031
          "%08.3f" % x)  # noqa: UP031
    return x


def nested_spec(x, width, digits):
    print(f"[{x:{width}.{digits}f}]")
    return x


def mixed_arguments(n, x):
    print("n:", n, f"x={x:.2f}", "done", sep=" | ", end="!\n")
    return x


def static_and_traced(x):
    name = "loss"
    values = [1, 2]
    print(f"{name}: {x:.2f} {values} {len(values):>3}")
    return x


SEEN = []


def formatting_outside_print(x):
    text = f"{x}"     # not an argument of print: it would be the tracer's text
    SEEN.append(text)
    return x


def train(n, lr):
    loss = 1.0
    for step in range(n):
        loss = loss * (1 - lr)
        if step % 2 == 0:
            print(f"step {step:>3}: loss {loss:.4f}")
    return loss


def captured(capfd, run):
    capfd.readouterr()
    run()
    jax.effects_barrier()
    return capfd.readouterr().out


CASES = [
    (log_step, (3, 0.125)),
    (specs, (42, 0.375)),
    (conversions, (7, 0.5)),
    (str_format, (3, 1.25)),
    (percent, (4, 0.625)),
    (nested_spec, (2.5, 8, 2)),
    (mixed_arguments, (5, 0.75)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_python_values_print_pythons_text(capfd, fn, args):
    expected = captured(capfd, lambda: fn(*args))
    assert captured(capfd, lambda: autograph.convert(fn)(*args)) == expected


@pytest.mark.parametrize("fn,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_compiled_prints_the_originals_text(capfd, fn, args):
    arrays = tuple(jnp.asarray(a, jnp.int32 if isinstance(a, int) else jnp.float32)
                   for a in args)
    if fn is nested_spec:            # width and digits must stay Python ints
        arrays = (arrays[0], *args[1:])
    expected = captured(capfd, lambda: fn(*arrays))     # the original, eagerly
    if fn is not conversions:        # the values are exact: the same text as Python's
        assert expected == captured(capfd, lambda: fn(*args))
    assert captured(capfd, lambda: autograph.to_graph(fn)(*arrays)) == expected
    assert captured(capfd, lambda: jax.jit(autograph.convert(fn))(*arrays)) == expected


def test_exact_lines(capfd):
    assert captured(capfd, lambda: autograph.to_graph(log_step)(
        jnp.int32(3), jnp.float32(0.125))) == "step 3: loss 0.125\n"
    assert captured(capfd, lambda: autograph.to_graph(conversions)(
        jnp.int32(7), jnp.float32(0.5))) == (
        f"Array(0.5, dtype=float32) 0.5 {'Array(7, dtype=int32)':>30} "
        "Array(0.5, dtype=float32)\n")
    assert captured(capfd, lambda: autograph.to_graph(percent)(
        jnp.int32(4), jnp.float32(0.625))) == "4 items, 0.625 each,  62.5%, 4|'s' 0000.625\n"


def test_static_values_and_a_staged_loop(capfd):
    expected = captured(capfd, lambda: static_and_traced(0.5))
    assert captured(capfd, lambda: autograph.to_graph(static_and_traced)(
        jnp.float32(0.5))) == expected
    expected = captured(capfd, lambda: train(5, 0.5))
    assert expected.splitlines()[0] == "step   0: loss 0.5000"
    got = captured(capfd, lambda: autograph.to_graph(train)(jnp.int32(5), jnp.float32(0.5)))
    assert got == expected


def test_under_vmap_each_example_prints_its_line(capfd):
    ns, xs = jnp.arange(3), jnp.array([0.5, 1.25, -2.0])
    expected = sorted(captured(capfd, lambda: [specs(int(n), float(x))
                                               for n, x in zip(ns, xs, strict=True)])
                      .splitlines())
    got = captured(capfd, lambda: jax.vmap(autograph.convert(specs))(ns, xs))
    assert sorted(got.splitlines()) == expected
    got = captured(capfd, lambda: jax.jit(jax.vmap(autograph.convert(percent)))(ns, xs))
    assert sorted(got.splitlines()) == sorted(
        captured(capfd, lambda: [percent(int(n), float(x))
                                 for n, x in zip(ns, xs, strict=True)]).splitlines())


def test_a_spec_that_cannot_apply_raises_at_trace_time_like_python():
    def bad(x):
        print(f"{x:d}")
        return x

    with pytest.raises(ValueError, match="Unknown format code 'd'") as python:
        bad(1.5)
    with pytest.raises(ValueError, match="Unknown format code 'd'") as staged:
        autograph.to_graph(bad)(jnp.float32(1.5))
    assert str(staged.value) == str(python.value)
    frames = [f for f in _frames(staged.value.__traceback__) if f.f_code.co_name == "bad"]
    assert frames and frames[-1].f_lineno == bad.__code__.co_firstlineno + 1


def _frames(tb):
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def test_formatting_outside_print_is_refused():
    SEEN.clear()
    # jax.jit of the original gives the tracer's text (`JitTracer(float32[])`), not
    # the value's: refused at the line (converters/unstaged_expressions.py).
    with pytest.raises(autograph.ConversionError, match="only inside print") as info:
        jax.jit(autograph.convert(formatting_outside_print))(jnp.float32(1.0))
    assert f"{__file__}:{formatting_outside_print.__code__.co_firstlineno + 1}" \
        in str(info.value)
    assert SEEN == []

    def spec_outside(x):
        SEEN.append(f"{x:.3f}")
        return x

    def format_outside(x):
        SEEN.append("{:.3f}".format(x))  # noqa: UP032 - .format is the subject
        return x

    # Refused at the line (converters/unstaged_expressions.py), `.format` of a
    # string literal too.
    for fn in (spec_outside, format_outside):
        with pytest.raises(autograph.ConversionError, match="only inside print") as info:
            jax.jit(autograph.convert(fn))(jnp.float32(1.0))
        assert f"{__file__}:{fn.__code__.co_firstlineno + 1}" in str(info.value)
    assert SEEN == []


def test_generated_code():
    code = autograph.to_code(log_step)
    assert "ag__.print_(ag__.format_('step {}: loss {:.3f}', step, loss))" in code
    code = autograph.to_code(nested_spec)
    assert "ag__.format_('[{:{}.{}f}]', x, width, digits)" in code
    code = autograph.to_code(percent)
    assert "ag__.percent_format('%08.3f', x)" in code
    code = autograph.to_code(str_format)
    assert "ag__.format_('{} of {:>4}: {:.2f} {x:+.1f} {{braces}}', n, 10, x, x=x)" in code
