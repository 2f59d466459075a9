"""benchmarks/against.py: the --against comparison of benchmarks.conversion and
benchmarks.trace_time (rounds in alternating order, minima, medians and their ratio)."""

from __future__ import annotations

from benchmarks import against


def test_rounds_alternate_the_versions_and_keep_each_entry_apart():
    calls = []
    times = {("other", "f"): [3.0, 1.0, 2.0], ("other", "g"): [5.0, 5.0, 5.0],
             ("this", "f"): [1.0, 0.5, 4.0], ("this", "g"): [2.0, 3.0, 1.0]}

    def sample(kind, name):
        calls.append((kind, name))
        return times[kind, name][sum(c == (kind, name) for c in calls) - 1]

    samples = against.interleave(["other", "this"], ["f", "g"], sample, 3)
    assert [k for k, _ in calls[::2]] == ["other", "this", "this", "other", "other", "this"]
    assert samples == {"other": {"f": [3.0, 1.0, 2.0], "g": [5.0, 5.0, 5.0]},
                       "this": {"f": [1.0, 0.5, 4.0], "g": [2.0, 3.0, 1.0]}}


def test_the_table_gives_minima_medians_and_the_ratio_of_minima():
    samples = {"other": {"f": [0.003, 0.001, 0.002], "g": [0.005, 0.004, 0.006]},
               "this": {"f": [0.001, 0.0005, 0.004], "g": [0.002, 0.003, 0.001]}}
    lines = against.table(samples).splitlines()
    assert lines[0].split() == ["function", "other", "(min)", "this", "(min)", "other",
                                "(median)", "this", "(median)", "this", "/", "other", "(min)"]
    f, g, median = (line.split() for line in lines[2:])
    assert f == ["f", "1.00", "ms", "500.0", "us", "2.00", "ms", "1.00", "ms", "0.50"]
    assert g == ["g", "4.00", "ms", "1.00", "ms", "5.00", "ms", "2.00", "ms", "0.25"]
    # over all: the median of the entries' minima and of their medians
    assert median == ["median", "2.50", "ms", "750.0", "us", "3.50", "ms", "1.50", "ms",
                      "0.30"]


def test_one_version_alone_has_no_ratio():
    lines = against.table({"this": {"w": [0.002, 0.001]}}, "workload").splitlines()
    assert lines[0].split() == ["workload", "this", "(min)", "this", "(median)"]
    assert lines[2].split() == ["w", "1.00", "ms", "1.50", "ms"]
