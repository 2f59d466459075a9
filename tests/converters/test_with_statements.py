"""``with`` statements: context managers that suppress what they may not
(converters/with_statements.py, runtime/handlers.py ``managed``)."""

import contextlib
import io
import sys

import jax
import jax.numpy as jnp
import pytest

import autograph

LOG = []


class Logged:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        LOG.append("enter " + self.name)
        return self.name

    def __exit__(self, *exc):
        LOG.append("exit " + self.name)
        return False


def nested(x):
    with Logged("a") as a, Logged("b") as b:
        if x > 0:
            x = x + 1
        with Logged("c"):
            x = x * 2
    return x, len(a + b)


def suppressed_staged_raise(x):
    y = 1.0
    with contextlib.suppress(ValueError):
        while x < 0:
            raise ValueError("negative")
        y = 2.0
    return y


def suppressed_check(x):
    y = 1.0
    with contextlib.suppress(ValueError):
        if x > 5:
            raise ValueError("big")
        y = 2.0
    return y


@contextlib.contextmanager
def section(name):
    LOG.append(name)
    try:
        yield name
    finally:
        LOG.append("/" + name)


def checked_in_a_section(x):
    with section("s"):
        assert x > 0, "positive"
        x = x + 1
    return x


def test_managers_run_as_in_python():
    for x in (1.0, -1.0):
        LOG.clear()
        expected = nested(x)
        python_log = list(LOG)
        LOG.clear()
        assert autograph.convert(nested)(x) == expected
        assert LOG == python_log
    LOG.clear()
    out = autograph.to_graph(nested)(1.0)
    assert float(out[0]) == 4.0 and int(out[1]) == 2
    assert LOG == ["enter a", "enter b", "enter c", "exit c", "exit b", "exit a"]
    with pytest.raises(TypeError, match="context manager protocol"):
        autograph.convert(lambda_free_with)(1)


def lambda_free_with(x):
    with x:
        return x


def test_a_suppressed_staged_raise_is_refused():
    # The raise runs while tracing, and suppress() discarded it for every input:
    # to_graph gave 1.0 where Python gives 2.0 (x = 1).
    for x in (1.0, -1.0):
        assert autograph.convert(suppressed_staged_raise)(x) == suppressed_staged_raise(x)
    line = suppressed_staged_raise.__code__.co_firstlineno + 2
    with pytest.raises(autograph.ConversionError, match="this `with` suppressed") as info:
        autograph.to_graph(suppressed_staged_raise)(1.0)
    assert f"{__file__}:{line}" in str(info.value)


def test_a_check_under_a_suppressing_manager_is_refused():
    # A run-time check raised from the compiled call where Python suppresses it.
    assert autograph.convert(suppressed_check)(7.0) == 1.0
    line = suppressed_check.__code__.co_firstlineno + 3
    with pytest.raises(autograph.ConversionError, match="may suppress") as info:
        autograph.to_graph(suppressed_check)(jnp.float32(7.0))
    assert f"{__file__}:{line}" in str(info.value)


def test_a_check_under_a_manager_that_suppresses_nothing_stages():
    assert float(autograph.to_graph(checked_in_a_section)(1.0)) == 2.0
    with pytest.raises(AssertionError, match="positive"):
        autograph.to_graph(checked_in_a_section)(-1.0)


def test_generated_code():
    code = autograph.to_code(nested)
    assert ("with ag__.managed(ag__.converted_call(Logged)('a'), ag__.converted_call) as a"
            in code)


# The user's context managers print where Python prints them: converted, their
# print is staged in program order (run as they were, it printed while tracing,
# before the staged body's text: "enter, exit, x 2.0").


class Shown:
    def __enter__(self):
        print("enter")
        return self

    def __exit__(self, *exc):
        print("exit")
        return False


def in_a_class_manager(x):
    print("before", x)
    with Shown():
        print("x", x)
        y = x * 2
    return y


@contextlib.contextmanager
def shown_section(name):
    print("enter", name)
    yield name
    print("exit", name)
    print("done", name, file=sys.stderr)


def in_a_generator_manager(x):
    with shown_section("a") as name:
        print(name, x)
    return x + 1


def in_an_exit_stack(x):
    with contextlib.ExitStack() as stack:
        stack.callback(print, "callback")
        stack.push(Shown())
        stack.enter_context(Shown())
        print("x", x)
    return x


def _printed(run, x):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        run(x)
        jax.effects_barrier()
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("fn", [in_a_class_manager, in_a_generator_manager,
                                in_an_exit_stack])
def test_a_users_manager_prints_in_program_order(fn):
    for x in (2.0, 3.0):
        expected = _printed(fn, x)
        assert _printed(autograph.convert(fn), x) == expected
        assert _printed(autograph.to_graph(fn), jnp.float32(x)) == expected
        assert _printed(jax.jit(autograph.convert(fn)), x) == expected


@contextlib.contextmanager
def shown_value(v):
    print("v", v)
    yield


def generator_of_a_traced_value(x):
    with shown_value(x):
        y = x + 1
    return y


def test_a_generator_manager_printing_its_traced_argument_is_refused():
    # (a generator runs as it is: it would print the tracer)
    assert _printed(autograph.convert(generator_of_a_traced_value), 2.0) == ("v 2.0\n", "")
    line = generator_of_a_traced_value.__code__.co_firstlineno + 1
    with pytest.raises(autograph.ConversionError, match="traced arguments") as info:
        autograph.to_graph(generator_of_a_traced_value)(2.0)
    assert f"{__file__}:{line}:" in str(info.value)


def registers_itself():
    import contextlib

    class Manager:
        def __enter__(self):
            return self

        def __exit__(self, *details):
            return False

    manager = Manager()
    with contextlib.ExitStack() as stack:
        stack.enter_context(manager)
        same = stack._exit_callbacks[-1][1].__self__ is manager
    return same


def test_an_exit_stack_holds_the_very_manager_in_python_mode():
    # (CPython's test_contextlib: the stack is introspected; only a trace routes its
    # registrations through converted code)
    assert registers_itself() is True
    assert autograph.convert(registers_itself)() is True
