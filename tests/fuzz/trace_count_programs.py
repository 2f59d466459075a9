"""Random staged regions, each block counting its runs: the trace-count fuzz kind.

Each program has one staged ``if`` (its condition traced) or one loop, whose blocks
call ``tick(label)``; their values mix Python scalars that promote (``1`` and
``2.5``), arrays, variables unbound before the region, a return in one branch,
list item writes and appends, closure cells and an object's attribute; weakly
typed list elements (``lst.append(w * i)``, a Python-number first element), a weak
tracer reached through an attribute (``held.v``), a stream write's count, an exit
(``break`` on a traced test) before the body sets a Python-number start. Checked
for each program:

- one trace of the converted function runs each branch of an ``if`` exactly once
  (JAX's order: traced once to a jaxpr, reconciled, one ``cond``), and a loop body
  at most twice (one abstract probe, one trace: a loop that binds a variable
  first and grows a list probes both at once, and a weakly typed start that
  promotes is promoted from the probe, so JAX's loop does not trace it again);
- compiled (``to_graph``) gives the original's Python values where both branches
  are taken, or refuses with a ``ConversionError``;
- a loop over ``range(3)`` without an exit gives the dtypes and weak types
  ``jax.jit`` of the original gives (list elements read back included); where the
  loop has an exit, the type of what the body set (``m``) is the one the original
  gives it run eagerly on an array.

    python -m tests.fuzz.trace_count_programs [count] [seed] [--refusals]
        [--features=weak_list,weak_reach,write_count]   (loops with these only)
"""

from __future__ import annotations

import collections
import functools
import importlib.util
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import autograph
from autograph.errors import ConversionError
from autograph.runtime import unrolling

PRELUDE = '''import io
import jax.numpy as jnp
from tests.fuzz.trace_count_programs import Box, tick
SINK = io.StringIO()
'''

IF_MOST = 1
LOOP_MOST = 2
# A list whose elements change dtype (``q = q * 1.5``) cannot be one staged buffer:
# the loop runs as Python after its probe and the staged attempt (a second probe,
# then its three iterations).
LOOP_UNROLLED_MOST = 6
# A loop with an exit probes the lists it grows apart from its unbound variables.
LOOP_EXIT_LISTS_MOST = 3
# A list whose elements differ in kind (a Python number first, arrays appended) or
# a weak value of another dtype: the probe and the staged attempt fail at the
# append (``lists.ElementTypeError``) and the loop runs unrolled, as ``jax.jit`` of
# the original does (the logger ``autograph.loops`` says so).
LOOP_MIXED_LIST_MOST = 8


class Box:
    """An object whose attribute a region changes in place."""

    def __init__(self, v):
        self.v = v

    def bump(self, k):
        """A change the region's own code does not show: a method sets the attribute."""
        self.v = self.v + k


RUNS: collections.Counter = collections.Counter()


def _count_run(runs, label):
    runs[label] += 1


# ``tick(label)`` counts a run of the block that calls it. A staged region's watch of
# the Python state its code reaches (side_effects.py) must not see the count, which is
# the test's observation, not the program's state: a partial hides it (the watch follows
# the user's functions and containers only).
tick = functools.partial(_count_run, RUNS)


@dataclass
class Program:
    seed: int
    kind: str
    source: str
    name: str = ""
    fn: object = None
    refused: str = ""   # the ConversionError's first line, where refused
    problems: list = field(default_factory=list)


_VALUES = ("1", "2.5", "x + {k}", "x * 1.5", "jnp.float32({k})", "x - {k}")


# The weakly typed starts a loop may promote, and the steps that promote them.
_STARTS = ("0", "1.5", "3")
_STEPS = ("0.5", "1", "jnp.float16(1)", "jnp.int8(1)", "x")
_TYPED = ("jnp.int8(1)", "jnp.float16(i)", "i", "0.5")
# What makes an int list's next element a float (a staged buffer of the first
# element's dtype would truncate it).
_CHANGING = ("1.5", "(x + 0.5)", "jnp.float16(1.5)")


# What a list of weakly typed elements holds: its first element, then the appends.
_FIRST_ELEMENTS = ("0.5", "w", "1", "x * 1.0")
_WEAK_ELEMENTS = ("w * i", "0.5 * i", "i", "w + 1", "x * w", "i * 1.0")
_TEXTS = ('"ab"', '"line\\n"', "str(3)")


def _value(rng) -> str:
    return rng.choice(_VALUES).format(k=rng.randint(1, 4))


def _if_program(rng, name) -> str:
    pre, true, false, out = [], [], [], []
    features = rng.sample(["plain", "unbound", "list", "cell", "box", "return"],
                          rng.randint(1, 4))
    if "plain" in features:
        pre.append(f"a = {_value(rng)}")
        true.append(f"a = {_value(rng)}")
        false.append(f"a = {_value(rng)}")
        out.append("a")
    if "unbound" in features:
        true.append(f"b = {_value(rng)}")
        false.append(f"b = {_value(rng)}")
        out.append("b")
    if "list" in features:
        pre.append("lst = [x, x]")
        true.append("lst[0] = x + 1")
        (false if rng.random() < 0.5 else true).append("lst[1] = x * 3")
        out.append("lst[0] + lst[1]")
    if "cell" in features:
        pre += [f"t = {_value(rng)}", "g = lambda: t"]
        true.append(f"t = {_value(rng)}")
        false.append(f"t = {_value(rng)}")
        out.append("g()")
    if "box" in features:
        pre.append(f"box = Box({_value(rng)})")
        true.append(f"box.v = {_value(rng)}")
        false.append(f"box.v = {_value(rng)}")
        out.append("box.v")
    result = f"return ({', '.join(out) or 'x'},)"
    if "return" in features:   # the branch returns what the function returns after
        (true if rng.random() < 0.5 else false).append(result)
    body = ["    " + line for line in pre]
    body += [f"    if x > {rng.randint(0, 4)}:", '        tick("if")']
    body += ["        " + line for line in true]
    body += ["    else:", '        tick("else")']
    body += ["        " + line for line in false]
    body.append("    " + result)
    return f"def {name}(x):\n" + "\n".join(body) + "\n"


LOOP_FEATURES = ("first_binding", "append", "cell", "box", "promote", "weak",
                 "weak_list", "weak_reach", "write_count", "exit")


def _loop_program(rng, name, only=None) -> str:
    pre, inside, out = ["s = x * 1.0"], ["s = s + 1"], ["s"]
    if only:   # a focused run: these features, each program at least one
        features = rng.sample(sorted(only), rng.randint(1, len(only)))
        header = rng.choice(["for i in range(3):", "for i in range(3):", "for i in range(x):"])
    else:
        features = rng.sample(LOOP_FEATURES, rng.randint(0, 3))
        header = rng.choice(["for i in range(3):", "for i in range(x):",
                             "while s < x + 3:"])
    if header.startswith("while"):
        features = [f for f in features
                    if f not in ("first_binding", "append", "weak_list")]
    if "first_binding" in features and header == "for i in range(3):":
        inside.append("u = x * i")
        out.append("u")
    if "append" in features and "range(3)" in header:
        pre.append("lst = []")
        form = rng.random()
        if form < 0.4:
            inside.append("lst.append(x * i)")
        elif form < 0.7:   # an element made from a Python scalar start (int8 under jit)
            pre.append("q = 0")
            inside += [f"lst.append(q + {rng.choice(_TYPED)})", "q = q + 1"]
        else:   # elements whose dtype changes after the first: Python's list keeps each
            pre.append("q = 1")
            inside += ["lst.append(q)", f"q = q * {rng.choice(_CHANGING)}"]
            out.append("lst[0]")
        out.append("lst[-1]")
    if "cell" in features:
        pre += ["c = x", "g = lambda: c"]
        inside.append("c = c + 2")
        out.append("g()")
    if "box" in features:
        pre.append("box = Box(x)")
        inside.append(rng.choice(("box.v = box.v + 1", "box.bump(1)")))
        out.append("box.v")
    if "promote" in features:
        pre.append(f"p = {rng.choice(_STARTS)}")
        inside.append(f"p = p + {rng.choice(_STEPS)}")
        out.append("p")
    if "weak" in features:   # w: a Python float argument of jit, a weak tracer
        pre.append(f"r = {rng.choice(('0', '2', '1.5'))}")
        inside.append(rng.choice(("r = r + w", "r = w * r + 1")))
        out.append("r")
    if "weak_list" in features and "range(3)" in header:
        pre.append(f"wl = [{rng.choice(_FIRST_ELEMENTS)}]" if rng.random() < 0.5
                   else "wl = []")
        inside.append(f"wl.append({rng.choice(_WEAK_ELEMENTS)})")
        out += rng.sample(["wl[0]", "wl[-1]", "wl[0] * x", "wl[-1] * jnp.float16(2)"], 2)
    if "weak_reach" in features:   # a weak tracer reached through attributes
        pre.append(rng.choice(("held = Box(w)", "held = Box(Box(w))")))
        pre.append(f"h = {rng.choice(('0', '1'))}")
        read = "held.v.v" if "Box(Box(w))" in "".join(pre) else "held.v"
        inside.append(f"h = h + {read}")
        out.append("h")
    if "write_count" in features:
        pre.append("wc = 0")
        inside.append(f"wc = wc + SINK.write({rng.choice(_TEXTS)})")
        out.append("wc")
    if "exit" in features:   # last, after the appends; m: a start the body makes strong
        pre.append(f"m = {rng.choice(('0', '0.0'))}")
        inside += [f"if s > {rng.randint(1, 6)}:", "    break",
                   rng.choice(("m = x * 1.5", "m = s * 2", "m = jnp.float32(s)"))]
        out.append("m")
    body = ["    " + line for line in pre]
    body += ["    " + header, '        tick("body")']
    body += ["        " + line for line in inside]
    body.append(f"    return ({', '.join(out)},)")
    return f"def {name}(x, w=0.5):\n" + "\n".join(body) + "\n"


def generate(seed: int, count: int, only=None) -> list[Program]:
    """``count`` programs from ``seed``; with ``only`` (loop features), loops that
    use those features alone."""
    programs = []
    for k in range(count):
        rng = random.Random(seed + k)
        kind = "if" if rng.random() < 0.6 and not only else "loop"
        name = f"tc_{seed + k}"
        source = _if_program(rng, name) if kind == "if" else _loop_program(rng, name, only)
        programs.append(Program(seed + k, kind, source, name))
    return programs


def load(programs: list[Program], directory) -> None:
    path = Path(directory) / f"trace_count_programs_{programs[0].seed}.py"
    path.write_text(PRELUDE + "\n\n" + "\n\n".join(p.source for p in programs))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    for p in programs:
        p.fn = getattr(module, p.name)


def check(p: Program) -> None:
    """Fill ``p.problems`` (counts past the bound, values unlike Python's, other
    errors) and ``p.refused``."""
    try:
        RUNS.clear()
        with unrolling.count_decisions() as decisions:
            jax.make_jaxpr(autograph.convert(p.fn))(jnp.int32(2))
        counts = dict(RUNS)
        most = IF_MOST if p.kind == "if" else LOOP_MOST
        if "q = q * " in p.source and "range(3)" in p.source:
            most = LOOP_UNROLLED_MOST
        if "break" in p.source and ("lst.append" in p.source or "wl.append" in p.source):
            most = max(most, LOOP_EXIT_LISTS_MOST)
        if "wl.append" in p.source and decisions.counts["unrolled"]:
            most = max(most, LOOP_MIXED_LIST_MOST)
        if not counts or max(counts.values()) > most:
            p.problems.append(f"runs {counts}, at most {most} each")
        compiled = autograph.to_graph(p.fn)
        for x in (0, 2, 5):
            expected, got = p.fn(x), compiled(jnp.int32(x))
            for e, g in zip(expected, got, strict=True):
                if not np.allclose(np.asarray(g), np.asarray(e)):
                    p.problems.append(f"x={x}: {got} for Python's {expected}")
                    return
        if "    m = 0" in p.source:
            p.problems += _exit_type_differences(p, compiled)
        if "for i in range(3):" in p.source and "break" not in p.source:
            # jax.jit of the original runs it too
            p.problems += _type_differences(jax.jit(p.fn)(jnp.int32(2)),
                                            compiled(jnp.int32(2)))
            if "w" in p.fn.__code__.co_varnames:   # a Python float: a weak tracer
                p.problems += _type_differences(jax.jit(p.fn)(jnp.int32(2), 1.5),
                                                compiled(jnp.int32(2), 1.5))
    except ConversionError as error:
        p.refused = str(error).splitlines()[0]
    except Exception as error:  # noqa: BLE001 - reported with the program
        p.problems.append(f"{type(error).__name__}: {str(error)[:300]}")


def _exit_type_differences(p: Program, compiled) -> list:
    """Where the loop with an exit has set ``m`` (a Python-number start), the type the
    original gives it run eagerly on an array, against the compiled one's: the body's
    strong type, not the start's weak one."""
    problems = []
    position = _returned(p.source).index("m")
    for x in (2, 5):
        value = p.fn(jnp.int32(x))[position]
        if isinstance(value, int | float):   # the loop left before it set m
            continue
        expected = jax.typeof(value)
        got = jax.typeof(compiled(jnp.int32(x))[position])
        if (got.dtype, got.weak_type) != (expected.dtype, expected.weak_type):
            problems.append(f"x={x}: m is {got} for Python's "
                            f"{expected}")
    return problems


def _returned(source) -> list:
    """The expressions of the returned tuple, from the program's source."""
    returned = source.rstrip().splitlines()[-1].strip()
    return returned[len("return ("):-len(",)")].split(", ")


def _type_differences(expected, got) -> list:
    """The results whose dtype or weak type differs from ``jax.jit`` of the
    original's (a weakly typed start that a weak tracer makes a weak value of
    another dtype stays weak, as Python's unrolled value does; a grown list's
    elements keep their weak types, ``TensorList.weak``)."""
    problems = []
    for k, (e, g) in enumerate(zip(expected, got, strict=True)):
        e, g = jax.typeof(e), jax.typeof(g)
        if e.dtype != g.dtype or g.weak_type != e.weak_type:
            problems.append(f"result {k}: {_shown(g)} for jit's {_shown(e)}")
    return problems


def _shown(aval) -> str:
    return aval.str_short() + (" (weak)" if aval.weak_type else "")


def run(seed: int, count: int, only=None) -> list[Program]:
    """Generate, load and check ``count`` programs from ``seed`` (``generate``)."""
    programs = generate(seed, count, only)
    with tempfile.TemporaryDirectory() as directory:
        load(programs, directory)
        for p in programs:
            check(p)
    return programs


def main(argv: list[str]) -> int:
    numbers = [a for a in argv if not a.startswith("--")]
    count = int(numbers[0]) if numbers else 200
    seed = int(numbers[1]) if len(numbers) > 1 else 0
    only = next((a.split("=", 1)[1].split(",") for a in argv
                 if a.startswith("--features=")), None)
    if only and not set(only) <= set(LOOP_FEATURES):
        raise SystemExit(f"--features: choose among {', '.join(LOOP_FEATURES)}")
    programs = run(seed, count, only)
    bad = [p for p in programs if p.problems]
    for p in bad:
        print(f"--- seed {p.seed}: {p.problems}\n{p.source}")
    if "--refusals" in argv:
        for p in programs:
            if p.refused:
                print(f"--- seed {p.seed} refused: {p.refused}\n{p.source}")
    kinds = collections.Counter(p.kind for p in programs)
    refused = collections.Counter(p.kind for p in programs if p.refused)
    print(f"trace-count programs: {len(programs)} ({dict(kinds)}); refused with "
          f"ConversionError: {dict(refused)}; problems: {len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    # The programs import this module by its name: run that one, not __main__.
    from tests.fuzz import trace_count_programs
    sys.exit(trace_count_programs.main(sys.argv[1:]))
