"""runtime/deferred_writes.py: a stream a staged print or write fills at run time is
not read back while tracing (a ConversionError at the user's line, not ``''``)."""

import contextlib
import io
import logging

import jax
import jax.numpy as jnp
import pytest

import autograph


def printed_then_read(x):
    buf = io.StringIO()
    if x > 0:
        x = x * 2
    print("x is", x, file=buf)
    return x, len(buf.getvalue())


def written_in_loop_then_read(x):
    buf = io.StringIO()
    for i in range(3):
        if x > i:
            x = x - 1
        buf.write("s")
    return x, len(buf.getvalue())


def redirected_then_read(x):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if x > 0:
            x = x * 2
        print("x is", x)
    return x, buf.tell()


LOGGER = logging.getLogger("tests.deferred_writes")
LOGGER.setLevel(logging.INFO)
LOGGER.propagate = False


def logged_then_read(x):
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    LOGGER.addHandler(handler)
    try:
        for i in range(2):
            if x > i:
                x = x * 2
            LOGGER.info("step %d", i)
    finally:
        LOGGER.removeHandler(handler)
    return x, len(buf.getvalue())


@pytest.mark.parametrize("fn", [printed_then_read, written_in_loop_then_read,
                                redirected_then_read, logged_then_read])
def test_a_read_while_tracing_is_refused_at_the_line(fn):
    assert fn(1.0)[1] > 0            # Python reads the text back
    assert autograph.convert(fn)(1.0) == fn(1.0)
    # (the handler the logging one removes in its `finally` is refused first)
    with pytest.raises(autograph.ConversionError,
                       match=r"reads back a stream .* line \d+|removeHandler\(\) changes"):
        autograph.to_graph(fn)(1.0)


LOG = io.StringIO()


def printed_to_a_global(x):
    if x > 0:
        x = x * 2
    print("x =", x, file=LOG)
    return x


def test_a_read_after_the_compiled_call_sees_the_text():
    LOG.seek(0)
    LOG.truncate()
    autograph.to_graph(printed_to_a_global)(1.0)
    jax.effects_barrier()
    assert LOG.getvalue() == "x = 2.0\n"

    def reads_it(x):   # another trace reads what the finished program wrote
        if x > 0:
            x = x + 1
        return x, len(LOG.getvalue())

    assert autograph.to_graph(reads_it)(1.0)[1] == len("x = 2.0\n")


def test_under_vmap_without_jit_the_text_is_there():
    # vmap runs each staged print as it goes: the text is in the stream (one line
    # per example) when the next line reads it, and nothing is refused.
    _, lengths = jax.vmap(autograph.convert(printed_then_read))(jnp.array([1.0, -1.0]))
    assert lengths.tolist() == [len("x is 2.0\n") + len("x is -1.0\n")] * 2


def redirected(x):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if x > 0:
            x = x * 2
        print("x is", x)
    return x, buf


def test_a_staged_print_inside_redirect_stdout_goes_where_python_s_goes(capsys):
    x, buf = redirected(1.0)
    assert (buf.getvalue(), capsys.readouterr().out) == ("x is 2.0\n", "")

    def staged(x):
        if x > 0:
            x = x * 2
        with contextlib.redirect_stdout(HELD):
            print("x is", x)
        return x

    HELD.seek(0)
    HELD.truncate()
    autograph.to_graph(staged)(1.0)
    jax.effects_barrier()
    assert (HELD.getvalue(), capsys.readouterr().out) == ("x is 2.0\n", "")
    autograph.to_graph(printed_to_stdout)(1.0)   # after the with: stdout again
    jax.effects_barrier()
    assert capsys.readouterr().out == "x = 2.0\n"


HELD = io.StringIO()


def printed_to_stdout(x):
    if x > 0:
        x = x * 2
    print("x =", x)
    return x


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


LEVELLED = logging.getLogger("tests.deferred_writes.levelled")
LEVELLED.propagate = False
SEEN = _Lines()
LEVELLED.addHandler(SEEN)


def level_lowered_for_one_call(x):
    LEVELLED.setLevel(logging.INFO)
    if x > 0:
        x = x * 2
    LEVELLED.info("value %s", x)
    LEVELLED.setLevel(logging.WARNING)
    return x


def test_a_logger_changed_after_a_staged_log_call_is_refused():
    # Made when the program runs, the call found the level the function set last
    # (WARNING) and logged nothing, where Python's logged one line.
    SEEN.lines.clear()
    level_lowered_for_one_call(1.0)
    assert SEEN.lines == ["value 2.0"]
    with pytest.raises(autograph.ConversionError, match=r"setLevel\(\) changes the logger"):
        autograph.to_graph(level_lowered_for_one_call)(1.0)


def test_a_logger_configured_before_its_staged_calls_is_left_alone():
    def configured_first(x):
        LEVELLED.setLevel(logging.INFO)
        if x > 0:
            x = x * 2
        LEVELLED.info("value %s", x)
        return x

    SEEN.lines.clear()
    autograph.to_graph(configured_first)(1.0)
    jax.effects_barrier()
    autograph.to_graph(configured_first)(jnp.float32(2.0))   # a later trace: the
    # first's call has been made; its setLevel is no change to a pending call
    jax.effects_barrier()
    assert SEEN.lines == ["value 2.0", "value 4.0"]
