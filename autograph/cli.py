"""The ``autograph`` command line: ``demo``, ``code`` and ``bench``.

Run ``autograph --help`` or ``autograph COMMAND --help`` for examples.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

DEMO_HELP = """\
Convert the SPEC's seed examples (huber_loss, collatz, and a nested if/while
that prints) and show, for each: the generated code, the eager result, the
compiled (autograph.to_graph) result, and the time per call of both.

examples:
  autograph demo
  autograph demo --only collatz
  python -m autograph demo
"""

CODE_HELP = """\
Print the code autograph generates for one function of a Python file.
The file is imported as a module (its top-level code runs).

examples:
  autograph code autograph/examples.py:collatz
  autograph code my_model.py:train_step
  autograph code my_model.py:Model.forward
"""

BENCH_HELP = """\
Run the benchmark suite: every workload as the eager original, as
autograph.to_graph of that source, as hand-written jax.lax, and (where it
applies) as jax.jit with Python loops unrolled; timings interleaved in one
process. Prints tables and writes results.json, results.md and results.png
to --out.

examples:
  autograph bench --quick                 # under a minute
  autograph bench --out figures/          # the full suite, several minutes
  autograph bench --quick --only collatz_27 huber_scalar --no-scaling
  autograph bench --list
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``autograph`` command."""
    parser = argparse.ArgumentParser(
        prog="autograph",
        description="jax-autograph: eager-style Python control flow, staged into jax.lax.",
        epilog="examples:\n  autograph demo\n  autograph code autograph/examples.py:collatz\n"
               "  autograph bench --quick --out bench-out",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser("demo", help="run the SPEC examples, eager and compiled",
                          description=DEMO_HELP,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--only", metavar="NAME", choices=DEMO_NAMES,
                      help=f"run one example ({', '.join(DEMO_NAMES)})")
    demo.set_defaults(handler=run_demo, subparser=demo)

    code = sub.add_parser("code", help="print the generated code of FILE.py:FUNCTION",
                          description=CODE_HELP,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    code.add_argument("target", metavar="FILE.py:FUNCTION",
                      help="a Python file and a function in it (Class.method works too)")
    code.set_defaults(handler=run_code, subparser=code)

    bench = sub.add_parser("bench", help="run the benchmark suite",
                           description=BENCH_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_argument("--quick", action="store_true",
                       help="fewer rounds and no long unrolls: finishes in under a minute")
    bench.add_argument("--out", metavar="DIR", default="bench-out",
                       help="where results.json, .md and .png go (default: ./bench-out)")
    bench.add_argument("--only", metavar="WORKLOAD", nargs="+",
                       help="run only these workloads (see --list)")
    bench.add_argument("--list", action="store_true", help="list the workloads and exit")
    bench.add_argument("--no-scaling", action="store_true",
                       help="skip the compile-time scaling curve")
    bench.add_argument("--no-chart", action="store_true", help="do not write the PNG chart")
    bench.add_argument("--unroll-cap", metavar="N", type=int,
                       help="skip jax.jit-unrolled runs costing more than N loop bodies "
                            "(default: 0 with --quick, 1000 otherwise)")
    bench.add_argument("--scaling-unroll-cap", metavar="N", type=int,
                       help="largest n timed unrolled in the scaling curve "
                            "(default: 100 with --quick, 1000 otherwise)")
    bench.set_defaults(handler=run_bench, subparser=bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``autograph`` console script; returns the exit status.

    When the reader of our output goes away (``autograph demo | head -1``), stop
    quietly with the status a Unix tool killed by SIGPIPE has, as ``cat`` does.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.handler(args, args.subparser)
        sys.stdout.flush()      # a closed pipe raises here, not at interpreter exit
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_STATUS
    return status


# 128 + SIGPIPE: what a shell reports for a command whose reader closed the pipe.
BROKEN_PIPE_STATUS = 128 + 13


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the flush at exit does not fail
    again on the closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):   # stdout is no file descriptor (captured, closed)
        pass


# --- demo -------------------------------------------------------------------

DEMO_NAMES = ("huber_loss", "collatz", "count_to_five")


def _demo_cases():
    import jax.numpy as jnp

    from autograph import examples

    return [
        ("huber_loss", examples.huber_loss, (jnp.float32(2.5),)),
        ("collatz", examples.collatz, (jnp.int32(27),)),
        ("count_to_five", examples.count_to_five, (jnp.int32(2),)),
    ]


def _per_call(fn, args, batches: int = 5, batch_s: float = 0.04) -> float:
    """Median seconds per call of ``fn(*args)`` over a few timed batches.

    Whatever the calls print (Python ``print`` or ``jax.debug.print``) is
    swallowed, so the timing loop does not flood the terminal.
    """
    import contextlib
    import io
    import statistics

    import jax

    def batch(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            out = fn(*args)
        jax.block_until_ready(out)
        return time.perf_counter() - start

    with contextlib.redirect_stdout(io.StringIO()):
        once = batch(1)
        n = max(1, min(10_000, int(batch_s / max(once, 1e-9))))
        times = [batch(n) / n for _ in range(batches)]
        jax.effects_barrier()
    return statistics.median(times)


def _fmt_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def run_demo(args, parser) -> int:
    """``autograph demo``: show each SPEC example converted, run eagerly and compiled."""
    import jax

    import autograph

    status = 0
    for name, fn, fn_args in _demo_cases():
        if args.only and name != args.only:
            continue
        shown = ", ".join(f"jnp.{a.dtype.name}({a.item()!r})" for a in fn_args)
        print("=" * 72)
        print(f"{name}({shown})   [{fn.__module__}]")
        print("=" * 72)
        try:
            print("--- generated code (autograph.to_code) ---")
            print(autograph.to_code(fn).rstrip())
            print(f"--- eager: {name}({shown}) ---")
            eager = fn(*fn_args)
            print(f"result: {eager!r}")
            print(f"--- compiled: autograph.to_graph({name})({shown}) ---")
            compiled_fn = autograph.to_graph(fn)
            compiled = jax.block_until_ready(compiled_fn(*fn_args))
            jax.effects_barrier()
            print(f"result: {compiled!r}")
            t_eager = _per_call(fn, fn_args)
            t_compiled = _per_call(compiled_fn, fn_args)
            ratio = t_eager / t_compiled
            verdict = (f"compiled is {ratio:.1f}x faster" if ratio >= 1
                       else f"compiled is {1 / ratio:.1f}x slower")
            print(f"time per call: eager {_fmt_seconds(t_eager)}, compiled "
                  f"{_fmt_seconds(t_compiled)} ({verdict})")
        except Exception as exc:  # report and go on to the next example
            print(f"error: {type(exc).__name__}: {exc}")
            status = 1
        print()
    return status


# --- code -------------------------------------------------------------------

def load_module(path: Path):
    """Import the Python file at ``path`` as a fresh module and return it.

    The file's directory comes first on ``sys.path`` while it runs, as with
    ``python FILE.py``, so it can import the modules beside it.
    """
    path = path.resolve()
    name = f"_autograph_cli_{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.path.remove(str(path.parent))
    return module


def _functions_in(module) -> list[str]:
    return sorted(name for name, value in vars(module).items()
                  if callable(value) and getattr(value, "__module__", None) == module.__name__)


def run_code(args, parser) -> int:
    """``autograph code FILE.py:FUNCTION``: print the generated code of that function."""
    file_part, sep, func_part = args.target.rpartition(":")
    if not sep or not file_part or not func_part:
        parser.error(f"expected FILE.py:FUNCTION, got {args.target!r} "
                     "(example: autograph code autograph/examples.py:collatz)")
    path = Path(file_part)
    if not path.is_file():
        parser.error(f"no such file: {file_part}")
    try:
        module = load_module(path)
    except SystemExit as exc:
        call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        print(f"autograph code: error: importing {file_part} exited ({call}) "
              f"before {func_part} could be read: `autograph code` imports the file as a "
              "module, which runs its top-level code. Put the code that runs the script "
              'under `if __name__ == "__main__":`.', file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"autograph code: error: importing {file_part} failed: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    target = module
    for part in func_part.split("."):
        if not hasattr(target, part):
            known = ", ".join(_functions_in(module)) or "none"
            parser.error(f"no function {func_part!r} in {file_part} (functions there: {known})")
        target = getattr(target, part)
    if not callable(target):
        parser.error(f"{func_part!r} in {file_part} is a {type(target).__name__}, "
                     "not a function")

    import autograph

    try:
        print(autograph.to_code(target).rstrip())
    except Exception as exc:
        print(f"autograph code: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


# --- bench ------------------------------------------------------------------

def import_benchmarks():
    """Import the ``benchmarks`` package of this source checkout.

    ``benchmarks/`` sits next to ``autograph/`` in the repository and is not
    installed. It is imported from its folder by location (``sys.path`` stays as
    it is), so this works from any working directory with an editable install or
    a plain checkout; an already imported ``benchmarks`` is reused.
    """
    if "benchmarks" in sys.modules:
        return sys.modules["benchmarks"]
    init = Path(__file__).resolve().parent.parent / "benchmarks" / "__init__.py"
    if not init.is_file():
        raise ImportError(f"no benchmark suite at {init.parent}")
    spec = importlib.util.spec_from_file_location(
        "benchmarks", init, submodule_search_locations=[str(init.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["benchmarks"]
        raise
    return module


def run_bench(args, parser) -> int:
    """``autograph bench``: run the benchmark suite and write its report."""
    try:
        benchmarks = import_benchmarks()
    except ImportError as exc:
        parser.error(f"the benchmark suite needs a source checkout of jax-autograph "
                     f"(git clone, then pip install -e .): {exc}")
    from benchmarks.suite import SuiteConfig
    from benchmarks.workloads import all_workloads, get_workloads

    if args.list:
        for w in all_workloads():
            print(f"{w.name:<20} {w.description}")
        return 0
    try:
        get_workloads(args.only)
    except KeyError as exc:
        parser.error(str(exc.args[0]))
    overrides = {"only": args.only, "scaling": not args.no_scaling}
    if args.unroll_cap is not None:
        overrides["unroll_cap"] = args.unroll_cap
    if args.scaling_unroll_cap is not None:
        overrides["scaling_unroll_cap"] = args.scaling_unroll_cap
    preset = SuiteConfig.quick_preset if args.quick else SuiteConfig.full_preset
    config = preset(**overrides)
    problem = _unwritable_directory(Path(args.out))
    if problem:
        parser.error(f"--out {args.out}: {problem}")

    def progress(line: str) -> None:
        print(line, flush=True)

    try:
        benchmarks.run_and_report(config, args.out, progress, chart=not args.no_chart)
    except OSError as exc:      # the directory went away or filled up meanwhile
        print(f"autograph bench: error: writing the results to {args.out} failed: {exc}",
              file=sys.stderr)
        return 2
    return 0


def _unwritable_directory(path: Path) -> str | None:
    """Why the results cannot be written to the directory ``path`` (made if
    missing), or ``None`` when they can."""
    import tempfile

    if path.exists() and not path.is_dir():
        return "is a file, not a directory (give a directory for the results)"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"cannot write there ({exc.strerror or exc})"
    return None
