"""The trace-count fuzz kind (tests/fuzz/trace_count_programs.py): random staged
``if``s and loops whose blocks count their runs. Each ``if`` branch runs once while
its region is traced, each loop body at most twice, and compiled programs give the
original's Python values (or a ConversionError: types the branches cannot share)."""

from __future__ import annotations

import collections

from tests.fuzz import trace_count_programs


def test_generated_programs_trace_each_block_once_and_compute_pythons_values():
    programs = trace_count_programs.run(seed=500, count=40)
    bad = [p for p in programs if p.problems]
    assert not bad, "\n".join(f"{p.problems}\n{p.source}" for p in bad[:3])
    kinds = collections.Counter(p.kind for p in programs if not p.refused)
    assert kinds["if"] >= 5 and kinds["loop"] >= 5, kinds


def test_loops_of_weak_list_elements_weak_reads_and_write_counts_give_jit_s_types():
    programs = trace_count_programs.run(
        seed=900, count=20, only=("weak_list", "weak_reach", "write_count"))
    bad = [p for p in programs if p.problems]
    assert not bad, "\n".join(f"{p.problems}\n{p.source}" for p in bad[:3])
