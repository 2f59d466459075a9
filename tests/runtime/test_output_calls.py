"""Library calls that write text outside the program (``autograph/output_calls.py``,
``printing.call_when_run``): ``log.info``, ``warnings.warn``, ``sys.stdout.write``.
Python writes each time the call runs; in a staged branch or loop body the call ran
once while tracing, whatever the condition (both branches' text for one input, as
``jax.jit`` of the original never shows). They now run when the program runs, on the
path Python takes, as ``print`` does."""

import io
import logging
import sys
import warnings

import jax
import jax.numpy as jnp
import pytest

import autograph
from tests.differential import check

log = logging.getLogger("tests.output_calls")


def logs_the_branch_taken(x):
    if x > 0:
        log.info("positive %s", 1)
    else:
        log.info("not positive")
    return x * 2


def warns_when_positive(x):
    if x > 0:
        warnings.warn("positive input", stacklevel=2)
    return x * 2


def writes_per_iteration(x, n):
    for i in range(n):
        if x > i:
            sys.stdout.write(f"above {i}\n")
    return x


@pytest.fixture
def log_text():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        log.removeHandler(handler)


def _compiled(fn):
    return [autograph.to_graph(fn), jax.jit(autograph.convert(fn))]


def test_a_log_call_in_a_staged_branch_logs_the_branch_taken(log_text):
    for x in (-1.0, 1.5):
        logs_the_branch_taken(x)
        autograph.convert(logs_the_branch_taken)(x)
        for compiled in _compiled(logs_the_branch_taken):
            compiled(jnp.float32(x))
            jax.effects_barrier()
    assert log_text.getvalue() == "not positive\n" * 4 + "positive 1\n" * 4


def test_a_warning_in_a_staged_branch_warns_when_the_branch_runs():
    for x, expected in ((-1.0, []), (1.5, ["positive input"])):
        for run in [warns_when_positive, autograph.convert(warns_when_positive),
                    *_compiled(warns_when_positive)]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run(jnp.float32(x) if run is not warns_when_positive else x)
                jax.effects_barrier()
            assert [str(w.message) for w in caught] == expected


def test_a_stream_write_in_a_staged_loop_writes_per_iteration_taken(capsys):
    writes_per_iteration(1.5, 3)
    expected = capsys.readouterr().out
    assert expected == "above 0\nabove 1\n"
    autograph.convert(writes_per_iteration)(1.5, 3)
    assert capsys.readouterr().out == expected
    for compiled in _compiled(writes_per_iteration):
        compiled(jnp.float32(1.5), jnp.int32(3))   # a traced trip count: a staged loop
        jax.effects_barrier()
        assert capsys.readouterr().out == expected


def test_a_binary_file_write_in_a_staged_branch_writes_when_the_branch_runs(tmp_path):
    path = tmp_path / "out.bin"
    with open(path, "wb") as sink:
        def writes_when_positive(x):
            if x > 0:
                sink.write(b"positive\n")
            return x * 2

        for x in (-1.0, 1.5):
            writes_when_positive(x)
            autograph.convert(writes_when_positive)(x)
            for compiled in _compiled(writes_when_positive):
                compiled(jnp.float32(x))
                jax.effects_barrier()
    assert path.read_bytes() == b"positive\n" * 4


def opens_its_own_file(x, path):
    with open(path, "a") as f:
        if x > 0:
            f.write("positive\n")
    return x * 2


def test_a_write_to_a_file_closed_while_tracing_names_the_users_line(tmp_path):
    path = str(tmp_path / "log.txt")
    assert opens_its_own_file(1.0, path) == 2.0
    assert autograph.convert(opens_its_own_file)(1.0, path) == 2.0
    assert open(path).read() == "positive\n" * 2
    line = opens_its_own_file.__code__.co_firstlineno + 3
    with pytest.raises(Exception, match=rf"{__file__}:{line}: this TextIOWrapper.write .*"
                                        "closed"):
        autograph.to_graph(opens_its_own_file, static_argnums=1)(jnp.float32(1.0), path)
        jax.effects_barrier()
    assert open(path).read() == "positive\n" * 2


def test_under_vmap_only_the_examples_taking_the_branch_log(log_text):
    jax.vmap(autograph.convert(logs_the_branch_taken))(jnp.array([-1.0, 2.0, 3.0]))
    jax.effects_barrier()
    assert sorted(log_text.getvalue().splitlines()) == [
        "not positive", "positive 1", "positive 1"]


def test_the_calls_go_through_converted_call():
    code = autograph.to_code(warns_when_positive)
    assert "ag__.converted_call(warnings.warn)('positive input', stacklevel=2)" in code
    assert "ag__.converted_call(sys.stdout.write)" in autograph.to_code(writes_per_iteration)


# -- a differential fuzzer of output calls in staged regions ----------------------------

OUTPUT_CALLS = ('sys.stdout.write(f"w{tag} {v}\\n")', 'log.info("l{tag} %s", v)',
                'print(f"p{tag}", v)', 'raw.write(b"b{tag}\\n")',
                'warnings.warn(f"u{tag} {v}", stacklevel=1)')


def random_program(rng, name):
    """A function of ``(x, n)`` whose output calls sit in nested ``if``s on ``x`` and
    loops over ``range(n)`` or ``range(3)``, each call writing a distinct tag (a
    log record and a warning with the line they name)."""
    tags = iter(range(100))

    def block(depth):
        lines = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(("call", "if", "for") if depth < 3 else ("call",))
            if kind == "call":
                lines.append(rng.choice(OUTPUT_CALLS).replace("{tag}", str(next(tags))))
                continue
            head = (f"if x > {rng.randint(-2, 4)}:" if kind == "if"
                    else f"for i{depth} in range({rng.choice(('n', '3'))}):")
            inner = block(depth + 1)
            if kind == "for":   # the loop variable among the values written
                inner = [f"v = v + i{depth}", *inner]
            lines += [head, *["    " + line for line in inner]]
            if kind == "if" and rng.random() < 0.5:
                lines += ["else:", *["    " + line for line in block(depth + 1)]]
        return lines

    body = ["v = 0", *block(0), "return x"]
    return f"def {name}(x, n):\n" + "".join(f"    {line}\n" for line in body)


def run_fuzz(count, seed, directory):
    """``count`` random programs: the text Python writes against ``to_graph``'s.
    Returns the sources whose text differs."""
    import contextlib
    import importlib.util
    import random

    rng = random.Random(seed)
    bad = []
    for k in range(count):
        source = random_program(rng, f"f{k}")
        path = directory / f"output_fuzz_{seed}_{k}.py"
        path.write_text("import io, logging, sys, warnings\n"
                        "log = logging.getLogger('tests.output_calls')\n"
                        "raw = io.BytesIO()\n" + source)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, f"f{k}")
        x, n = rng.randint(-3, 5), rng.randint(0, 3)
        texts = []
        for run, args in ((fn, (x, n)), (autograph.to_graph(fn), (jnp.int32(x), jnp.int32(n)))):
            stream = io.StringIO()
            handler = logging.StreamHandler(stream)
            # (the line a log record or a warning names is part of the text: out13)
            handler.setFormatter(logging.Formatter("%(lineno)d %(message)s"))
            module.log.addHandler(handler)
            module.log.setLevel(logging.INFO)
            try:
                with contextlib.redirect_stdout(stream), \
                        warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    run(*args)
                    jax.effects_barrier()
            finally:
                module.log.removeHandler(handler)
            warned = "".join(f"{w.filename == str(path)} {w.lineno} {w.message}\n"
                             for w in caught)
            texts.append(stream.getvalue() + module.raw.getvalue().decode() + warned)
            module.raw.seek(0)
            module.raw.truncate()
        if texts[0] != texts[1]:
            bad.append(f"{source}# x={x} n={n}\n# Python {texts[0]!r}\n# to_graph {texts[1]!r}")
    return bad


def test_random_programs_write_pythons_text(tmp_path):
    assert run_fuzz(12, 0, tmp_path) == []


if __name__ == "__main__":
    import argparse
    import pathlib
    import tempfile

    parser = argparse.ArgumentParser(description="fuzz output calls in staged regions")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = run_fuzz(options.count, options.seed, pathlib.Path(tmp))
    print("\n\n".join(found))
    print(f"{options.count} programs, {len(found)} with other text")


class Pretender:
    __class__ = 413   # isinstance() on it asks issubclass(413, ...), which raises

    def write(self, text):
        return len(text)


def calls_a_method_of_an_object_with_a_strange_class(x):
    p = Pretender()
    return p.write("ab") + x


def test_an_object_whose_class_attribute_is_not_a_class_is_no_output_stream():
    """(found by CPython's test_super under convert: the check used isinstance, which an
    object's own ``__class__`` can make raise TypeError)"""
    check(calls_a_method_of_an_object_with_a_strange_class, 1.0)


def warns_at_its_line(x):
    if x > 0:
        warnings.warn("at its line", stacklevel=1)
    return x * 2


def logs_at_its_line(x):
    if x > 0:
        log.info("at %s", "its line")
    logging.getLogger("tests.output_calls").log(logging.INFO, "and by level")
    return x * 2


def test_a_warning_made_when_the_program_runs_names_the_users_line():
    """(out13: made from the host callback, it named printing.py's line)"""
    line = warns_at_its_line.__code__.co_firstlineno + 2
    for run in [warns_at_its_line, autograph.convert(warns_at_its_line),
                *_compiled(warns_at_its_line)]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run(jnp.float32(1.5) if run is not warns_at_its_line else 1.5)
            jax.effects_barrier()
        assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [
            (__file__, line, "at its line")]


def test_a_log_record_made_when_the_program_runs_names_the_users_line(log_text):
    log.handlers[-1].setFormatter(logging.Formatter("%(filename)s:%(lineno)d %(message)s"))
    first = logs_at_its_line.__code__.co_firstlineno
    expected = (f"test_output_calls.py:{first + 2} at its line\n"
                f"test_output_calls.py:{first + 3} and by level\n")
    logs_at_its_line(1.5)
    for compiled in _compiled(logs_at_its_line):
        compiled(jnp.float32(1.5))
        jax.effects_barrier()
    assert log_text.getvalue() == expected * 3
