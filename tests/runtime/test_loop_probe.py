"""The one abstract probe of a staged loop's body (runtime/loop_probe.py).

A loop that binds a variable first and grows a list probes its body once for both,
and a probed loop whose weakly typed start promotes enters with the promoted start:
the body runs twice (probe, trace) while the loop is staged, never three times. The
values, dtypes and weak types the loop gives are those of ``jax.jit`` of the
original, for Python int, float and bool starts, weak and strong arrays (x64 off).
"""

from __future__ import annotations

import importlib.util
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from tests.runtime.test_trace_counts import RUNS

# Each form is made fresh for each start and step (jax.jit caches a function's trace,
# so a global the function reads would not be read again).
FORMS = {
    "first_binding": """
def loop(x, s):
    p = {start} if s is None else s
    for i in range(3):
        tick("body")
        t = x * i
        p = {step}
    return t, p
""",
    "grown_list": """
def loop(x, s):
    out = []
    p = {start} if s is None else s
    for i in range(3):
        tick("body")
        out.append(x * i)
        p = {step}
    return out[-1], p
""",
    "first_binding_and_grown_list": """
def loop(x, s):
    out = []
    p = {start} if s is None else s
    for i in range(3):
        tick("body")
        t = x * i
        out.append(t * 2)
        p = {step}
    return t, out[-1], p
""",
    # (jax.jit of the original refuses the traced `while`: counted only)
    "early_return": """
def loop(x, s):
    i = 0
    p = {start} if s is None else s
    while i < x:
        tick("body")
        p = {step}
        if i > 1:
            return p
        i += 1
    return p
""",
}
STARTS = {"int": "0", "float": "1.5", "bool": "True", "int32": "np.int32(2)",
          "float32": "np.float32(0.5)"}
STEPS = {"+0.5": "p + 0.5", "+1": "p + 1", "+float16": "p + jnp.float16(1)",
         "+int8": "p + jnp.int8(1)", "*2": "p * 2"}
PRELUDE = """import jax.numpy as jnp
import numpy as np
from tests.runtime.test_trace_counts import tick
"""


@pytest.fixture
def make(tmp_path):
    made = itertools.count()

    def make(form, start="0", step="p + 0.5"):
        name = f"loop_probe_case_{next(made)}"
        path = tmp_path / f"{name}.py"
        path.write_text(PRELUDE + FORMS[form].format(start=start, step=step))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.loop

    return make


def _types(tree):
    return [(jax.typeof(v).dtype, jax.typeof(v).weak_type, np.asarray(v).item())
            for v in jax.tree.leaves(tree)]


def _outcome(compiled, *args):
    try:
        return _types(compiled(*args))
    except Exception as error:  # noqa: BLE001 - compared with the original's
        return type(error)


def _same(got, expected) -> bool:
    """The same values, dtypes and weak types: a weakly typed start that one iteration
    turns into a weak value of another dtype (``p = 0; p = p + 0.5`` under a weak
    tracer) stays weak, as Python's unrolled value does."""
    return got == expected


JITTED = [f for f in FORMS if f != "early_return"]


@pytest.mark.parametrize("form,start,step", list(itertools.product(JITTED, STARTS, STEPS)))
def test_a_probed_loop_gives_the_types_jit_of_the_original_gives(form, start, step, make):
    x = jnp.int32(3)
    expected = _outcome(jax.jit(make(form, STARTS[start], STEPS[step])), x, None)
    assert _same(_outcome(autograph.to_graph(make(form, STARTS[start], STEPS[step])), x,
                          None), expected)
    assert _same(_outcome(jax.jit(autograph.convert(make(form, STARTS[start],
                                                         STEPS[step]))), x, None), expected)


@pytest.mark.parametrize("form,step", list(itertools.product(JITTED, STEPS)))
@pytest.mark.parametrize("start", [0, 1.5])
def test_a_weak_traced_start_gives_the_types_jit_gives(form, step, start, make):
    # A Python scalar argument of jax.jit is a weakly typed tracer.
    x = jnp.int32(3)
    expected = _outcome(jax.jit(make(form, step=STEPS[step])), x, start)
    assert _same(_outcome(autograph.to_graph(make(form, step=STEPS[step])), x, start),
                 expected)
    assert _same(_outcome(jax.jit(autograph.convert(make(form, step=STEPS[step]))), x,
                          start), expected)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("start,step", [("int", "+0.5"), ("float", "+float16"),
                                        ("int", "+int8")])
def test_a_probed_loop_whose_start_promotes_runs_its_body_twice(form, start, step, make):
    fn = autograph.convert(make(form, STARTS[start], STEPS[step]))
    RUNS.clear()
    jax.make_jaxpr(fn)(jnp.int32(3), None)
    assert RUNS["body"] == 2, dict(RUNS)   # one probe, one trace (was 3, 4 with both)


def test_the_list_probe_keeps_a_python_start_weak():
    # The probe of a grown list saw a Python int start as a strong int32, so an element
    # made from it (0 + jnp.int8(1): int8 in Python and under jit) was stored as int32.
    def f(x):
        out = []
        p = 0
        for _ in range(3):
            out.append(p + jnp.int8(1))
            p = p + 1
        return out[-1], p

    expected = _types(jax.jit(f)(jnp.int32(2)))
    assert _types(autograph.to_graph(f)(jnp.int32(2))) == expected
    assert expected[0][0] == jnp.int8
