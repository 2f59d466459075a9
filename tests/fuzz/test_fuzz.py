"""Differential fuzzing: random programs run as Python, converted, traced and vmapped.

The fast profile (default test run) checks a few hundred programs; the long one
(``-m slow``, or ``python -m tests.fuzz.run --count 10000``) ten thousand. A
mismatch prints the program, the arguments and the way that disagreed; each one
found becomes a plain function in ``test_regressions.py``.
"""

from __future__ import annotations

import os

import pytest

from tests.fuzz import harness

FAST_COUNT = int(os.environ.get("AUTOGRAPH_FUZZ_COUNT", "200"))


def _report(mismatches):
    return "\n".join(str(m) for m in mismatches[:5])


@pytest.fixture(scope="module")
def features():
    return harness.detect_features()


def test_fast_profile(features):
    programs, mismatches = harness.fuzz(0, FAST_COUNT, compile_every=25, features=features)
    assert len(programs) == FAST_COUNT
    silent = [m for m in mismatches if m.silent and not m.known]
    assert not silent, _report(silent)
    if "jumps" not in features:
        assert not mismatches, _report(mismatches)
    # With jumps, an early `return` inside a staged loop can still be refused with a
    # ConversionError (see test_regressions.py, xfail): loud, never a wrong value.


def test_strings_profile(features):
    """Multi-line string literals in methods, nested classes and factories (issue 21,
    class 5): every value kept, in every mode, and nothing refused for them."""
    count = max(1, FAST_COUNT // 4)
    programs, mismatches = harness.fuzz(0, count, compile_every=25,
                                        features=features | {"strings"})
    assert len(programs) == count
    assert all("    def " in p.source for p in programs)      # every one defined indented
    silent = [m for m in mismatches if m.silent and not m.known]
    assert not silent, _report(silent)
    if "jumps" not in features:
        assert not mismatches, _report(mismatches)


@pytest.mark.slow
def test_long_profile(features, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("the long profile runs with -m slow (or python -m tests.fuzz.run)")
    count = int(os.environ.get("AUTOGRAPH_FUZZ_COUNT", "10000"))
    programs, mismatches = harness.fuzz(100_000, count, compile_every=50, features=features)
    silent = [m for m in mismatches if m.silent and not m.known]
    assert not silent, _report(silent)


BOUNDED_COUNT = int(os.environ.get("AUTOGRAPH_FUZZ_BOUNDED_COUNT", "1"))


def test_bounded_loops_under_grad():
    """Bounded loops differentiated by grad agree with the masked-scan reference
    (one program here, as each compiles a dozen ways; ``python -m tests.fuzz.run
    --kind bounded_grad`` runs many)."""
    from tests.fuzz import bounded_grad

    programs, mismatches = bounded_grad.fuzz(0, BOUNDED_COUNT, jacfwd_every=1)
    assert len(programs) == BOUNDED_COUNT
    silent = [m for m in mismatches if m.silent]
    assert not silent, _report(silent)


@pytest.mark.slow
def test_bounded_loops_under_grad_long(request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("the long profile runs with -m slow (or python -m tests.fuzz.run)")
    from tests.fuzz import bounded_grad

    count = int(os.environ.get("AUTOGRAPH_FUZZ_BOUNDED_COUNT", "100"))
    _, mismatches = bounded_grad.fuzz(1000, count)
    silent = [m for m in mismatches if m.silent]
    assert not silent, _report(silent)


def test_every_probed_feature_is_fuzzed(features):
    """A probe that fails drops its feature from the fast profile silently: every
    feature with a probe must stay in."""
    assert {"jumps", "logic", "directives", "scopes", "generators", "match", "loops", "names",
            "values", "exits", "try", "recursion", "dtype"} <= features


def test_dead_feature_is_fuzzed(features):
    """Issue 26.8/26.10's generators (tests/fuzz/dead_programs.py) stay in."""
    assert "dead" in features


def test_generator_is_deterministic():
    from tests.fuzz.program_generator import ProgramGenerator

    all_features = {"jumps", "logic", "values", "exits", "try", "recursion", "dtype"}
    for chosen in ({"jumps", "logic"}, all_features):
        first = ProgramGenerator(42, chosen).function("f")
        assert ProgramGenerator(42, chosen).function("f") == first
        compile(first, "<fuzz>", "exec")


def test_validation_rejects_int32_overflow():
    source = "def f(a, b, n):\n    x = 40000\n    x = x * 50000\n    return x\n"
    program = harness.Program(0, "f", source)
    assert not harness.is_valid(program, [(1, 2, 3)])


def test_jaxpr_evaluator_matches_xla():
    import jax
    import jax.numpy as jnp
    import numpy as np

    from tests.fuzz import jaxpr_eval

    def fn(x, n):
        y = jax.lax.fori_loop(0, n, lambda i, c: c + i * 3 - 1, x)
        z = jax.lax.cond(y % 2 == 0, lambda v: v // 2, lambda v: -v % 7, y)
        return jnp.where(z > 3, z, -z), jax.lax.rem(-7, 3) + x // -2

    for x, n in [(5, 3), (-4, 0), (7, 6)]:
        closed = jax.make_jaxpr(fn)(x, n)
        expected = jax.jit(fn)(x, n)
        got = jaxpr_eval.evaluate(closed, x, n)
        for e, g in zip(expected, got, strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    batched = jax.vmap(fn)
    xs, ns = jnp.arange(-3, 5), jnp.arange(8) % 5
    closed = jax.make_jaxpr(batched)(xs, ns)
    for e, g in zip(jax.jit(batched)(xs, ns), jaxpr_eval.evaluate(closed, xs, ns),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
