"""Fuzzer for checks inside ``try`` statements: what a handler catches decides how a
traced check may be staged.

    python -m tests.fuzz.try_programs --count 300

Each program computes inside a ``try`` something Python refuses for some values:
``math.log``/``math.sqrt``/``math.acos`` of a value out of its domain, ``int()`` of
an infinity or a NaN, or ``if x < k: raise ValueError`` / ``raise KeyError``; its ``except``
names ``ValueError``, ``KeyError``, ``TypeError``, ``ArithmeticError``,
``Exception`` or a tuple of them. Run on Python floats on both sides of the domain,
the original's outcome (a value, or an exception's type) must be the outcome of
the converted function with Python floats, of ``to_graph`` and of ``jax.jit`` of
the converted function with float32 scalars; a ``ConversionError`` (a refusal at
the user's line) is allowed where a handler could catch the error, and counted.
Before handlers were told apart by the names they catch, a checked call inside
``except ValueError`` raised from the compiled call where Python's ``except`` gives
its fallback, and a checked ``raise`` inside ``except KeyError`` raised while
tracing for every input.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import math
import random
import sys
import tempfile
from pathlib import Path

RISKY = {
    "log": ("y = math.log(x + {k})", ValueError),
    "sqrt": ("y = math.sqrt(x - {k})", ValueError),
    "acos": ("y = math.acos(x / {d})", ValueError),
    "int": ("y = int(x * math.inf) if x < {k} else x", (ValueError, OverflowError)),
    "raise_value": ("if x < {k}:\n            raise ValueError('small')\n        y = x",
                    ValueError),
    "raise_key": ("if x > {k}:\n            raise KeyError('large')\n        y = -x",
                  KeyError),
}
HANDLERS = ["ValueError", "KeyError", "TypeError", "(TypeError, ValueError)",
            "(KeyError, RuntimeError)", "Exception", "ArithmeticError"]
INPUTS = (-3.0, -0.5, 0.0, 0.5, 2.0, 3.0)


def program(r, name) -> tuple[str, str]:
    kind = r.choice(sorted(RISKY))
    risky = RISKY[kind][0].format(k=r.choice([0, 1, 2]), d=r.choice([1, 2]))
    handler = r.choice(HANDLERS)
    lines = [f"def {name}(x):", "    try:"]
    if r.random() < 0.4:
        lines.append("        x = x * 1.5")
    lines += ["        " + line.strip() if i == 0 else line for i, line in
              enumerate(risky.split("\n"))]
    lines += [f"    except {handler}:", f"        y = {r.choice(['-1.0', '0.0', 'x * 2.0'])}",
              "    return y * 1.0"]
    return kind, "\n".join(lines) + "\n"


def _outcome(fn, x):
    from autograph.errors import ConversionError

    try:
        value = float(fn(x))
    except ConversionError:
        return "refused"
    except Exception as error:  # noqa: BLE001 - the outcome compared
        for kind in (ValueError, KeyError, OverflowError, ZeroDivisionError):
            # (inside the user's jax.jit a check's error comes as JaxRuntimeError
            # naming it: the documented form, tests/converters/test_raises.py)
            if isinstance(error, kind) or f"{kind.__name__}: " in str(error):
                return kind.__name__
        return f"{type(error).__name__}: {str(error)[:80]}"
    return "nan" if math.isnan(value) else round(value, 4)


def check(count: int, seed: int = 0):
    """``(programs by kind, refusals, mismatches)``; a mismatch is ``(kind, source,
    input, mode, expected, got)``."""
    import jax
    import jax.numpy as jnp

    import autograph

    r = random.Random(seed)
    listed = [(f"f_{seed}_{k}", *program(r, f"f_{seed}_{k}")) for k in range(count)]
    ran, refused, found = collections.Counter(), collections.Counter(), []
    with tempfile.TemporaryDirectory(prefix="try_fuzz_") as folder:
        path = Path(folder) / "try_fuzz_programs.py"
        path.write_text("import math\n\n" + "\n\n".join(src for _, _, src in listed))
        spec = importlib.util.spec_from_file_location(f"try_fuzz_{seed}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, kind, source in listed:
            fn = getattr(module, name)
            modes = {"convert": (autograph.convert(fn), float),
                     "to_graph": (autograph.to_graph(fn), jnp.float32),
                     "jit": (jax.jit(autograph.convert(fn)), jnp.float32)}
            for x in INPUTS:
                expected = _outcome(fn, x)
                for mode, (run, make) in modes.items():
                    got = _outcome(run, make(x))
                    if got == "refused" and mode != "convert":
                        refused[kind] += 1
                    elif got != expected:
                        found.append((kind, source, x, mode, expected, got))
            ran[kind] += 1
    return ran, refused, found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    ran, refused, found = check(args.count, args.seed)
    for kind, source, x, mode, expected, got in found[:20]:
        print(f"--- {kind} {mode} x={x}: expected {expected}, got {got}\n{source}")
    print("programs by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(ran.items())))
    print("refused (calls): " + ", ".join(f"{k} {n}" for k, n in sorted(refused.items())))
    print(f"programs: {sum(ran.values())}; mismatches: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
