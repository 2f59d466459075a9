"""Where the unroll fallback is taken: loops staged and unrolled over the benchmark
workloads and the test corpus of issue 17.

    python -m benchmarks.unrolling

A static loop is staged when its body allows it and unrolled (as ``jax.jit`` of the
original runs it) only when it needs Python iteration. Each program is traced once
under ``unrolling.count_decisions``; a row gives, per corpus, how many loops were
staged and unrolled, and how many programs took a decision other than the one
expected of them (every benchmark workload stages all its loops; each test-corpus
program says what it expects).
"""

from __future__ import annotations

import jax

import autograph
from autograph.runtime import unrolling

from .workloads import AUTOGRAPH, all_workloads


def _decisions(trace) -> dict:
    with unrolling.count_decisions() as seen:
        trace()
    return {"staged": seen.counts["staged"], "unrolled": seen.counts["unrolled"],
            "reasons": dict(seen.reasons)}


def workload_rows() -> list[dict]:
    """Each benchmark workload's autograph implementation, traced on its tiny inputs."""
    rows = []
    for w in all_workloads():
        args = w.make_args(True)
        build = w.aot_builders.get(AUTOGRAPH) or w.builders[AUTOGRAPH]
        try:
            row = _decisions(lambda build=build, args=args: build().trace(*args))
        except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
            row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        rows.append({"program": w.name, "expected": {"unrolled": 0}, **row})
    return rows


def corpus_rows() -> list[dict]:
    """The programs of ``tests/test_staging_is_an_optimisation.py``'s ``CORPUS`` (a
    source checkout), each with the decisions it expects."""
    from tests.test_staging_is_an_optimisation import CORPUS

    rows = []
    for fn, args, jit_kwargs, expected in CORPUS:
        try:
            row = _decisions(lambda fn=fn, args=args, kw=jit_kwargs:
                             jax.make_jaxpr(autograph.convert(fn), **kw)(*args))
        except Exception as exc:  # noqa: BLE001
            row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        rows.append({"program": fn.__name__, "expected": expected, **row})
    return rows


def _as_expected(row) -> bool:
    return "error" not in row and all(row.get(k, 0) == v for k, v in row["expected"].items())


def summarize(rows: list[dict]) -> dict:
    """Totals of a corpus: programs, loops staged and unrolled, and the programs
    whose decisions were not the expected ones (or that failed to trace)."""
    return {"programs": len(rows),
            "staged": sum(r.get("staged", 0) for r in rows),
            "unrolled": sum(r.get("unrolled", 0) for r in rows),
            "unexpected": [r["program"] for r in rows if not _as_expected(r)]}


def measure() -> dict:
    """Both corpora (the test corpus only in a source checkout)."""
    out = {"benchmark workloads": summarize(workload_rows())}
    try:
        out["issue 17 test corpus"] = summarize(corpus_rows())
    except ImportError:
        pass
    return out


def format_rows(results: dict) -> list[list[str]]:
    """Table rows: corpus, programs, loops staged, loops unrolled, unexpected."""
    return [[name, str(r["programs"]), str(r["staged"]), str(r["unrolled"]),
             ", ".join(r["unexpected"]) or "none"] for name, r in results.items()]


COLUMNS = ["corpus", "programs", "loops staged", "loops unrolled",
           "decided otherwise than expected"]


def main() -> None:
    from .report import _table

    print(_table(COLUMNS, format_rows(measure())))


if __name__ == "__main__":
    main()
