"""The loop benchmarks run and report what they measure (no timing is asserted)."""

from benchmarks import python_loops, unrolling
from benchmarks.report import _table


def test_python_loop_rows_cover_each_program_and_size():
    rows = python_loops.measure(sizes=(1, 50), iterations=20, rounds=1, budget_s=0.0)
    assert len(rows) == 2 * len(python_loops.PROGRAMS)
    assert all("error" not in r and r["converted_s"] > 0 for r in rows)
    assert "converted / original" in _table(python_loops.COLUMNS, python_loops.format_rows(rows))


def test_the_unroll_fallback_is_taken_only_where_expected():
    results = unrolling.measure()
    workloads = results["benchmark workloads"]
    assert workloads["unrolled"] == 0 and workloads["staged"] >= workloads["programs"] - 3
    corpus = results["issue 17 test corpus"]
    assert corpus["unrolled"] > 0 and corpus["staged"] > corpus["unrolled"]
    assert not workloads["unexpected"] and not corpus["unexpected"]
    assert len(unrolling.format_rows(results)) == 2
