"""Run generated programs four ways and report where they disagree.

For each program ``f(a, b, n)`` and a few input triples:

1. ``f(*args)`` in Python: the oracle;
2. ``autograph.convert(f)(*args)`` with Python values: identical values *and* types;
3. traced: every argument a tracer (as under ``jax.jit``); equal values, int
   results integer-typed, float results floating;
4. ``jax.vmap(convert(f))`` and ``jax.vmap(jax.jit(convert(f)))`` over a batch of
   argument triples: equal to the oracle applied to each.

XLA compilation costs about a second per program here, tracing a tenth of that, so
3 and 4 trace the program to a jaxpr and evaluate it with ``jaxpr_eval`` (control
flow in Python, each op by XLA); every ``compile_every``-th program is also run
through ``autograph.to_graph`` and ``jax.jit(jax.vmap(...))``, compiled whole.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import operator
import random
import sys
import tempfile
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import autograph
from autograph import api as autograph_api
from tests.fuzz import jaxpr_eval, silent_programs
from tests.fuzz.program_generator import PRELUDE, ProgramGenerator, validation_source

BATCH = 8

# Failures already recorded as xfail(strict=True) in test_regressions.py, by a
# signature of their traceback: reported apart, so the fast profile stays a test of
# what is new.
# None at present (test_return_in_while_in_if_in_traced_loop passes, and the
# function its signature named is gone).
KNOWN_FAILURES: dict = {}


@dataclass
class Program:
    seed: int
    name: str
    source: str
    fn: object = None
    kinds: frozenset = frozenset()   # the generator kinds it uses (issue 16's, counted)


@dataclass
class Mismatch:
    program: Program
    mode: str   # "convert", "traced", "vmap", "compiled"; "rejected ...": ConversionError

    @property
    def silent(self):
        """A wrong value or an internal error, rather than a ConversionError."""
        return not self.mode.startswith("rejected")

    @property
    def known(self):
        """The xfail regression test that already records this failure, if any."""
        for signature, test in KNOWN_FAILURES.items():
            if signature in self.detail:
                return test
        return None
    args: tuple
    detail: str

    def __str__(self):
        return (f"--- seed {self.program.seed} ({self.mode}, args {self.args}): {self.detail}\n"
                f"{self.program.source}")


def detect_features() -> frozenset:
    """The syntax the converters on this checkout handle (break/return, and/or, nested
    generators and coroutines, match statements)."""
    probes = {
        "jumps": "def probe(n):\n    for i in range(n):\n        if i > 2:\n"
                 "            break\n        if i == 1:\n            return i\n    return n\n",
        "logic": "def probe(n):\n    return n > 1 and not n > 3\n",
        "scopes": "def probe(n):\n    def h():\n        nonlocal n\n        n = 1\n"
                  "    class K:\n        v = n + 1\n    for i in range(n):\n"
                  "        n = K.v\n    return n\n",
        "directives": "def probe(n):\n    while n < 5:\n"
                      "        set_loop_options(maximum_iterations=9)\n        n += 1\n"
                      "    return n\n",
        "generators": "def probe(n):\n    def gen(k):\n        for i in range(k):\n"
                      "            yield i * n\n    return sum(gen(3))\n",
        "match": "def probe(n):\n    m = 2\n    match m:\n        case 2:\n"
                 "            if n > 1:\n                return n\n    return -n\n",
        "loops": "def probe(n):\n    v = jnp.zeros(1) + n\n    out = []\n"
                 "    for i in range(3):\n        v = jnp.concatenate([v, v[-1:] + i])\n"
                 "        out.append(v[i:i + 2])\n    return jnp.stack(out)\n",
        # Issue 16: the probe's value under jit must be Python's.
        "values": "def probe(n):\n    return (n - 2 or 5) + (n > 1 and n)\n",
        "exits": "def probe(n):\n    p = 1\n    if p > 0:\n        if n > 1:\n"
                 "            return n\n        return -n\n    return n.missing\n",
        "try": "def probe(n):\n    for i in range(3):\n        try:\n"
               "            return n\n        finally:\n            break\n    return n + 1\n",
        "dtype": "def probe(n):\n    h = 0\n    for i in range(n):\n"
                 "        h = h + 0.5\n    return h * 2\n",
        "recursion": "def probe(n):\n    def rec(v, d):\n        if d <= 0:\n"
                     "            return v\n        if v > 1:\n"
                     "            return rec(v - 1, d - 1) + 1\n"
                     "        return rec(v + 2, d - 1)\n    return rec(n, 3)\n",
        "names": "def probe(n):\n    x = 0\n    rd = lambda: x\n    def bump():\n"
                 "        nonlocal x\n        x += 1\n    s = 0\n"
                 "    while (k := s) < n:\n        bump()\n        s = s + rd() + k\n"
                 "    return s\n",
        "dead": "def probe(n):\n    t = n\n    if n > 5:\n        return t\n"
                "    t = (t, t + 1)\n    w: int = t[1]\n    f = lambda: w\n    return f()\n",
    }
    probes.update(silent_programs.PROBES)   # issue 26's kinds
    found = set()
    with tempfile.TemporaryDirectory() as tmp:
        for feature, source in probes.items():
            module = _load_module(Path(tmp) / f"probe_{feature}.py",
                                  _prelude([feature]) + source)
            try:
                got = jax.jit(autograph.convert(module.probe))(2)
                if not np.array_equal(got, module.probe(2)):
                    continue
            except Exception:  # noqa: BLE001 - a missing feature fails in any way
                continue
            found.add(feature)
    return frozenset(found)


def generate(first_seed: int, count: int, features) -> list[Program]:
    """``count`` valid programs (see ``is_valid``), from consecutive seeds."""
    programs = []
    seed = first_seed
    while len(programs) < count:
        name = f"f_{seed}"
        generator = ProgramGenerator(seed, features)
        source = generator.function(name)
        program = Program(seed, name, source, kinds=frozenset(generator.kinds) | frozenset(
            kind for kind, count in generator.name_kinds.items() if count))
        if is_valid(program, inputs_for(seed)[0]):
            programs.append(program)
        seed += 1
    return programs


def inputs_for(seed):
    """Scalar argument triples and one batch for program ``seed``."""
    rng = random.Random(seed * 7919 + 1)

    def triple():
        return (rng.randint(-8, 9), rng.randint(-8, 9), rng.randint(0, 5))

    scalars = [triple() for _ in range(3)]
    batch = [triple() for _ in range(BATCH)]
    return scalars + batch, scalars, batch


def is_valid(program: Program, all_inputs) -> bool:
    """Whether the program computes the same in numpy int32/float32 with every
    overflow raising: then int32/float32 under JAX cannot change its results."""
    namespace = {"set_loop_options": autograph.set_loop_options, "jnp": jnp, "np": np,
                 "operator": operator, "random": random, "collections": collections,
                 "contextlib": contextlib, "types": types, "autograph": autograph,
                 "jax": jax}
    exec(silent_programs.GLOBAL_OBJECT_PRELUDE, namespace)
    exec(compile(program.source, "<fuzz>", "exec"), namespace)
    check = {"_I": np.int32, "_F": np.float32, **namespace}
    exec(compile(validation_source(program.source), "<fuzz-validate>", "exec"), check)
    plain, narrow = namespace[program.name], check[program.name]
    for args in all_inputs:
        try:
            expected = plain(*args)
            with np.errstate(all="raise"):
                got = narrow(*(np.int32(v) for v in args))
        except (FloatingPointError, ZeroDivisionError, OverflowError):
            return False
        leaves_e, leaves_g = _leaves(expected), _leaves(got)
        if len(leaves_e) != len(leaves_g):
            return False
        for e, g in zip(leaves_e, leaves_g, strict=True):
            if float(e) != float(g) or abs(float(e)) >= 2 ** 20:
                return False
    return True


def load(programs: list[Program], directory) -> None:
    """Write the programs to one module in ``directory`` and bind ``program.fn``."""
    path = Path(directory) / f"fuzz_programs_{programs[0].seed}.py"
    module = _load_module(path, _prelude(PRELUDE) + "\n\n".join(p.source for p in programs))
    for p in programs:
        p.fn = getattr(module, p.name)
    return module


def _prelude(features) -> str:
    """The imports that programs using ``features`` need, as the first lines of a module."""
    return "".join(PRELUDE[f] + "\n\n\n" for f in features if f in PRELUDE)


def _load_module(path: Path, source: str):
    path.write_text(source)
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def check_program(p: Program, compile_xla: bool = False) -> list[Mismatch]:
    """All ways for one program: Python values, traced (the jaxpr evaluated without
    compiling, see ``jaxpr_eval``), ``vmap``; with ``compile_xla`` also compiled by
    XLA through ``autograph.to_graph`` and ``jax.jit(jax.vmap(...))``."""
    mismatches = _check_python(p)
    for mode, check in [("traced", _check_traced), ("compiled", _check_xla)]:
        if mode == "compiled" and not compile_xla:
            continue
        try:
            mismatches.extend(check(p))
        except autograph.ConversionError:   # loud, with the user's line: a refusal
            mismatches.append(Mismatch(p, "rejected " + mode, (), _short_traceback()))
        except Exception:  # noqa: BLE001 - an error where Python returned is a mismatch
            mismatches.append(Mismatch(p, mode, (), _short_traceback()))
    return mismatches


def _operators(fn):
    """``fn``'s converted code itself (no Python twin), bound as ``fn`` is."""
    if isinstance(fn, types.MethodType):
        return types.MethodType(autograph_api._TRANSPILER.convert(fn.__func__), fn.__self__)
    return autograph_api._TRANSPILER.convert(fn)


def _check_python(p: Program) -> list[Mismatch]:
    # With Python values `convert` runs the program's Python twin; the converted code
    # itself (its operators' Python paths) is checked too.
    try:
        variants = [("convert", autograph.convert(p.fn)), ("operators", _operators(p.fn))]
    except Exception:  # noqa: BLE001 - a conversion that fails outright is a mismatch too
        return [Mismatch(p, "convert", (), _short_traceback())]
    _, scalars, batch = inputs_for(p.seed)
    out = []
    for args in scalars + batch[:2]:
        expected = p.fn(*args)
        for mode, converted in variants:
            try:
                got = converted(*args)
            except Exception:  # noqa: BLE001
                out.append(Mismatch(p, mode, args, _short_traceback()))
                continue
            problem = _same_python(expected, got)
            if problem:
                out.append(Mismatch(p, mode, args, problem))
    return out


def _batch_arrays(batch):
    return tuple(jnp.asarray(col, jnp.int32) for col in zip(*batch, strict=True))


def _check_traced(p: Program) -> list[Mismatch]:
    converted = autograph.convert(p.fn)
    _, scalars, batch = inputs_for(p.seed)
    out = []
    closed, shape = jax.make_jaxpr(converted, return_shape=True)(*scalars[0])
    treedef = jax.tree_util.tree_structure(shape)
    for args in scalars:
        got = jax.tree_util.tree_unflatten(treedef, jaxpr_eval.evaluate(closed, *args))
        out.extend(_compare(p, "traced", args, p.fn(*args), got))
    arrays = _batch_arrays(batch)
    # vmap of jit batches the ifs traced without vmap (batched_select's custom_vmap rule)
    for mode, batched in (("vmap", jax.vmap(converted)),
                          ("vmap of jit", jax.vmap(jax.jit(converted)))):
        closed, shape = jax.make_jaxpr(batched, return_shape=True)(*arrays)
        treedef = jax.tree_util.tree_structure(shape)
        got = jax.tree_util.tree_unflatten(treedef, jaxpr_eval.evaluate(closed, *arrays))
        out.extend(_compare_batch(p, batch, got, mode))
    return out


def _check_xla(p: Program) -> list[Mismatch]:
    _, scalars, batch = inputs_for(p.seed)
    graph = autograph.to_graph(p.fn)
    out = []
    for args in scalars:
        out.extend(_compare(p, "compiled", args, p.fn(*args), graph(*args)))
    batched = jax.jit(jax.vmap(autograph.convert(p.fn)))(*_batch_arrays(batch))
    out.extend(_compare_batch(p, batch, batched, "compiled vmap"))
    return out


def _compare_batch(p, batch, got, mode):
    expected = [p.fn(*args) for args in batch]
    out = []
    for i, args in enumerate(batch):
        one = jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], got)
        out.extend(_compare(p, mode, args, expected[i], one))
        if out:
            break
    return out


def _compare(p, mode, args, expected, got) -> list[Mismatch]:
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected)
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    if exp_tree != got_tree:
        return [Mismatch(p, mode, args, f"structure {got_tree} != {exp_tree}")]
    for e, g in zip(exp_leaves, got_leaves, strict=True):
        g = np.asarray(g)
        # (a NumPy integer counts as one: silent_numpy_writes reads array items; so
        # does an integer JAX array: silent_strong_join adds one)
        integral = isinstance(e, (int, np.integer)) or (
            isinstance(e, jax.Array) and np.issubdtype(e.dtype, np.integer))
        kind_ok = (np.issubdtype(g.dtype, np.integer) if integral
                   else np.issubdtype(g.dtype, np.floating))
        if not kind_ok:
            return [Mismatch(p, mode, args, f"dtype {g.dtype} for Python {type(e).__name__}"
                             f" ({expected!r} vs {got!r})")]
        # float32 rounding: a float result may differ in its last bits
        tol = 0.0 if integral else 1e-5 * max(1.0, abs(float(e)))
        if g.shape != () or abs(float(g) - float(e)) > tol:
            return [Mismatch(p, mode, args, f"got {_plain(got)}, Python gives {expected!r}")]
    return []


def _same_python(expected, got):
    if type(expected) is not type(got):
        return f"type {type(got).__name__} != {type(expected).__name__} ({got!r} vs {expected!r})"
    if isinstance(expected, (tuple, list)):
        if len(expected) != len(got):
            return f"{got!r} != {expected!r}"
        for e, g in zip(expected, got, strict=True):
            problem = _same_python(e, g)
            if problem:
                return f"{problem} in {got!r} vs {expected!r}"
        return None
    return None if expected == got else f"{got!r} != {expected!r}"


def _plain(tree):
    return jax.tree_util.tree_map(lambda leaf: np.asarray(leaf).tolist(), tree)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _short_traceback():
    lines = traceback.format_exc().strip().splitlines()
    return "\n".join(lines[-6:])


def fuzz(first_seed: int, count: int, compile_every: int = 10, features=None,
         progress=None, chunk: int = 50) -> tuple[list[Program], list[Mismatch]]:
    """Generate ``count`` programs from ``first_seed`` on and check them all; every
    ``compile_every``-th one (0: none) is also compiled whole by XLA."""
    features = detect_features() if features is None else features
    programs = generate(first_seed, count, features)
    mismatches = []
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, len(programs), chunk):
            group = programs[start:start + chunk]
            module = load(group, tmp)
            for k, p in enumerate(group, start):
                mismatches.extend(check_program(
                    p, compile_xla=bool(compile_every) and k % compile_every == 0))
                if progress is not None:
                    progress(k + 1, mismatches)
            sys.modules.pop(module.__name__, None)
            for p in group:
                p.fn = None          # let the module and its conversions go
    return programs, mismatches
