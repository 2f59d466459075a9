"""Fuzzing bounded loops under ``grad``: random float programs, differentiated two ways.

    python -m tests.fuzz.run --kind bounded_grad --count 200

Every program has the signature ``(x, w, n)``: ``x`` and ``w`` float scalars, ``n`` a
small non-negative int, traced. Its loops are ``while`` loops with
``set_loop_options(maximum_iterations=B)`` (a counter against a traced or constant
limit, sometimes also a float test, sometimes a ``break``) or, with a float test
and a constant limit, no option at all (the bound derived from the counter,
``converters/loop_bounds.py``), ``for`` loops over a
traced ``range`` with a bound, nested in each other and in ``if``/``else``, over
smooth float updates; some grow a list in a bounded loop. Bounds are drawn both
above and below the trip counts, so that loops stop on their condition, at their
bound, and after zero iterations.

Each program is compiled and run two ways, with ``autograph/runtime/bounded_loops.py`` and
with the masked scans the runtime used before (``tests/bounded_reference.py``):
its value, ``jax.grad`` with respect to ``x`` and ``w``, and ``jax.vmap`` of that
gradient over a batch of ``x`` must agree (a program both forms refuse with a
``ConversionError`` is counted apart, as "rejected": loud, and no question of how
the loop is staged); every ``jacfwd_every``-th program also
compares forward mode (``jax.jacfwd``), with the reference's forward mode.
"""

from __future__ import annotations

import random
import sys
import tempfile
import traceback
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import autograph
from tests.bounded_reference import masked_scan_reference
from tests.fuzz.harness import Mismatch, Program, _load_module
from tests.fuzz.program_generator import _indent_all

BOUNDS = (1, 2, 3, 5, 8, 13, 17, 40)
FLOATS = ("x", "y", "z")


class BoundedLoopGenerator:
    """Random float programs whose loops are bounded (seeded, reproducible)."""

    def __init__(self, seed: int, max_depth: int = 2):
        self.rng = random.Random(seed)
        self.max_depth = max_depth

    def function(self, name: str) -> str:
        r = self.rng
        self._counters = 0
        self._lists = r.random() < 0.3
        body = ["y = x * 0.5 + w", "z = 0.0"]
        if self._lists:
            body.append("values = [x]")
        for _ in range(r.randint(1, 2)):
            body.extend(self._loop(depth=0))
        result = "x * 0.3 + y + z * w"
        if self._lists:
            result += " + jnp.sum(stack(values)) * 0.1"
        body = _indent_all(body) + [f"return {result}"]
        return "\n".join([f"def {name}(x, w, n):", *("    " + line for line in body)]) + "\n"

    def _loop(self, depth):
        return self.rng.choice([self._while, self._while, self._range])(depth)

    def _while(self, depth):
        r = self.rng
        self._counters += 1
        counter = f"k{self._counters}"
        limit = r.choice(["n", "n + 2", str(r.randint(0, 6)), "n * 3"])
        test = f"{counter} < {limit}"
        options = [f"set_loop_options(maximum_iterations={r.choice(BOUNDS)})"]
        if r.random() < 0.3:   # the bound derived from the counter's limit
            test = f"{r.choice(FLOATS)} < {self._const(1.0, 4.0)} and {counter} < " \
                   f"{r.randint(0, 9)}"
            options = []
        elif r.random() < 0.35:
            test += f" and {r.choice(FLOATS)} < {self._const(1.0, 4.0)}"
        body = [*options, f"{counter} += 1", *self._body(depth + 1)]
        return [f"{counter} = 0", f"while {test}:", body]

    def _range(self, depth):
        r = self.rng
        self._counters += 1
        index = f"i{self._counters}"
        rng = r.choice(["range(n)", "range(1, n + 1)", "range(n, 0, -1)"])
        body = [f"set_loop_options(maximum_iterations={r.choice(BOUNDS)})",
                f"z = z + 0.1 * {index} * jnp.tanh(y)", *self._body(depth + 1)]
        return [f"for {index} in {rng}:", body]

    def _body(self, depth):
        r = self.rng
        out = []
        for _ in range(r.randint(1, 3)):
            out.extend(self._statement(depth))
        if r.random() < 0.2:
            out += [f"if {r.choice(FLOATS)} > {self._const(0.5, 3.0)}:", ["break"]]
        return out

    def _statement(self, depth):
        r = self.rng
        kind = r.random()
        if depth < self.max_depth and kind < 0.2:
            return self._loop(depth)
        if kind < 0.35:
            var = r.choice(FLOATS)
            return [f"if {var} > {self._const(-1.0, 2.0)}:", self._update(),
                    "else:", self._update()]
        if self._lists and kind < 0.45:
            return [f"values.append(jnp.sin({r.choice(FLOATS)}) * w)"]
        return self._update()

    def _update(self):
        r = self.rng
        var, other = r.choice(FLOATS), r.choice(FLOATS)
        fn = r.choice(["jnp.sin", "jnp.cos", "jnp.tanh"])
        scale = r.choice(["0.9", "1.05", "0.5", "-0.7"])
        return [r.choice([
            f"{var} = {var} * {scale} + {fn}(w * {other}) * 0.3",
            f"{var} = {var} + {fn}({other}) * w * 0.2",
            f"{var} = {fn}({var} + {other}) + 0.1 * w",
            f"{var} = {var} * {fn}({other}) + {self._const(-0.5, 0.5)}",
        ])]

    def _const(self, low, high):
        return repr(round(self.rng.uniform(low, high), 2))


def generate(first_seed: int, count: int) -> list[Program]:
    """``count`` programs from consecutive seeds."""
    return [Program(seed, f"g_{seed}", BoundedLoopGenerator(seed).function(f"g_{seed}"))
            for seed in range(first_seed, first_seed + count)]


def inputs_for(seed):
    """``(x, w, n)`` triples and a batch of ``x`` for program ``seed``."""
    rng = random.Random(seed * 104729 + 3)
    triples = [(jnp.float32(round(rng.uniform(-1.5, 1.5), 3)),
                jnp.float32(round(rng.uniform(-1.0, 1.2), 3)),
                jnp.int32(rng.randint(0, 6))) for _ in range(2)]
    batch = jnp.asarray([round(rng.uniform(-1.5, 1.5), 3) for _ in range(4)], jnp.float32)
    return triples, batch


def load(programs: list[Program], directory):
    """Write the programs to one module in ``directory`` and bind ``program.fn``."""
    header = "import jax.numpy as jnp\nfrom autograph import set_loop_options, stack\n\n\n"
    module = _load_module(Path(directory) / f"bounded_programs_{programs[0].seed}.py",
                          header + "\n\n".join(p.source for p in programs))
    for p in programs:
        p.fn = getattr(module, p.name)
    return module


def _both(fn, transform):
    """``transform(convert(fn))``: ours, and one staging bounded loops as masked scans
    (each traced when first called)."""
    ours = transform(autograph.convert(fn))
    reference = transform(autograph.convert(fn))

    def run(*args):
        try:
            got = jax.block_until_ready(ours(*args))
        except autograph.ConversionError as refusal:
            with masked_scan_reference():
                try:
                    reference(*args)
                except autograph.ConversionError:
                    raise _Refused(refusal) from None
            raise
        with masked_scan_reference():
            expected = jax.block_until_ready(reference(*args))
        return got, expected

    return run


class _Refused(Exception):
    """Both forms refuse the program with the same kind of ``ConversionError``: loud,
    and not a question of how the bounded loop is staged."""


def check_program(p: Program, jacfwd: bool = False) -> list[Mismatch]:
    """Value, ``grad`` and ``vmap(grad)`` agree with the masked-scan reference."""
    triples, batch = inputs_for(p.seed)
    checks = {"value": _both(p.fn, jax.jit),
              "grad": _both(p.fn, lambda f: jax.jit(jax.grad(f, (0, 1))))}
    if jacfwd:
        checks["jacfwd"] = _both(p.fn, lambda f: jax.jit(jax.jacfwd(f, (0, 1))))
    out = []
    try:
        for args in triples:
            for mode, run in checks.items():
                problem = _differ(*reversed(run(*args)))
                if problem:
                    out.append(Mismatch(p, mode, args, problem))
        _, w, n = triples[0]
        batched = _both(p.fn, lambda f: jax.jit(jax.vmap(jax.grad(f), (0, None, None))))
        problem = _differ(*reversed(batched(batch, w, n)))
        if problem:
            out.append(Mismatch(p, "vmap grad", (batch, w, n), problem))
    except _Refused as refused:
        out.append(Mismatch(p, "rejected by both forms", (), str(refused.args[0])))
    except Exception:  # noqa: BLE001 - an error is a mismatch, with its traceback
        lines = traceback.format_exc().strip().splitlines()
        out.append(Mismatch(p, "error", (), "\n".join(lines[-8:])))
    return out


def _differ(expected, got, rtol=1e-4, atol=1e-5):
    exp, got = jax.tree_util.tree_leaves(expected), jax.tree_util.tree_leaves(got)
    for e, g in zip(exp, got, strict=True):
        e, g = np.asarray(e, np.float64), np.asarray(g, np.float64)
        if not np.allclose(g, e, rtol=rtol, atol=atol * max(1.0, np.max(np.abs(e))),
                           equal_nan=True):
            return f"got {g.tolist()}, the masked scan gives {e.tolist()}"
    return None


def fuzz(first_seed: int, count: int, jacfwd_every: int = 5, progress=None):
    """Generate ``count`` programs and check each; returns (programs, mismatches)."""
    programs = generate(first_seed, count)
    mismatches = []
    with tempfile.TemporaryDirectory() as tmp:
        module = load(programs, tmp)
        for k, p in enumerate(programs):
            mismatches.extend(check_program(p, jacfwd=bool(jacfwd_every)
                                            and k % jacfwd_every == 0))
            if progress is not None:
                progress(k + 1, mismatches)
        sys.modules.pop(module.__name__, None)
    return programs, mismatches
