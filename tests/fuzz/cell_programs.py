"""Fuzzer for closure cells across staged and unrolled regions (issue 26.1, 26.2).

    python -m tests.fuzz.cell_programs --count 500

Two kinds of program, each checked against the original run on Python ints:
converted with Python ints, ``to_graph`` with ``jnp.int32`` arguments, and
``jax.jit`` of the converted function.

- ``escaping_closure``: a loop over a Python range whose body makes a closure
  reading the loop index and a traced variable it updates, and the closure escapes
  the loop (as loop state, or appended to a list): the loop cannot carry a
  function, so it runs unrolled, and the closure must read the last index.
- ``branch_cell``: a staged ``if`` whose one branch rebinds a name a closure reads
  (a scoped cell) and whose other branch reads it: each traced branch must start
  from the cell's value before the ``if``.
- ``object_view``: a settings object made in the function, its attributes assigned
  in a random order (a pytree of them, a dict, sorts them), read by a staged loop's
  condition through ``and`` (lambdas: the object is a cell the loop views) or by a
  staged ``break`` test, and sometimes changed in the body: the loop must not take
  the object as changed by its condition (it did where the attributes were not in
  sorted order) and must leave Python's attribute values.
- ``foreign_nonlocal``: a helper made by another function (a counter factory) that
  assigns its ``nonlocal`` variable, called in a loop over a Python range (staged
  once while tracing, it counted one call: it must run unrolled, as Python counts),
  in a loop whose condition is traced, or in one branch of a staged ``if`` (those
  cannot count as Python does: a ConversionError at the user's line is allowed
  there, and only there).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import random
import sys
import tempfile
from pathlib import Path

KINDS = ("escaping_closure", "branch_cell", "object_view", "foreign_nonlocal")


def _expr(r, names):
    a, b = r.sample(names, 2) if len(names) > 1 else (names[0], names[0])
    return r.choice([f"({a} + {b} * {r.randint(1, 3)}) % 37", f"({a} * 2 + {r.randint(0, 5)}) % 41",
                     f"{a} + {r.randint(-3, 3)}"])


def escaping_closure(r, name) -> str:
    trips = r.randint(1, 4)
    prebound = r.random() < 0.5
    in_list = r.random() < 0.4
    closure_reads = r.choice(["i + b", "i * 3 + b", "b - i", "i * 10 + b + a"])
    lines = [f"def {name}(a, b, n):"]
    if prebound:
        lines.append(f"    i = {r.randint(-2, 2)}")
    if in_list:
        lines.append("    fs = []")
    else:
        lines.append("    g = lambda: 0")
    loop = r.choice([f"range({trips})", f"range(1, {trips + 1})", f"range({trips}, 0, -1)"])
    lines.append(f"    for i in {loop}:")
    update = f"        b = {_expr(r, ['b', 'a', 'i'])}"
    closure = ("        fs.append(lambda: " + closure_reads + ")" if in_list
               else "        g = lambda: " + closure_reads)
    lines.extend([update, closure] if r.random() < 0.5 else [closure, update])
    if r.random() < 0.5:
        lines.append("        n = n + i")
    if in_list:
        pick = r.randint(0, trips - 1)
        lines.append(f"    return fs[{pick}]() + fs[-1]() + n")
    else:
        lines.append("    return g() + n")
    return "\n".join(lines) + "\n"


def branch_cell(r, name) -> str:
    rebind = r.choice(["5", "t + 1", "t * 2 - a", "(t + b) % 7"])
    read = r.choice(["c = t", "c = t + c", "c = c - t * 2"])
    threshold = r.randint(-2, 2)
    closure_first = r.random() < 0.5
    lines = [f"def {name}(a, b, c):", f"    t = {r.choice(['a', 'a + 1', 'a * b % 9'])}",
             f"    if b > {threshold}:"]
    taken = [f"        t = {rebind}", "        g = lambda: t + 1"]
    if r.random() < 0.5:
        taken.append("        c = g()")
    other = [f"        {read}"]
    if closure_first:
        lines.extend(taken + ["    else:"] + other)
    else:
        lines[-1] = f"    if b <= {threshold}:"
        lines.extend(other + ["    else:"] + taken)
    lines.append("    return c")
    return "\n".join(lines) + "\n"


def object_view(r, name) -> str:
    attributes = r.sample(["zeta", "limit", "alpha", "step", "mid"], 3)
    values = {n: r.randint(1, 4) for n in attributes}
    stop, bound, step = attributes
    lines = [f"class Box_{name}:", "    def __init__(self):"]
    lines += [f"        self.{n} = {values[n]}" for n in attributes]
    lines += [f"def {name}(a, b, c):", f"    box = Box_{name}()", "    x = a"]
    change = f"        box.{step} = box.{step} + 1" if r.random() < 0.5 else None
    if r.random() < 0.5:
        lines += ["    i = 0",
                  f"    while i < box.{bound} and x % 5 != box.{stop}:",
                  f"        x = x + box.{step} + b"]
        lines += [change] if change else []
        lines += ["        i += 1"]
    else:
        lines += [f"    for _ in range(box.{bound}):",
                  f"        if (x + box.{stop}) % 3 == 0:",
                  "            break",
                  f"        x = x + box.{step} + b"]
        lines += [change] if change else []
    lines.append(f"    return x + box.{step} * c")
    return "\n".join(lines) + "\n"


def foreign_nonlocal(r, name) -> str:
    step = r.choice(["count + 1", "count * 2 + 1", "count + v % 3", "(count + v) % 11"])
    lines = [f"def make_{name}():", f"    count = {r.randint(0, 3)}", "    def bump(v):",
             "        nonlocal count", f"        count = {step}", "        return v + count",
             "    def read():", "        return count", "    return bump, read",
             f"def {name}(a, b, c):", f"    bump, read = make_{name}()"]
    form = r.choice(["range", "range", "while", "if"])
    if form == "range":
        lines += [f"    for i in range({r.randint(1, 4)}):",
                  f"        a = {r.choice(['bump(a)', 'bump(b) + i', 'a + bump(i)'])} % 97"]
    elif form == "while":
        lines += ["    i = 0", f"    while i < 3 and a < {r.randint(5, 30)}:",
                  "        a = bump(a) % 97 + 1", "        i += 1"]
    else:
        lines += [f"    if b > {r.randint(-2, 2)}:", "        a = bump(a)", "    else:",
                  "        a = a - 1"]
    lines.append("    return a + read() * c")
    return "\n".join(lines) + "\n"


GENERATORS = {"escaping_closure": escaping_closure, "branch_cell": branch_cell,
              "object_view": object_view, "foreign_nonlocal": foreign_nonlocal}
# Kinds whose staged forms may be refused (a ConversionError at the user's line):
# a helper's nonlocal assigned under a traced condition cannot count as Python does.
REFUSABLE = {"foreign_nonlocal": ("    while ", "    if ")}


def programs(count: int, seed: int = 0):
    """``(kind, source, name)`` of ``count`` programs, the kinds alternating."""
    r = random.Random(seed)
    for k in range(count):
        kind = KINDS[k % len(KINDS)]
        name = f"f_{seed}_{k}"
        yield kind, GENERATORS[kind](r, name), name


def _load(sources, folder: Path) -> object:
    path = folder / "cell_fuzz_programs.py"
    path.write_text("".join(sources))
    spec = importlib.util.spec_from_file_location(f"cell_fuzz_{id(folder)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(count: int, seed: int = 0):
    """``(programs by kind, mismatches)``: each mismatch is ``(kind, source, args,
    mode, expected, got)``."""
    listed = list(programs(count, seed))
    with tempfile.TemporaryDirectory(prefix="cell_fuzz_") as folder:
        module = _load([source + "\n\n" for _, source, _ in listed], Path(folder))
        return _compare(listed, module, random.Random(seed + 1))


def _compare(listed, module, r):
    """Each program run with Python ints, converted, staged by ``to_graph`` and under
    ``jax.jit``, against the original's answer."""
    import jax
    import jax.numpy as jnp

    import autograph

    ran, found = collections.Counter(), []
    for kind, source, name in listed:
        fn = getattr(module, name)
        args = (r.randint(-5, 5), r.randint(-5, 5), r.randint(-5, 5))
        expected = fn(*args)
        traced = [jnp.int32(a) for a in args]
        modes = {"convert": lambda fn=fn, args=args: autograph.convert(fn)(*args),
                 "to_graph": lambda fn=fn, traced=traced: autograph.to_graph(fn)(*traced),
                 "jit": lambda fn=fn, traced=traced: jax.jit(autograph.convert(fn))(*traced)}
        for mode, run in modes.items():
            try:
                got = int(run())
            except Exception as error:  # noqa: BLE001 - any failure is a mismatch
                got = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
            refusable = any(form in source for form in REFUSABLE.get(kind, ()))
            if got != expected and not (refusable and mode != "convert" and str(
                    got).startswith("ConversionError")):
                found.append((kind, source, args, mode, expected, got))
        ran[kind] += 1
    return ran, found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ran, found = check(args.count, args.seed)
    for kind, source, call, mode, expected, got in found:
        print(f"--- {kind} {mode} args {call}: expected {expected}, got {got}\n{source}")
    print("programs by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(ran.items())))
    print(f"programs: {sum(ran.values())}; mismatches: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
