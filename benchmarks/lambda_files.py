"""Converting every lambda of a file full of lambdas (a dict literal, one per line).

    python -m benchmarks.lambda_files [size ...]

No line of such a literal parses alone, so each lambda is found in a parse of the
whole file; that parse is made once per version of the file and shared by all of
its lambdas. Reported per file size: the time to convert all of its lambdas with
a fresh transpiler (parse, find, analyse, rewrite, compile), in wall-clock and in
CPU time (what a busy machine inflates less), per lambda, and how many times the
file was parsed whole.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from autograph import parsing
from autograph.transpiler import Transpiler

SIZES = (200, 2000)


def table_source(size: int) -> str:
    """A module holding ``TABLE``: a dict literal of ``size`` lambdas, one per line."""
    entries = [f"    'k{i}': lambda x: x * {i} + 1 if x > {i} else x - {i},\n"
               for i in range(size)]
    return "TABLE = {\n" + "".join(entries) + "}\n"


def _load(directory: Path, size: int):
    name = f"ag_lambda_table_{size}"
    path = directory / f"{name}.py"
    path.write_text(table_source(size))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure_size(size: int, directory: Path) -> dict:
    """Convert every lambda of a new ``size``-line table; check a few results."""
    functions = list(_load(directory, size).TABLE.values())
    transpiler = Transpiler()
    parses = parsing.FILE_LAMBDAS.parses
    start, start_cpu = time.perf_counter(), time.process_time()
    converted = [transpiler.convert(fn) for fn in functions]
    total, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    for i in range(0, size, max(1, size // 10)):
        for x in (i - 1, i + 1):
            if converted[i](x) != functions[i](x):
                raise AssertionError(f"lambda {i} converted computes {converted[i](x)} "
                                     f"at {x}, the original {functions[i](x)}")
    return {"size": size, "total_s": total, "per_lambda_s": total / size, "cpu_s": cpu,
            "file_parses": parsing.FILE_LAMBDAS.parses - parses}


def measure(sizes=SIZES) -> list[dict]:
    """One row per size (see ``measure_size``); a failure is recorded, not raised."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        Transpiler().convert(_load(Path(tmp), 3).TABLE["k1"])      # warm-ups
        for size in sizes:
            try:
                rows.append(measure_size(size, Path(tmp)))
            except Exception as exc:  # noqa: BLE001 - the suite goes on
                rows.append({"size": size, "error": f"{type(exc).__name__}: {exc}"})
    return rows


def format_rows(rows: list[dict]) -> list[list[str]]:
    """Table rows: lambdas in the file, total, per lambda, whole-file parses."""
    from .suite import format_seconds

    return [[str(r["size"]), "error", r["error"][:60], "", ""] if "error" in r else
            [str(r["size"]), format_seconds(r["total_s"]), format_seconds(r["cpu_s"]),
             format_seconds(r["per_lambda_s"]), str(r["file_parses"])] for r in rows]


COLUMNS = ["lambdas in the file", "convert all", "(CPU time)", "per lambda",
           "whole-file parses"]


def main(*sizes: int) -> None:
    from .report import _table

    print(_table(COLUMNS, format_rows(measure(sizes or SIZES))))


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
