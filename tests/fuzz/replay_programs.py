"""Fuzzing the replay: bounded loops carrying floats, whose bodies hold effects.

    python -m tests.fuzz.run --kind replay --count 200

A bounded loop that carries a float is traced a second time for its derivatives
(``paths.replaying()``, ``runtime/bounded_loops.py``). Whatever the body does to
the world must happen as in Python, once per iteration that runs, neither repeated
by that second trace nor lost to it, and nothing may be raised while tracing that
Python raises only for some inputs (fuzz seed 172: a decided ``raise`` in such a
body raised while replaying, for every input).

Each program is ``f(b, g, n)``: ``b`` and ``g`` floats, ``n`` a small int. Its
loops are ``while j < C`` over a float (``set_loop_options(maximum_iterations=B)``
or a bound derived from an int counter in the test) or ``for i in range(n)`` with a
bound, always above the trip count (the directive stops a loop at its bound, which
Python does not); ``w`` carries a float that depends on ``g``. Bodies hold the
effects of ``EFFECTS``: a raise decided in Python, a raise on a traced value,
``assert`` (decided and traced), ``print`` (its text and how often), list appends,
a Python-int counter, an early ``return``, a ``break`` or ``continue`` and a nested
bounded loop.

Run as Python with scalars (the reference), and compiled: ``to_graph``,
``jax.jit(to_graph(f))``, ``jax.vmap`` over ``b``, and ``jax.grad`` in ``g`` and
``vmap`` of it where Python returns (against central differences of the Python
function; a point where those disagree with themselves is a kink and skipped).
Values agree within float32 rounding, exceptions have Python's type and message,
printed text is Python's.
A ``ConversionError`` is a refusal (counted apart).
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from tests.fuzz.harness import _load_module
from tests.fuzz.idiom_programs import _indent

EFFECTS = ("decided_raise", "traced_raise", "assert", "print", "append", "counter",
           "return", "break", "nested")
HEADER = ("import math\n\nimport jax.numpy as jnp\n\n"
          "from autograph import set_loop_options, stack\n\n\n")


@dataclass
class ReplayProgram:
    seed: int
    name: str
    source: str
    effects: frozenset
    fn: object = field(default=None, repr=False)


class ReplayGenerator:
    """Random programs of one seed (reproducible)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.effects = set()
        self._loops = 0

    def function(self, name: str) -> str:
        r = self.rng
        self._lists = r.random() < 0.35
        body = ["w = 0.0", f"k = {r.randint(-2, 2)}", "t = 0", "j = b"]
        if self._lists:
            body.append("values = [g]")
        body += self._loop(depth=0)
        if r.random() < 0.3:
            body += [f"w = w * {self._const(0.5, 1.5)} + g"]
        result = "w + t * 0.25 + j * 0.1"
        if self._lists:
            result += " + jnp.sum(stack(values)) * 0.1 + len(values)"
        body.append(f"return {result}")
        return f"def {name}(b, g, n):\n" + _indent(body, 1)

    def _loop(self, depth):
        self._loops += 1
        kind = self.rng.choice(["float_while", "float_while", "derived", "range"])
        return getattr(self, "_" + kind)(depth)

    def _float_while(self, depth):
        # seed 172's shape: a float against a constant, a bound above the trips
        var = "j" if depth == 0 else f"q{self._loops}"
        start = [] if depth == 0 else [f"{var} = j + {self._const(-3.0, 1.0)}"]
        limit = self._limit(-10.0, 2.0)
        body = [f"set_loop_options(maximum_iterations={self.rng.choice([20, 40])})",
                f"{var} += 1.0", *self._update(), *self._body(depth + 1)]
        return [*start, f"while {var} < {limit}:", body]

    def _derived(self, depth):
        counter = f"i{self._loops}"
        var = "j" if depth == 0 else f"q{self._loops}"
        start = [] if depth == 0 else [f"{var} = j"]
        test = f"{var} < {self._limit(-8.0, 2.0)} and {counter} < {self.rng.randint(1, 9)}"
        body = [f"{counter} += 1", f"{var} += 1.0", *self._update(), *self._body(depth + 1)]
        if any(["break"] in body[k:k + 2] or ["continue"] in body[k:k + 2]
               for k in range(len(body))):
            # no bound is derived from the test of a loop with a `break` (a refusal
            # under grad): given one
            body.insert(0, "set_loop_options(maximum_iterations=20)")
        return [*start, f"{counter} = 0", f"while {test}:", body]

    def _range(self, depth):
        index = f"i{self._loops}"
        body = [f"set_loop_options(maximum_iterations={self.rng.choice([6, 8])})",
                *self._update(index), *self._body(depth + 1)]
        return [f"for {index} in range({self.rng.choice(['n', 'n + 1', '1, n'])}):", body]

    def _update(self, index=None):
        r = self.rng
        step = r.choice(["g * 0.5", "g * g * 0.25 + 0.1", "math.sin(g) * 0.3 + 0.2",
                         "g + 0.05"])
        if index is not None and r.random() < 0.5:
            step += f" + {index} * 0.1"
        return [r.choice([f"w = w + {step}", f"w = w * 0.9 + {step}"])]

    def _body(self, depth):
        out = []
        for _ in range(self.rng.randint(1, 3)):
            out += self._effect(depth)
        return out

    def _effect(self, depth):
        r = self.rng
        choices = [e for e in EFFECTS if e != "nested" or depth < 2]
        if not self._lists:
            choices.remove("append")
        effect = r.choice(choices)
        self.effects.add(effect)
        k = r.randint(-2, 2)
        if effect == "decided_raise":
            return r.choice([
                [f"if k < {k}:", ["raise ValueError('reached')"]],
                [f"if k == {k}:", ["t += 1", "raise KeyError(k)"]],
                [f"if k > {k}:", ["raise ZeroDivisionError(f'k is {k}')"]],
            ])
        if effect == "traced_raise":
            return r.choice([
                [f"if w > {self._const(0.5, 6.0)}:", ["raise ValueError('w too large')"]],
                [f"if t > {r.randint(1, 6)}:", ["raise OverflowError(f't = {t}')"]],
            ])
        if effect == "assert":
            return r.choice([
                [f"assert w < {self._const(0.5, 8.0)}, 'w bound'"],
                [f"assert k != {k}, 'k bound'"],
                [f"assert t < {r.randint(2, 8)}"],
            ])
        if effect == "print":
            return r.choice([["print('tick')"], ["print('t =', t)"],
                             [f"if k < {k}:", ["print('decided', k)"]],
                             [f"if w > {self._const(0.0, 3.0)}:", ["print('big')"]]])
        if effect == "append":
            return r.choice([["values.append(w)"],
                             [f"if w > {self._const(0.0, 3.0)}:", ["values.append(g)"]]])
        if effect == "counter":
            return r.choice([["t += 1"], ["t = t + 2"], [f"if k < {k}:", ["t += 3"]]])
        if effect == "return":
            return [f"if w > {self._const(0.5, 5.0)}:", ["return w + t"]]
        if effect == "break":
            return r.choice([[f"if w > {self._const(0.5, 5.0)}:", ["break"]],
                             [f"if k > {k}:", ["break"]],
                             [f"if w < {self._const(0.0, 2.0)}:", ["continue"]]])
        return self._loop(depth)

    def _limit(self, low, high):
        # a float's limit half a step of b's two decimals away from b + k: float32's
        # rounding of b + k (Python's is float64) never decides the test
        return f"{round(self.rng.uniform(low, high), 2) + 0.005:.3f}"

    def _const(self, low, high):
        return repr(round(self.rng.uniform(low, high), 2))


def generate(seed: int) -> ReplayProgram:
    gen = ReplayGenerator(seed)
    name = f"replay_{seed}"
    source = gen.function(name)
    return ReplayProgram(seed, name, source, frozenset(gen.effects))


def inputs_for(seed):
    """``(b, g, n)`` triples: ``b`` low enough for the float loops to run a few times
    (and sometimes not at all), and a batch of ``b`` for ``vmap``."""
    rng = random.Random(seed * 7919 + 1)
    triples = [(round(rng.uniform(-13.0, 1.0), 2), round(rng.uniform(-1.5, 1.5), 3),
                rng.randint(0, 5)) for _ in range(3)]
    batch = [round(rng.uniform(-13.0, 1.0), 2) for _ in range(4)]
    return triples, batch


def _run(call):
    """``('value', v, printed)`` or ``('raises', type, message, printed)``."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            value = call()
            jax.effects_barrier()
        return ("value", value, out.getvalue())
    except Exception as error:  # noqa: BLE001 - every outcome is compared
        with contextlib.suppress(Exception), contextlib.redirect_stdout(out):
            jax.effects_barrier()
        return ("raises", type(error), str(error), out.getvalue())


def _same_error(expected, got) -> bool:
    if got[1].__name__ == "JaxRuntimeError":
        # inside the user's jax.jit a staged check fails as JAX's error, carrying
        # Python's (README, "Asserts and checkify")
        return f"{expected[1].__name__}: {expected[2]}" in got[2]
    if expected[1] is AssertionError and issubclass(got[1], AssertionError):
        # a staged assert's message names the user's line after Python's
        return got[2] == expected[2] or got[2].startswith(
            f"{expected[2] or 'assertion failed'} [")
    return expected[1] is got[1] and expected[2] == got[2]


def _close(expected: float, got, tolerance=2e-4) -> bool:
    got = float(np.asarray(got))
    return math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance) or (
        math.isnan(expected) and math.isnan(got))


def _difference(python, staged, tolerance=2e-4) -> str | None:
    if staged[0] == "raises" and staged[1].__name__ == "ConversionError":
        return "refused: " + staged[2].splitlines()[0]
    if python[0] != staged[0]:
        return f"{staged[:3]!r} vs Python {python[:3]!r}"
    if python[0] == "raises" and not _same_error(python, staged):
        return f"{staged[1].__name__}({staged[2]!r}) vs Python " \
               f"{python[1].__name__}({python[2]!r})"
    if python[0] == "value" and not _close(python[1], staged[1], tolerance):
        return f"{float(np.asarray(staged[1]))} vs Python {python[1]}"
    if python[-1] != staged[-1]:
        return f"printed {staged[-1]!r} vs Python {python[-1]!r}"
    return None


def _finite_difference(fn, b, g, n):
    """d fn / d g by central differences, or None at a kink (two step sizes disagree)
    or where a nearby point raises."""
    try:
        # steps large beside float32's rounding (a list's sum is a float32 array)
        with contextlib.redirect_stdout(io.StringIO()):
            slopes = [float(fn(b, g + h, n) - fn(b, g - h, n)) / (2 * h)
                      for h in (1e-2, 1e-3)]
    except Exception:  # noqa: BLE001 - a raise nearby: no derivative to compare
        return None
    if not math.isclose(slopes[0], slopes[1], rel_tol=1e-2, abs_tol=1e-2):
        return None
    return slopes[1]


def check(program: ReplayProgram, autograph) -> list[tuple[str, str]]:
    """``(mode, problem)`` pairs where ``program`` compiled differs from Python
    (a mode ``'refused ...'`` for a ``ConversionError``)."""
    problems = []
    fn = program.fn
    compiled = autograph.to_graph(fn)
    jitted = jax.jit(autograph.to_graph(fn))
    grad = jax.grad(autograph.to_graph(fn), argnums=1)
    triples, batch = inputs_for(program.seed)

    def arrays(b, g, n):
        return jnp.float32(b), jnp.float32(g), jnp.int32(n)

    for args in triples:
        python = _run(lambda a=args: float(fn(*a)))
        for mode, call in [("to_graph", compiled), ("jit", jitted)]:
            staged = _run(lambda a=args, c=call: jax.block_until_ready(c(*arrays(*a))))
            problem = _difference(python, staged)
            if problem:
                problems.append((("refused " if problem.startswith("refused") else "")
                                 + mode, f"{args}: {problem}"))
        if python[0] != "value":
            continue
        staged = _run(lambda a=args: jax.block_until_ready(grad(*arrays(*a))))
        slope = _finite_difference(fn, *args)
        if staged[0] == "raises" or slope is not None:
            reference = ("value", 0.0 if slope is None else slope, python[-1])
            problem = _difference(reference, staged, tolerance=1e-2)
            if problem and not (staged[0] == "value" and slope is None):
                problems.append((("refused " if problem.startswith("refused") else "")
                                 + "grad", f"{args}: {problem}"))
    _, g, n = triples[0]
    expected = [_run(lambda b=b: float(fn(b, g, n))) for b in batch]
    problems += _check_vmap_grad(program, autograph, batch, g, n, expected)
    batched = jax.vmap(autograph.to_graph(fn), in_axes=(0, None, None))
    staged = _run(lambda: jax.block_until_ready(
        batched(jnp.asarray(batch, jnp.float32), jnp.float32(g), jnp.int32(n))))
    raised = [e for e in expected if e[0] == "raises"]
    if staged[0] == "raises" and staged[1].__name__ == "ConversionError":
        problems.append(("refused vmap", staged[2].splitlines()[0]))
    elif raised:
        if staged[0] != "raises" or not any(_same_error(e, staged) for e in raised):
            problems.append(("vmap", f"b={batch}: {staged[:3]!r} vs Python {expected!r}"))
    elif staged[0] == "raises" or not all(
            _close(e[1], v) for e, v in zip(expected, np.asarray(staged[1]), strict=True)):
        problems.append(("vmap", f"b={batch}: {staged[:3]!r} vs Python {expected!r}"))
    return problems


def _check_vmap_grad(program, autograph, batch, g, n, expected):
    """``vmap`` of ``grad`` in ``g`` over ``b`` against each example's central
    differences, where Python returns for every example and none is at a kink."""
    if any(e[0] != "value" for e in expected):
        return []
    slopes = [_finite_difference(program.fn, b, g, n) for b in batch]
    if any(s is None for s in slopes):
        return []
    run = jax.vmap(jax.grad(autograph.to_graph(program.fn), argnums=1), (0, None, None))
    staged = _run(lambda: jax.block_until_ready(
        run(jnp.asarray(batch, jnp.float32), jnp.float32(g), jnp.int32(n))))
    if staged[0] == "raises":
        refused = staged[1].__name__ == "ConversionError"
        return [(("refused " if refused else "") + "vmap grad",
                 f"b={batch}: {staged[:3]!r}")]
    if not all(_close(s, v, 1e-2) for s, v in zip(slopes, np.asarray(staged[1]),
                                                   strict=True)):
        return [("vmap grad", f"b={batch}: {staged[1]!r} vs differences {slopes}")]
    return []


def load(programs, directory):
    """Write the programs to one module in ``directory`` and bind ``program.fn``."""
    module = _load_module(Path(directory) / f"replay_programs_{programs[0].seed}.py",
                          HEADER + "\n\n".join(p.source for p in programs))
    for p in programs:
        p.fn = getattr(module, p.name)
    return module


def fuzz(first_seed: int, count: int, progress=None):
    """``(programs, mismatches, refusals)``, the last two as ``(program, mode, text)``."""
    import autograph

    programs = [generate(seed) for seed in range(first_seed, first_seed + count)]
    mismatches, refusals = [], []
    with tempfile.TemporaryDirectory(prefix="ag_replay_") as directory:
        module = load(programs, directory)
        for done, p in enumerate(programs, 1):
            try:
                found = check(p, autograph)
            except Exception as error:  # noqa: BLE001 - an internal error is a mismatch
                found = [("error", f"{type(error).__name__}: {error}")]
            for mode, text in found:
                (refusals if mode.startswith("refused") else mismatches).append(
                    (p, mode, text))
            if progress is not None:
                progress(done, mismatches)
        sys.modules.pop(module.__name__, None)
    return programs, mismatches, refusals


def by_effect(programs, found) -> dict:
    """For each effect: (programs holding it, how many of them are in ``found``)."""
    bad = {p.seed for p, _, _ in found}
    counts = collections.Counter()
    failing = collections.Counter()
    for p in programs:
        for effect in p.effects:
            counts[effect] += 1
            failing[effect] += p.seed in bad
    return {e: (counts[e], failing[e]) for e in EFFECTS}
