"""Does a change to the converters leave their output as it was?

A speed-up of conversion must not change what conversion makes. This dumps, for
the benchmark, corpus and converter-test functions (each with the default options
and as a Python twin) and for generated fuzz programs, the ``to_code`` text and
every code object's positions, names and variables, once with this checkout and
once with another (each in a process of its own), and compares the two:

    python -m benchmarks.conversion_identity --against /work/main [fuzz_count]

It prints how many entries each dump holds and the first entries that differ
(exit status 1 if any do). ``--dump FILE [fuzz_count]`` writes this checkout's
dump alone.
"""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import tempfile
import types

# Modules whose functions are converted (those a checkout lacks are skipped).
MODULES = (
    "benchmarks.programs", "benchmarks.python_mode_corpus", "tests.corpus.numerical",
    "tests.autograph.test_walk_samples", "benchmarks.numerical_corpus",
    "benchmarks.python_loops", "benchmarks.recursion", "benchmarks.lists_append",
    "benchmarks.bounded_loops", "benchmarks.calls", "autograph.examples",
    "tests.converters.test_control_flow", "tests.converters.test_dead_variables",
    "tests.converters.test_cells", "tests.converters.test_break_statements",
    "tests.converters.test_lists", "tests.converters.test_try_statements",
    "tests.converters.test_return_statements", "tests.converters.test_match",
    "tests.converters.test_carry_changes", "tests.converters.test_object_state",
    "tests.converters.test_scopes", "tests.converters.test_control_flow_obstacles",
)


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _entry(label, fn, options) -> str:
    """``to_code`` and each code object's positions, names and variables of ``fn``
    converted with ``options`` (or the error conversion raised)."""
    from autograph.transpiler import Transpiler

    try:
        source = Transpiler().source(fn, options)
        program = Transpiler().program(fn, options)
    except Exception as e:   # an error is output too: it must stay the same
        return f"## {label}\nERROR {type(e).__name__}: {e}"
    codes = [f"{c.co_qualname} {c.co_firstlineno} {list(c.co_positions())} {c.co_names} "
             f"{c.co_varnames}" for c in _code_objects(program.code)]
    return "\n".join([f"## {label}", source, *codes])


def dump(path: str, fuzz_count: int = 300) -> int:
    """Write this checkout's dump to ``path``; the number of entries."""
    from autograph.context import ConversionOptions
    from autograph.transpiler import PythonTwin

    option_sets = (ConversionOptions(), PythonTwin())
    out = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except Exception as e:
            out.append(f"## {name} import failed {type(e).__name__}")
            continue
        for fname, fn in sorted(vars(module).items()):
            if (inspect.isfunction(fn) and fn.__module__ == name
                    and not fname.startswith("test_")):
                out += [_entry(f"{name}.{fname} {type(o).__name__}", fn, o)
                        for o in option_sets]
    if fuzz_count:
        from tests.fuzz import harness

        programs = harness.generate(0, fuzz_count, harness.detect_features())
        with tempfile.TemporaryDirectory() as directory:
            for i in range(0, len(programs), 50):
                chunk = programs[i:i + 50]
                harness.load(chunk, directory)
                out += [_entry(f"fuzz {p.name} {type(o).__name__}", p.fn, o)
                        for p in chunk for o in option_sets]
    with open(path, "w") as f:
        f.write("\n".join(out))
    return len(out)


def _dump_in(root: str, path: str, fuzz_count: int) -> None:
    """Run ``dump`` in a process importing the checkout at ``root``."""
    code = (f"import runpy, sys; sys.argv = [sys.argv[0], '--dump', {path!r}, "
            f"'{fuzz_count}']; runpy.run_path({os.path.abspath(__file__)!r}, "
            "run_name='__main__')")
    env = dict(os.environ, PYTHONPATH=root)
    subprocess.run([sys.executable, "-c", code], cwd=root, env=env, check=True)


def compare(other: str, fuzz_count: int = 300) -> bool:
    """Dump this checkout and ``other``; print the differences. Whether they match."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as directory:
        paths = {}
        for label, root in (("this", here), ("other", os.path.abspath(other))):
            paths[label] = os.path.join(directory, label)
            _dump_in(root, paths[label], fuzz_count)
        entries = {k: open(p).read().split("\n## ") for k, p in paths.items()}
    print(f"entries: this {len(entries['this'])}, other {len(entries['other'])}")
    differ = [(a, b) for a, b in zip(entries["this"], entries["other"], strict=False)
              if a != b]
    for a, b in differ[:5]:
        print("--- this\n" + a[:2000] + "\n--- other\n" + b[:2000])
    same = not differ and len(entries["this"]) == len(entries["other"])
    print("same output" if same else f"{len(differ)} entries differ")
    return same


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        print(dump(sys.argv[2], *map(int, sys.argv[3:])), "entries")
    elif sys.argv[1:2] == ["--against"]:
        sys.exit(0 if compare(sys.argv[2], *map(int, sys.argv[3:])) else 1)
    else:
        sys.exit(__doc__)
