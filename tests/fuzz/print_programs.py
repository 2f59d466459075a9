"""Differential fuzzing of staged ``print`` formatting (seeded, reproducible).

    python -m tests.fuzz.print_programs --count 500

Each program ``p_<seed>(a, b, n)`` prints f-strings, ``.format`` calls and ``%``
formatting of its int and float variables, with random format specs (fill, align,
sign, ``#``, ``0``, width, ``,``, precision, types ``d x o b e f g %``, ``!s``) and
literal text with braces and percent signs, from straight-line code, a staged ``if``,
a loop over ``range(n)`` and the right operand of an ``and``/``or``; and lists, tuples
and dicts of Python ints the program makes (``c``, ``i``: a Python number shows as its
number inside them, out13); and a Python number a staged ``if`` steps or gives the other
type (``m = 3``, then ``m = m + 0.5``), printed alone, in an f-string or through
``str``/``repr`` (silent13); and fields that are a conditional expression between two
texts (``{('+' if i > 2 else '-'):>3}``: refused before, lead14: chosen when the
program runs). About a third of the programs print the staged ``if`` or
the loop inside ``with contextlib.redirect_stdout(CAPTURE):`` (a stream of the
program's module): that text must land in ``CAPTURE``, not on stdout, when compiled
too (out14: a staged print went to the stdout in force when the program ran); and
about a third make some of their prints as ``echo(...)`` (``echo = print``) or
``builtins.print(...)`` (out14: those printed the tracer while tracing); and, by
draws of their own, some enter a user's context manager, an ``ExitStack`` or swap
``sys.stdout`` by hand, and show a stepped number by ``%r`` (``_entered``, silent14: of
120 programs from seed 1000, 62 printed otherwise before, none now; every one of the 40
that entered a manager, an ``ExitStack`` or swapped stdout, 37 of the 42 with ``%r``).
The printed text
of the original (Python ints and floats) must equal, exactly: the converted
function's with the same Python values; the compiled function's
(``jax.jit(convert(f))``, every argument traced); and, line for line, ``vmap`` (and
``vmap`` of ``jit``) over a batch of arguments. Floats stay multiples of 1/4 and ints
small, so float32 and int32 print the digits Python prints for them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.program_generator import _indent_all

os.environ.setdefault("JAX_PLATFORMS", "cpu")

INT_SPECS = ("", ">4", "<3", "^5", "+d", "05d", "x", "#x", "o", "b", "#b", "*>6",
             ",", " d", "=+5")
FLOAT_SPECS = ("", ".2f", ".3f", "8.3f", "+.1f", "e", ".2e", "g", ".1%", "<9.2f", "_>10.4f",
               "010.2f")
PERCENT_INT = ("%d", "%5d", "%-4d|", "%+d", "%x", "%o", "%s", "%03d")
PERCENT_FLOAT = ("%.2f", "%8.3f", "%e", "%g", "%s", "%+.1f", "%-7.2f|")
LITERALS = ("step ", ": ", " | ", "{braces} ", "100% ", "", "loss=", " -> ")
TEXTS = ("+", "-", "up", "down", "", "ok")


class PrintProgramGenerator:
    """Random print-formatting programs from one seed."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)

    def function(self, name: str) -> str:
        r = self.rng
        body = ["x = a + b", "g = 0.25 * a - 0.5", "k = b % 4", "c = 1"]
        body += self._prints(r.randint(1, 2), ["a", "b", "x", "k"], ["g"])
        body += ["if x > 2:", ["g = g + 1.25", "c = c + 2"] + self._prints(1, ["x", "k"], ["g"]),
                 "else:", ["x = x - 1", "c = c * 3"] + self._prints(r.randint(0, 1), ["x"],
                                                                  ["g"])]
        body += ["for i in range(n):",
                 ["g = g + 0.5", "x = x + i"] + self._prints(1, ["i", "x"], ["g"])]
        body += self._prints(1, ["x", "n"], ["g"])
        # A right operand of and/or that prints: only where the left does not decide.
        body += ["def shown(v):", self._prints(1, ["v"], ["g"]) + ["return v > 1"],
                 f"ok = (x > {r.randint(-2, 6)}) {r.choice(['and', 'or'])} shown(k)"]
        # A Python number a staged `if` steps or gives the other type (`m = 3`, then
        # `m = m + 0.5`): printed as Python's int or float, alone, in an f-string, or
        # through str()/repr() joined to a literal (out13: `3` printed as `3.0`).
        start = r.choice(("3", "0", "1.5"))
        step = r.choice(("m + 0.5", "m + 2", "4.0", "m * 2", "2"))
        shown = r.choice(("m", "f'{m}'", "f'm={m:>6}'", "'m=' + str(m)", "repr(m) + '!'",
                          "str(m), m"))
        body += [f"m = {start}", f"if x > {r.randint(-2, 6)}:", [f"m = {step}"],
                 f"print({shown}, x)"]   # (x: traced, so vmap prints each example's line)
        body.append("return x, g, ok")
        # Its own draws, so that the rest of each seed's program stays as it was.
        redirect = random.Random(self.seed * 31 + 7)
        if redirect.random() < 0.35:   # print reached other than by its name (out14)
            body = ["echo = print", *_renamed_prints(body, redirect)]
        if redirect.random() < 0.35:
            at = body.index(redirect.choice(["if x > 2:", "for i in range(n):"]))
            step = 4 if body[at] == "if x > 2:" else 2
            body[at:at + step] = ["with contextlib.redirect_stdout(CAPTURE):",
                                  body[at:at + step]]
        body = _entered(body, random.Random(self.seed * 53 + 5))
        return "\n".join([f"def {name}(a, b, n):", *_indent_all([body])]) + "\n"

    def _prints(self, count, ints, floats):
        return [self._print(ints, floats) for _ in range(count)]

    def _print(self, ints, floats):
        r = self.rng
        kind = r.choice(["fstring", "fstring", "format", "percent", "mixed", "container"])
        if kind == "container":   # Python numbers shown inside a list, tuple or dict
            # (``c`` and ``i`` hold Python ints: weakly typed when staged; the
            # arguments are int32 arrays when compiled, shown as arrays in a list)
            numbers = ["c"] + [v for v in ints if v == "i"]
            items = [r.choice(numbers) for _ in range(r.randint(1, 3))]
            shown = r.choice([f"[{', '.join(items)}]", f"({', '.join(items)},)",
                              "{" + ", ".join(f"'k{j}': {v}" for j, v in enumerate(items)) + "}",
                              f"f'{{[{items[0]}, 1]}}'"])
            return f"print({shown}, {r.choice(ints)})"
        if kind == "fstring":
            return f"print({self._fstring(ints, floats)})"
        if kind == "format":
            template, args = self._format_template(ints, floats)
            return f"print({template!r}.format({', '.join(args)}))"
        if kind == "percent":
            return f"print({self._percent(ints, floats)})"
        return (f"print({r.choice(ints)}, {self._fstring(ints, floats)}, "
                f"{self._percent(ints, floats)}, sep={r.choice([' ', ', ', ''])!r})")

    def _field(self, ints, floats):
        r = self.rng
        if r.random() < 0.12:   # text a traced condition chooses (lead14)
            test = f"{r.choice(ints + floats)} > {r.randint(-2, 3)}"
            return (f"({r.choice(TEXTS)!r} if {test} else {r.choice(TEXTS)!r})",
                    r.choice(("", ">3", "<4", "^5", "*>6")))
        if r.random() < 0.6:
            return r.choice(ints), r.choice(INT_SPECS)
        return r.choice(floats), r.choice(FLOAT_SPECS)

    def _fstring(self, ints, floats):
        r = self.rng
        parts = []
        for _ in range(r.randint(1, 3)):
            literal = r.choice(LITERALS).replace("{", "{{").replace("}", "}}")
            var, spec = self._field(ints, floats)
            conversion = "!s" if r.random() < 0.1 else ""
            if conversion:
                spec = r.choice(["", ">8"])
            parts.append(literal + "{" + var + conversion + (":" + spec if spec else "") + "}")
        return "f" + repr("".join(parts))

    def _format_template(self, ints, floats):
        r = self.rng
        pieces, args = [], []
        for _ in range(r.randint(1, 3)):
            var, spec = self._field(ints, floats)
            literal = r.choice(LITERALS).replace("{", "{{").replace("}", "}}")
            pieces.append(literal + "{" + (":" + spec if spec else "") + "}")
            args.append(var)
        return "".join(pieces), args

    def _percent(self, ints, floats):
        r = self.rng
        pieces, args = [], []
        for _ in range(r.randint(1, 3)):
            if r.random() < 0.6:
                pieces.append(r.choice(PERCENT_INT))
                args.append(r.choice(ints))
            else:
                pieces.append(r.choice(PERCENT_FLOAT))
                args.append(r.choice(floats))
            pieces.append(r.choice([" ", "%% ", ": "]))
        template = "".join(pieces)
        if len(args) == 1 and r.random() < 0.5:
            return f"{template!r} % {args[0]}"
        return f"{template!r} % ({', '.join(args)},)"


def _entered(body, rng):
    """``body`` with (its own draws, so the rest of each seed's program stays as it
    was): about a third of the programs, the staged ``if`` or the loop inside a
    user's context manager that prints on entry and exit (``with Shown(x):``), an
    ``ExitStack`` whose callback prints, or a ``sys.stdout = CAPTURE`` by hand put
    back after it (silent14: the manager printed while tracing, before the body's
    text; the swapped stdout was not followed); and a Python number a staged ``if``
    stepped shown by ``%r`` or ``repr`` of a value computed from it (silent14:
    ``Array(2.5, dtype=float32)``)."""
    if rng.random() < 0.35:
        # (the first `if x > 2:` is the staged if; the one of `m` may read the same)
        found = [body.index(line) for line in ("if x > 2:", "for i in range(n):")
                 if line in body]
        if found:
            at = rng.choice(found)
            step = 4 if body[at] == "if x > 2:" else 2
            block = body[at:at + step]
            form = rng.choice(["class", "stack", "swap"])
            if form == "class":
                wrapped = [f"with Shown(x, {rng.choice(['a', 'n'])}):", block]
            elif form == "stack":
                wrapped = ["with contextlib.ExitStack() as stack:",
                           ["stack.callback(print, 'callback', x)", *block]]
            else:
                wrapped = ["kept = sys.stdout", "sys.stdout = CAPTURE", *block,
                           "sys.stdout = kept"]
            body = body[:at] + wrapped + body[at + step:]
    if rng.random() < 0.35:
        shown = ["'%r' % m", "'%r|%s' % (m, x)", "'%.2f' % m"]
        if _one_type(body):   # (a value computed from an int or a float: not known)
            shown += ["repr(m * 2)", "f'{m * 2!r}'", "'%r' % (m + 1,)"]
        body = [*body[:-1], f"print({rng.choice(shown)}, x)", body[-1]]
    return body


def _one_type(body) -> bool:
    """Whether the ``m`` a staged ``if`` steps is a Python number of one type on
    both paths (``m = 3``, ``m = m * 2``), not an int on one and a float on the other."""
    at = max(i for i, line in enumerate(body) if isinstance(line, str)
             and line.startswith("m = "))
    start, step = body[at][len("m = "):], body[at + 2][0][len("m = "):]
    start_float = "." in start
    step_float = start_float or "." in step if step.startswith("m ") else "." in step
    return start_float == step_float


def _renamed_prints(body, rng):
    """``body`` with some of its ``print(`` calls made as ``builtins.print(`` or, where
    they format nothing, ``echo(`` (``echo = print``: the converter sees no ``print``
    there, so an f-string or ``str(...)`` argument of it is made while tracing, and
    refused)."""
    out = []
    for line in body:
        if isinstance(line, list):
            out.append(_renamed_prints(line, rng))
        elif line.startswith("print(") and rng.random() < 0.5:
            plain = not any(mark in line for mark in ("f'", 'f"', ".format(", "%", "str(",
                                                        "repr("))
            name = rng.choice(["echo(", "builtins.print("]) if plain else "builtins.print("
            out.append(name + line[len("print("):])
        else:
            out.append(line)
    return out


def inputs_for(seed):
    rng = random.Random(seed * 7919 + 3)
    scalars = [(rng.randint(-6, 9), rng.randint(-6, 9), rng.randint(0, 3)) for _ in range(2)]
    batch = [(rng.randint(-6, 9), rng.randint(-6, 9), 2) for _ in range(3)]
    return scalars, batch


PRELUDE = ("import builtins\nimport contextlib\nimport io\nimport sys\n\n"
           "CAPTURE = io.StringIO()\n\n\n"
           "class Shown:\n"
           "    def __init__(self, x, k):\n        self.x, self.k = x, k\n\n"
           "    def __enter__(self):\n        print('enter', self.x, self.k)\n"
           "        return self\n\n"
           "    def __exit__(self, *exc):\n        print('exit', self.x)\n"
           "        return False\n\n\n")


def _printed(run, capture=None):
    """What ``run()`` prints: on stdout, and into ``capture`` (a program's ``CAPTURE``)."""
    import jax

    buffer = io.StringIO()
    if capture is not None:
        capture.seek(0)
        capture.truncate()
    with contextlib.redirect_stdout(buffer):
        run()
        jax.effects_barrier()
    return buffer.getvalue(), "" if capture is None else capture.getvalue()


def _lines(printed):
    """Each part of ``printed`` (``_printed``) as its sorted lines: vmap's order."""
    return tuple(sorted(part.splitlines()) for part in printed)


def check_program(fn, seed) -> list[str]:
    """The ways whose printed text differs from the original's (empty: all agree)."""
    import jax
    import jax.numpy as jnp

    import autograph

    scalars, batch = inputs_for(seed)
    problems = []
    capture = fn.__globals__.get("CAPTURE")
    compiled = jax.jit(autograph.convert(fn))
    for args in scalars:
        expected = _printed(lambda args=args: fn(*args), capture)
        if _printed(lambda args=args: autograph.convert(fn)(*args), capture) != expected:
            problems.append(f"convert {args}")
        traced = tuple(jnp.int32(v) for v in args)
        got = _printed(lambda traced=traced: compiled(*traced), capture)
        if got != expected:
            problems.append(f"compiled {args}:\n{got}!=\n{expected}")
    columns = [jnp.asarray(col, jnp.int32) for col in zip(*batch, strict=True)]
    runs = [_printed(lambda args=args: fn(*args), capture) for args in batch]
    expected = _lines(("".join(out for out, _ in runs), "".join(cap for _, cap in runs)))
    for label, batched in (("vmap", jax.vmap(autograph.convert(fn))),
                           ("vmap of jit", jax.vmap(jax.jit(autograph.convert(fn))))):
        got = _lines(_printed(lambda batched=batched: batched(*columns), capture))
        if got != expected:
            problems.append(f"{label} {batch}:\n{got}!=\n{expected}")
    return problems


def fuzz(first_seed: int, count: int, progress=None):
    """Generate and check ``count`` programs; returns ``(checked, mismatches)``."""
    mismatches = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(count):
            seed = first_seed + k
            name = f"p_{seed}"
            source = PrintProgramGenerator(seed).function(name)
            path = Path(tmp) / f"print_fuzz_{seed}.py"
            path.write_text(PRELUDE + source)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            try:
                problems = check_program(getattr(module, name), seed)
            except Exception as error:  # noqa: BLE001 - any failure is a mismatch
                problems = [f"raised {type(error).__name__}: {error}"]
            mismatches.extend(f"--- seed {seed}: {p}\n{source}" for p in problems)
            if progress is not None:
                progress(k + 1, mismatches)
    return count, mismatches


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    args = parser.parse_args(argv)
    start = time.time()

    def progress(done, mismatches):
        if done % 50 == 0 or done == args.count:
            print(f"{done} programs, {len(mismatches)} mismatches, "
                  f"{time.time() - start:.0f}s", flush=True)

    checked, mismatches = fuzz(args.seed, args.count, progress)
    for m in mismatches:
        print(m)
    print(f"print programs fuzzed: {checked}; mismatches: {len(mismatches)}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
