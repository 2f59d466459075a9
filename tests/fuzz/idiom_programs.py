"""Fuzzing issue 27's idioms: input checks that raise, ``math`` calls, reductions
(``any``/``all``/``sum``/``max``/``min`` of generators and traced ranges) and
membership (``in``, ``.count``, a list of numbers indexed by a traced int),
positions (``xs.index(v)``).

    python -m tests.fuzz.run --kind idioms --count 200

Each program is a function of ``(a, b, n)`` (small ints, ``n >= 0``) of one kind
(``raises``, ``math``, ``reductions``, ``membership``, ``histories``: a list kept
every few steps of a loop over a Python range, ``int_counters``: Python ints a loop
steps from its index, hashes and products that leave 32 bits, ``held_objects``: a
static loop setting attributes of plain objects held in a list, dict, deque or
tuple, ``nonfinite``: NaN and infinity given to ``min``/``max``/``int``/``round``),
whose statements draw from
that kind's templates. It runs as Python, converted with Python values (must be
identical: value or exception type and message) and compiled by ``to_graph`` with
the arguments as arrays: the same value (floats within float32 rounding) or the
same exception with the same message. A ``ConversionError`` is a refusal (loud,
counted); anything else is a mismatch.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

KINDS = ("raises", "math", "reductions", "membership", "histories", "int_counters",
         "held_objects", "nonfinite", "positions")
PRELUDE = '''import collections
import math
import types


class Clock:
    ticks = 0


class Stats:
    def __init__(self, n):
        self.n = n


class Box:
    def __init__(self, x, n):
        self.x = x
        self.stats = Stats(n)
        self.hist = []


def bump(p, v):
    p.x = p.x + v


def count_in(p):
    p.stats.n += 1


'''


@dataclass
class IdiomProgram:
    seed: int
    kind: str
    name: str
    source: str
    fn: object = field(default=None, repr=False)


def _k(rng, low=-4, high=6):
    return rng.randint(low, high)


def _raises(rng) -> list:
    """Input checks: a raising branch (``if``, ``elif``, ``else``), its message an
    f-string of traced values, statements before the raise, a check in a loop, an
    ``assert`` beside a raise (the first that fails is the one Python raises)."""
    templates = [
        lambda: [f"if a < {_k(rng)}:",
                 ["raise ValueError(f\"a must be at least {b}, got {a}\")"]],
        lambda: [f"if b == {_k(rng)}:", ["raise ZeroDivisionError('b is not allowed')"]],
        lambda: [f"if a > {_k(rng)}:", ["x = x + 1"],
                 f"elif b < {_k(rng)}:", ["raise KeyError(b)"],
                 "else:", ["x = x + 2"]],
        lambda: [f"if n % 2 == {rng.randint(0, 1)}:", ["x = x + a"],
                 "else:", ["msg = 'odd: ' + str(n)", "raise OverflowError(msg)"]],
        lambda: ["for i in range(n):",
                 [f"if a + i > {_k(rng, 2, 9)}:",
                  ["raise ValueError(f'step {i}: {a + i:d}')"],
                  "x = x + i"]],
        lambda: [f"if a * b > {_k(rng, 0, 20)} or n > {_k(rng, 2, 5)}:",
                 ["raise ArithmeticError(f'{a} * {b} is too large')"]],
        lambda: [f"if not a < {_k(rng)}:", ["raise IndexError"]],
        # an assert after a raise, both failing for some inputs: Python's is the first
        lambda: [f"if a > {_k(rng)}:", ["raise ValueError(f'a = {a}')"],
                 f"assert b < {_k(rng)}, f'b = {{b}}'"],
        lambda: [f"assert a != {_k(rng)}", f"if b + a > {_k(rng)}:", ["raise KeyError(a)"]],
    ]
    lines = []
    for _ in range(rng.randint(1, 3)):
        lines += rng.choice(templates)()
        lines.append(f"x = x + {rng.choice(['a', 'b', 'n', '1'])}")
    return lines


def _math(rng) -> list:
    """``math`` calls on traced ints and floats, some outside their domain."""
    int_calls = ["math.floor(a / 3)", "math.ceil(b / 4)", "math.trunc(a / 2.5)",
                 "math.isqrt(abs(b))", "math.gcd(a, b)", "math.isqrt(n * n + a * a)"]
    float_calls = ["math.sqrt(abs(a) + n)", "math.hypot(a, b)", "math.log(abs(b) + 1.0)",
                   "math.exp(n / 4)", "math.sin(a) * math.cos(b)", "math.log2(n + 1)",
                   "math.radians(a * 30)", "math.atan2(a, b + 0.5)", "math.fabs(b - a)",
                   "math.pow(abs(a) + 1, n / 2)", "math.log10(abs(a * b) + 1)"]
    domain = ["math.sqrt(a)", "math.log(b)", "math.acos(a / 4)", "math.log1p(b / 2)",
              "math.isqrt(a)"]
    lines = []
    for _ in range(rng.randint(1, 3)):
        lines.append(f"x = x + {rng.choice(int_calls)}")
        lines.append(f"g = g + {rng.choice(float_calls)}")
    if rng.random() < 0.5:
        lines.append(f"g = g + {rng.choice(domain)}")
    return lines


def _nonfinite(rng) -> list:
    """A NaN or an infinity from the arguments (``math.inf * (a - b)``: NaN where
    ``a == b``) given to ``min``/``max`` beside other values (Python keeps the first
    unless a later one compares smaller: a NaN second is never taken), and to
    ``int``/``round``/``math.floor`` (Python raises ``ValueError``/``OverflowError``);
    out13: the staged forms gave NaN, 0 or 2147483647 silently."""
    picks = [lambda: "x = x + int(min(w, b) == b)", lambda: "x = x + int(max(b, w) == b)",
             lambda: f"x = x + int(min(a, w, {_k(rng)}) == a)",
             lambda: "x = x + int(max(w, a) != w)", lambda: "x = x + int(w)",
             lambda: "x = x + round(w)", lambda: "x = x + math.floor(w)",
             lambda: f"x = x + math.ceil(w * {rng.choice(['0.5', '-1', '2'])})"]
    source = rng.choice(["math.inf * (a - b)", "(a - b) / 4", "math.inf * (n - 2)",
                         "(math.inf * a) - math.inf"])
    lines = [f"w = {source}"]
    for _ in range(rng.randint(1, 3)):
        line = rng.choice(picks)()
        if rng.random() < 0.4:
            lines += [f"if a > {_k(rng)}:", [line]]
        else:
            lines.append(line)
    return lines


def _reductions(rng) -> list:
    """``any``/``all`` over traced comparisons, reductions of generators and of
    ranges with a traced bound, ``sum``/``any``/``all`` of generators whose ``if``
    is traced (masked)."""
    templates = [
        lambda: f"x = x + int(any(v > {_k(rng)} for v in (a, b, n)))",
        lambda: f"x = x + int(all([a != {_k(rng)}, b < {_k(rng)}]))",
        lambda: f"x = x + int(any([a == b, n > {_k(rng, 0, 5)}]))",
        lambda: f"x = x + sum(i for i in range(n) if i % {rng.randint(2, 3)} == 0)",
        lambda: "x = x + sum(range(n + 1))",
        lambda: f"x = x + max(i * i % {rng.randint(3, 7)} for i in range(n + 1))",
        lambda: "x = x + min(range(1, n + 2))",
        lambda: f"x = x + int(all(i < {_k(rng, 1, 6)} for i in range(n)))",
        lambda: "x = x + sum(i * a for i in range(1, n))",
        lambda: f"x = x + max((a, b, {_k(rng)}))",
        # a traced `if` in the generator: each item computed and masked
        lambda: f"x = x + sum(1 for v in (a, b, n, {_k(rng)}) if v > {_k(rng)})",
        lambda: f"x = x + sum(abs(v - a) for v in [b, n, {_k(rng)}] if v != {_k(rng)})",
        lambda: f"x = x + int(any(v % 2 == 0 for v in (a, b, n) if v > {_k(rng)}))",
        lambda: f"x = x + int(all(v < {_k(rng)} for v in (a, n, {_k(rng)}) if v != b))",
        lambda: f"x = x + sum(i * a for i in range(4) if a + i > {_k(rng)})",
        # a list comprehension so, summed, counted or tested
        lambda: f"x = x + len([v for v in (a, b, n) if v > {_k(rng)}])",
        lambda: f"x = x + sum([v * 2 for v in [a, b, {_k(rng)}] if v != n])",
        lambda: f"x = x + int(any([v < 0 for v in (a, b, n) if v != {_k(rng)}]))",
        lambda: f"x = x + sum(u * v for u, v in zip((a, b, n), (b, n, a)) if u < v + {_k(rng)})",
        lambda: f"x = x + len([j for j, v in enumerate((a, b, n)) if v > j + {_k(rng)}])",
        # ... whose dropped items would fail math's domain check
        lambda: f"x = x + int(sum(math.sqrt(v) for v in (a, b, n) if v >= {_k(rng, 0, 3)}))",
    ]
    return [rng.choice(templates)() for _ in range(rng.randint(1, 4))]


def _membership(rng) -> list:
    """``in``/``not in`` against tuples and lists, ``.count`` of a display, a list
    of numbers indexed by a traced int."""
    table = [rng.randint(-9, 9) for _ in range(6)]
    templates = [
        lambda: f"x = x + int(a in ({_k(rng)}, {_k(rng)}, {_k(rng)}))",
        lambda: f"x = x + int(b not in [{_k(rng)}, {_k(rng)}])",
        lambda: f"x = x + (a, b, n).count({_k(rng, 0, 3)})",
        lambda: f"x = x + [a, b, {_k(rng)}].count(b)",
        lambda: "x = x + table[n]",
        lambda: "x = x + table[-1 - n]",
        lambda: "x = x + table[n % 3]",
    ]
    return [f"table = {table}"] + [rng.choice(templates)() for _ in range(rng.randint(1, 4))]


def _positions(rng) -> list:
    """``xs.index(v)`` of lists and tuples holding traced ints, the value traced or
    not, present or not (Python's ValueError, raised from the compiled call), with a
    start."""
    templates = [
        lambda: f"x = x + [a, b, {_k(rng)}, n].index({rng.choice(['a', 'b', 'n', _k(rng)])})",
        lambda: f"x = x + (b, {_k(rng)}, a).index({rng.choice(['a', 'b', _k(rng)])})",
        lambda: f"x = x + [n, a, b, a].index(a, {rng.randint(0, 2)})",
        lambda: f"x = x + [{_k(rng)}, {_k(rng)}, {_k(rng)}].index(n)",
        lambda: f"x = x + [a * 2, b - 1].index({rng.choice(['a + a', 'b - 1', 'n'])})",
    ]
    return [rng.choice(templates)() for _ in range(rng.randint(1, 3))]


def _histories(rng) -> list:
    """A loop over a Python range that keeps some values in a list under a condition
    of the index alone (every few steps, past a warm-up, by a counter), then reads
    its length and elements: ``jax.jit`` of the original gives a Python list."""
    m, k = rng.randint(2, 4), rng.randint(1, 5)
    tests = [f"i % {m} == {rng.randint(0, m - 1)}", f"i >= {k}", f"i < {k} or i == {k + 2}",
             f"c % {m} == 0", f"(i + c) % {m} == 1"]
    steps = ["x = x + a * i", "g = g + b / (i + 1)", "x = x + n", "g = g * 0.5 + a"]
    kept = [rng.choice(["x", "g", "a + i", "x * b"]) for _ in range(rng.randint(1, 2))]
    body = [rng.choice(steps), "c = c + 1", f"if {rng.choice(tests)}:",
            [f"hist.append({v})" for v in kept]]
    if rng.random() < 0.5:
        body.insert(0, rng.choice(steps))
    loop = [f"for i in range({rng.randint(3, 9)}):", body]
    if rng.random() < 0.3:   # nested: epochs of steps, the counter running across them
        loop = [f"for e in range({rng.randint(2, 3)}):", loop]
    return ["hist = []", "c = 0", *loop, "x = x + len(hist)", "g = g + sum(hist)"]


def _int_counters(rng) -> list:
    """Python ints a loop over a range (static, or ``range(n)``: traced when
    compiled) steps from its index and themselves alone: hashes kept below a prime,
    products, doublings, some past 2**31 (Python's int does not wrap), some under a
    condition of the index, read by traced arithmetic as residues; some loops bind a
    variable first (their probe runs), some are a ``while i < n`` (staged, checked in
    its body); some step a ``k`` by a literal alone (``k += 2``: judged without a
    probe, analysis/literal_steps.py), some under a condition of traced data
    (``if a + i > 2: k += 1``: checked in the staged body, loops._checked_steps),
    from starts and by steps that may leave int32, and index a Python list with it
    after a static loop."""
    updates = [
        lambda: [f"h = (h * {rng.choice([31, 65599, 1000003])} + i) % "
                 f"{rng.choice([97, 1000003, 2147483647])}"],
        lambda: [f"f = f * (i + {rng.randint(1, 9)})"],
        lambda: ["s = s * 2 + 1"],
        lambda: ["c = c + i * i"],
        lambda: [f"if i % {rng.randint(2, 3)} == 0:", [f"h = h * {rng.randint(2, 99)} + i"]],
    ]
    uses = ["x = x + a * (h % 5)", "g = g + b * (f % 3)", "x = x + (s % 7)",
            "x = x + c % 4", "g = g + (h + f) % 6"]
    body = [line for _ in range(rng.randint(1, 3)) for line in rng.choice(updates)()]
    body += [rng.choice(uses) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:   # a first binding in the loop: the loop's probe runs
        body = ["t = a + i", *body, "x = x + t % 3"]
    stepped = rng.random() < 0.5
    guarded = stepped and rng.random() < 0.4   # under a condition of traced data
    if stepped:
        step = f"k += {rng.choice(['1', '2', '5', '-1', '10 ** 8'])}"
        at = rng.choice([0, len(body)])
        body[at:at] = [f"if a + i > {rng.randint(-3, 3)}:", [step]] if guarded else [step]
    nested = rng.random() < 0.3
    # (Nested in a loop, a range(n) traced would hand its ints on as int32 arrays:
    # README, known limits.)
    bound = str(rng.randint(2, 40)) if nested else rng.choice(["n", str(rng.randint(2, 40))])
    loop = [f"for i in range({bound}):", body]
    if not nested and bound == "n" and rng.random() < 0.4:   # a staged while
        loop = ["i = 0", "while i < n:", [*body, "i = i + 1"]]
    if nested:
        loop = [f"for e in range({rng.randint(2, 3)}):", loop]
    after = ["x = x + h % 11 + f % 13", "g = g + s % 9"]
    if stepped:
        after.append("x = x + k % 7")
        if bound != "n" and not guarded:   # a Python int after a static loop: it
            # may index a list
            after.append("x = x * [1.0, 2.0, 3.0][k % 3]")
    start = rng.choice(["0", "3", "100", "2 ** 31 - 50"])
    return [f"h, f, s, c, k = 7, 1, 1, 0, {start}", *loop, *after]


def _held_objects(rng) -> list:
    """A loop over a Python range whose body sets attributes of plain objects held
    in a list, a dict, a deque or a tuple (``for p in ps: p.x = p.x + a``, ``p = ps[i % 2]``,
    through a helper, ``setattr``, a nested object's ``p.stats.n += 1``, a list one
    holds; or held by a ``SimpleNamespace`` the function carries; and a class
    attribute, ``Clock.ticks += 1``), with what makes the loop take its probe (a
    Python-int counter, a first binding in the loop, a traced ``if``): ``jax.jit`` of
    the original unrolls it."""
    holder = rng.choice(["list", "dict", "deque", "tuple", "namespace"])
    starts = [f"Box({rng.choice(['a', 'b', str(_k(rng))])}, {rng.randint(0, 3)})"
              for _ in range(2)]
    if holder == "dict":
        made = f"ps = {{'u': {starts[0]}, 'v': {starts[1]}}}"
        loop_over, first, second = "ps.values()", "ps['u']", "ps['v']"
        pick = "ps['u' if i % 2 == 0 else 'v']"
    elif holder == "namespace":   # attributes of a plain object the function carries
        made = f"ps = types.SimpleNamespace(u={starts[0]}, v={starts[1]})"
        loop_over, first, second = "(ps.u, ps.v)", "ps.u", "ps.v"
        pick = "ps.u if i % 2 == 0 else ps.v"
    else:
        made = f"ps = [{starts[0]}, {starts[1]}]"
        if holder == "deque":
            made = f"ps = collections.deque([{starts[0]}, {starts[1]}])"
        elif holder == "tuple":
            made = f"ps = ({starts[0]}, {starts[1]})"
        loop_over, first, second, pick = "ps", "ps[0]", "ps[1]", "ps[i % 2]"
    changes = [
        lambda: [f"p.x = p.x + {rng.choice(['a', 'b', 'i', 'a * i'])}"],
        lambda: [f"p.x = -p.x - {rng.choice(['b', 'i', '1'])}"],
        lambda: [f"bump(p, {rng.choice(['a', 'b + i'])})"],
        lambda: [f"setattr(p, 'x', p.x - {rng.choice(['a', 'b', 'i'])})"],
        lambda: ["p.stats.n += 1"],
        lambda: ["count_in(p)"],
        lambda: [f"p.hist.append(p.x + {rng.choice(['a', 'i'])})"],
        lambda: [f"if p.x > {_k(rng)}:", [f"c = c + {rng.randint(1, 3)}"]],
        lambda: ["Clock.ticks += 1"],   # a class attribute
    ]
    inner = [line for _ in range(rng.randint(1, 3)) for line in rng.choice(changes)()]
    if rng.random() < 0.5:
        body = [f"for p in {loop_over}:", inner]
    else:
        body = [f"p = {pick}", *inner]
    probes = [["c = c + 1"], ["t = a + i", "x = x + t % 3"],
              [f"if a > {_k(rng)}:", ["c = c + 2"]], []]
    body += rng.choice(probes)
    loop = [f"for i in range({rng.randint(1, 5)}):", body]
    if rng.random() < 0.25:
        loop = [f"for e in range({rng.randint(2, 3)}):", loop]
    return [made, "c = 0", "Clock.ticks = 0", *loop,
            f"x = x + c + {first}.stats.n * 3 + len({second}.hist) + {second}.stats.n"
            " + Clock.ticks",
            f"g = g + {first}.x + {second}.x * 0.5 + sum({first}.hist)"]


_KIND_BODIES = {"raises": _raises, "math": _math, "reductions": _reductions,
                "membership": _membership, "histories": _histories,
                "int_counters": _int_counters, "held_objects": _held_objects,
                "nonfinite": _nonfinite, "positions": _positions}

# A loop over a traced range whose Python ints would leave int32 staged stops with
# this OverflowError (loud: Python's int does not wrap, the staged loop's would).
_LOUD_OVERFLOW = "outside 32-bit integers"


def generate(seed: int, kind: str | None = None) -> IdiomProgram:
    """The program of ``seed`` (its kind chosen by the seed unless given)."""
    rng = random.Random(seed)
    kind = kind or KINDS[seed % len(KINDS)]
    name = f"idiom_{seed}"
    body = ["x = 0", "g = 0.0", *_KIND_BODIES[kind](rng), "return (x, g)"]
    return IdiomProgram(seed, kind, name, f"def {name}(a, b, n):\n" + _indent(body, 1))


def _indent(lines, level) -> str:
    out = []
    for line in lines:
        if isinstance(line, list):
            out.append(_indent(line, level + 1))
        else:
            out.append("    " * level + line + "\n")
    return "".join(out)


def inputs_for(seed):
    rng = random.Random(seed * 31 + 7)
    return [(rng.randint(-8, 9), rng.randint(-8, 9), rng.randint(0, 5)) for _ in range(4)]


def _run(call):
    try:
        return ("value", call())
    except Exception as error:  # noqa: BLE001 - every outcome is compared
        return ("raises", type(error), str(error))


def _same(expected, got, exact) -> bool:
    if expected[0] != got[0]:
        return False
    if expected[0] == "raises":
        if expected[1] is AssertionError and issubclass(got[1], AssertionError):
            # a staged assert's error names the user's line after Python's message
            return got[2] == expected[2] or got[2].startswith(
                f"{expected[2] or 'assertion failed'} [")
        return expected[1:] == got[1:]
    e, g = expected[1], got[1]
    if exact:
        return type(e) is type(g) and all(
            type(u) is type(v) and (u == v or (u != u and v != v))
            for u, v in zip(e, g, strict=True))
    for u, v in zip(e, g, strict=True):
        v = float(np.asarray(v))
        if not math.isclose(float(u), v, rel_tol=2e-5, abs_tol=1e-5):
            if not (math.isnan(u) and math.isnan(v)):
                return False
    return True


def check(program: IdiomProgram, autograph) -> list[str]:
    """The mismatches of ``program`` (a ``ConversionError`` counts as a refusal,
    returned as ``'refused: ...'``)."""
    problems = []
    converted = autograph.convert(program.fn)
    compiled = autograph.to_graph(program.fn)
    for args in inputs_for(program.seed):
        python = _run(lambda a=args: program.fn(*a))
        if python[0] == "value" and not all(math.isfinite(v) for v in python[1]):
            continue                   # (an overflow of float64 is not float32's)
        mine = _run(lambda a=args: converted(*a))
        if not _same(python, mine, exact=True):
            problems.append(f"convert{args}: {mine!r} vs Python {python!r}")
        arrays = [jnp.asarray(v) for v in args]
        staged = _run(lambda a=arrays: jax.block_until_ready(compiled(*a)))
        if staged[0] == "raises" and issubclass(staged[1], autograph.ConversionError):
            problems.append(f"refused: {staged[2].splitlines()[0]}")
            break
        if staged[0] == "raises" and _LOUD_OVERFLOW in staged[2]:
            continue
        if not _same(python, staged, exact=False):
            problems.append(f"to_graph{args}: {staged!r} vs Python {python!r}")
    return problems


def fuzz(first_seed: int, count: int, kinds=KINDS, progress=None):
    """Generate, load and check ``count`` programs; ``(programs, mismatches,
    refusals)`` with the mismatches and refusals as ``(program, text)`` pairs."""
    import autograph

    programs = [generate(first_seed + i, kinds[i % len(kinds)]) for i in range(count)]
    with tempfile.TemporaryDirectory(prefix="ag_idioms_") as directory:
        path = Path(directory) / f"idiom_programs_{first_seed}.py"
        path.write_text(PRELUDE + "\n\n".join(p.source for p in programs))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        mismatches, refusals = [], []
        for done, p in enumerate(programs, 1):
            p.fn = getattr(module, p.name)
            for problem in check(p, autograph):
                (refusals if problem.startswith("refused") else mismatches).append(
                    (p, problem))
            if progress is not None:
                progress(done, mismatches)
        sys.modules.pop(path.stem, None)
    return programs, mismatches, refusals
