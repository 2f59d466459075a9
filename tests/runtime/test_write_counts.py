"""What a stream ``write`` made when the compiled program runs returns
(``autograph/runtime/write_counts.py``).

Python's ``stream.write(text)`` returns the count of characters (bytes, for a binary
stream) written. Staged, the write is made when the program runs, after the traced
code has gone on (``printing.call_when_run``); it returned None. It now returns the
count Python's call returns where that is known while tracing (a static text to a
standard stream: its length), and otherwise a value that refuses every use at the
user's line.
"""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import pytest

import autograph

SINK = io.StringIO()
RAW = io.BytesIO()


def _reset():
    SINK.seek(0)
    SINK.truncate()
    RAW.seek(0)
    RAW.truncate()


def counts_text_in_a_staged_loop(x):
    total = 0
    for i in range(3):
        x = x + i
        total = total + SINK.write("ab\n")
    return total, x


def counts_bytes_in_a_staged_loop(x):
    total = 0
    for i in range(2):
        x = x + i
        total = total + RAW.write(b"abcd")
    return total, x


def writelines_gives_none(x):
    got = 1
    for i in range(2):
        x = x + i
        got = SINK.writelines(["a", "b"])
    return got is None, x


STATIC = [counts_text_in_a_staged_loop, counts_bytes_in_a_staged_loop,
          writelines_gives_none]


def _types(tree):
    return [(jax.typeof(v).dtype, jax.typeof(v).weak_type, v.tolist())
            for v in jax.tree.leaves(tree)]


@pytest.mark.parametrize("fn", STATIC, ids=[f.__name__ for f in STATIC])
def test_a_write_s_count_is_what_jit_of_the_original_gives(fn):
    x = jnp.float32(1.0)
    _reset()
    expected = _types(jax.jit(fn)(x))
    text = SINK.getvalue(), RAW.getvalue()
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        _reset()
        assert _types(compiled(x)) == expected
        jax.effects_barrier()
        assert (SINK.getvalue(), RAW.getvalue()) == text


def counts_in_a_staged_branch(x):
    n = 0
    if x > 0:
        n = SINK.write("positive\n")
    return n


def test_a_write_s_count_in_a_staged_branch_is_python_s():
    _reset()
    assert autograph.convert(counts_in_a_staged_branch)(1.0) == 9
    _reset()
    assert autograph.to_graph(counts_in_a_staged_branch)(jnp.float32(1.0)) == 9
    assert autograph.to_graph(counts_in_a_staged_branch)(jnp.float32(-1.0)) == 0


def uses_the_count_of_traced_text(x):
    n = 0
    for i in range(3):
        x = x + i
        n = n + SINK.write(f"{x}\n")
    return n


def drops_the_count_of_traced_text(x):
    for i in range(3):
        x = x + i
        SINK.write(f"{x}\n")
    return x


def test_the_unknown_count_of_traced_text_is_refused_where_it_is_used():
    line = uses_the_count_of_traced_text.__code__.co_firstlineno + 4
    for compiled in (autograph.to_graph(uses_the_count_of_traced_text),
                     jax.jit(autograph.convert(uses_the_count_of_traced_text))):
        with pytest.raises(autograph.ConversionError, match="not known while tracing") as e:
            compiled(jnp.float32(1.0))
        assert (e.value.filename, e.value.lineno) == (__file__, line)
    _reset()
    autograph.to_graph(drops_the_count_of_traced_text)(jnp.float32(1.0))
    jax.effects_barrier()
    assert SINK.getvalue() == "1.0\n2.0\n4.0\n"
