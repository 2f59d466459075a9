"""CPython's language tests, unconverted and converted: ``python -m tests.cpython.run [modules]``.

Runs each module (``test_scope`` or ``test.test_scope``; default: the language
modules of ``harness.DEFAULT_MODULES``) in a process of its own, prints one row per
module (tests compared, passing unconverted, passing converted, differing, and
the share of the tests passing unconverted that pass converted), then compares the
differing tests with ``expected_failures.txt``: a test that differs but is not
listed, or is listed but no longer differs (shrink the list), is reported and
makes the exit status 1.

    python -m tests.cpython.run                      # every default module
    python -m tests.cpython.run test_scope test_patma --diff
    python -m tests.cpython.run --only test.test_scope.ScopeTests.testNonLocalGenerator
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

EXPECTED_FAILURES = Path(__file__).with_name("expected_failures.txt")
# The issue classes an expected failure may belong to (see the file's header).
CLASSES = ("21.1", "21.2", "21.3", "21.4", "21.5", "21.6", "21.7", "21.8", "15", "16", "17",
           "introspection")


@dataclass(frozen=True)
class Expected:
    """One line of the expected-failure list."""

    test_id: str
    issue: str
    reason: str


def read_expected(path: Path = EXPECTED_FAILURES) -> dict:
    """``{test id: Expected}`` from the list; ``#`` starts a comment line."""
    out = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", 2)]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{path}:{number}: expected 'test id | class | reason'")
        test_id, issue, reason = parts
        if issue not in CLASSES:
            raise ValueError(f"{path}:{number}: unknown class {issue!r} (one of {CLASSES})")
        if test_id in out:
            raise ValueError(f"{path}:{number}: {test_id} is listed twice")
        out[test_id] = Expected(test_id, issue, reason)
    return out


def module_of(test_id: str) -> str:
    """``test_scope`` for ``test.test_scope.ScopeTests.testX``."""
    return test_id.split(".")[1]


def run_modules(modules, timeout=None, jobs=1, only=None):
    """Each module's ``ModuleReport``, each run in a fresh interpreter."""
    from tests.cpython.harness import ModuleReport

    def one(module):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.json")
            command = [sys.executable, "-m", "tests.cpython.run", "--worker", module,
                       "--out", out]
            if timeout is not None:
                command += ["--timeout", str(timeout)]
            for test_id in only or ():
                command += ["--only", test_id]
            env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
            proc = subprocess.run(command, capture_output=True, text=True, env=env,
                                  cwd=Path(__file__).resolve().parents[2])
            if proc.returncode != 0 or not os.path.exists(out):
                tail = (proc.stdout + proc.stderr)[-3000:]
                return ModuleReport(module, [], error=f"worker exited {proc.returncode}: "
                                    f"{tail}")
            with open(out) as f:
                return ModuleReport.from_json(json.load(f))

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(one, modules))


def table(reports) -> str:
    """One row per module and a total."""
    rows = [("module", "tests", "pass unconv.", "pass conv.", "differing", "% kept")]
    totals = [0, 0, 0, 0, 0]
    for r in reports:
        if r.error:
            rows.append((r.module, "-", "-", "-", "-", "error"))
            continue
        n = len(r.outcomes)
        passing = [o for o in r.outcomes if o.original == "pass"]
        kept = sum(1 for o in passing if o.converted == "pass")
        conv = sum(1 for o in r.outcomes if o.converted == "pass")
        differ = sum(1 for o in r.outcomes if not o.agrees)
        for i, v in enumerate((n, len(passing), conv, differ, kept)):
            totals[i] += v
        rows.append((r.module, n, len(passing), conv, differ, _percent(kept, len(passing))))
    rows.append(("total", *totals[:4], _percent(totals[4], totals[1])))
    widths = [max(len(str(row[i])) for row in rows) for i in range(6)]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def _percent(part, whole) -> str:
    return f"{100.0 * part / whole:.1f}" if whole else "-"


def compare_with_expected(reports, expected, only=None):
    """``(unexpected, fixed, stale)``: differing tests not on the list, listed tests
    that now agree, and listed tests of the modules run that no longer exist."""
    ran = {r.module for r in reports if not r.error}
    outcomes = {o.test_id: o for r in reports for o in r.outcomes}
    unexpected = [o for o in outcomes.values() if not o.agrees and o.test_id not in expected]
    fixed, stale = [], []
    for test_id, entry in expected.items():
        if module_of(test_id) not in ran:
            continue
        if only and not any(test_id == o or test_id.startswith(o + ".") for o in only):
            continue
        outcome = outcomes.get(test_id)
        if outcome is None:
            stale.append(entry)
        elif outcome.agrees:
            fixed.append(entry)
    return unexpected, fixed, stale


def describe(outcome) -> str:
    detail = outcome.details.get("converted") or outcome.details.get("original") or ""
    detail = " ".join(detail.split())[:300]
    return (f"{outcome.test_id}: unconverted {outcome.original}, converted "
            f"{outcome.converted}" + (f"\n      {detail}" if detail else ""))


def by_class(expected, modules=None) -> dict:
    counts = {}
    for entry in expected.values():
        if modules is None or module_of(entry.test_id) in modules:
            counts[entry.issue] = counts.get(entry.issue, 0) + 1
    return dict(sorted(counts.items()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="test modules (default: the language set)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per test run")
    parser.add_argument("--jobs", type=int, default=1, help="modules run at once")
    parser.add_argument("--only", action="append", default=[],
                        help="a test id (or id prefix) to run; repeatable")
    parser.add_argument("--diff", action="store_true", help="print every differing test")
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args)

    from tests.cpython.harness import DEFAULT_MODULES

    modules = [m.removeprefix("test.") for m in args.modules] or list(DEFAULT_MODULES)
    if args.only and not args.modules:
        modules = sorted({module_of(t) for t in args.only})
    start = time.time()
    reports = run_modules(modules, args.timeout, args.jobs, args.only)
    print(table(reports))
    for r in reports:
        if r.error:
            print(f"\n{r.module}: could not run: {r.error}")
    expected = read_expected()
    unexpected, fixed, stale = compare_with_expected(reports, expected, args.only)
    if args.diff:
        print("\ndiffering tests:")
        for r in reports:
            for o in r.outcomes:
                if not o.agrees:
                    entry = expected.get(o.test_id)
                    tag = f"[{entry.issue}] " if entry else "[not listed] "
                    print("  " + tag + describe(o))
    print(f"\nexpected failures by class (modules run): {by_class(expected, set(modules))}")
    if unexpected:
        print(f"\n{len(unexpected)} differing test(s) not in {EXPECTED_FAILURES.name}:")
        for o in unexpected:
            print("  " + describe(o))
    if fixed:
        print(f"\n{len(fixed)} listed test(s) now agree: remove them from "
              f"{EXPECTED_FAILURES.name}:")
        for e in fixed:
            print(f"  {e.test_id} ({e.issue})")
    if stale:
        print(f"\n{len(stale)} listed test(s) no longer exist:")
        for e in stale:
            print(f"  {e.test_id}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.to_json() for r in reports], f, indent=1)
    print(f"\n{time.time() - start:.0f}s")
    failed = unexpected or fixed or stale or any(r.error for r in reports)
    return 1 if failed else 0


def _worker(args) -> int:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from tests.cpython import harness

    timeout = args.timeout if args.timeout is not None else harness.default_timeout()
    report = harness.run_module(args.worker, timeout, set(args.only) or None)
    with open(args.out, "w") as f:
        json.dump(report.to_json(), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
