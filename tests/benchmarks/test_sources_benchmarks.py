"""The first-call split and the lambda-file rows of the benchmark suite (tiny runs)."""

from benchmarks import first_call, lambda_files, report


def test_first_call_split_times_every_stage_of_both_implementations():
    rows = first_call.measure(rounds=1, cases=first_call.CASES[:1])
    (row,) = rows
    assert row["agree"], row
    for kind in ("autograph", "hand_lax"):
        stages = row[kind]
        assert all(stages[f"{s}_s"] >= 0 for s in first_call.STAGES)
        assert abs(stages["total_s"] - sum(stages[f"{s}_s"] for s in first_call.STAGES)) < 1e-9
    assert row["autograph"]["convert_s"] > 0 and row["autograph"]["trace_s"] > 0
    table = report._table(first_call.COLUMNS, first_call.format_rows(rows))
    assert "collatz" in table and "hand_lax" in table


def test_every_first_call_case_agrees_with_its_hand_written_twin():
    import jax
    import numpy as np

    import autograph
    for case in first_call.CASES:
        args = case.make_args()
        np.testing.assert_allclose(np.asarray(jax.jit(autograph.convert(case.original))(*args)),
                                   np.asarray(jax.jit(case.hand)(*args)), rtol=1e-4, atol=1e-4,
                                   err_msg=case.name)


def test_lambda_file_row_parses_the_file_once():
    (row,) = lambda_files.measure(sizes=(25,))
    assert row["size"] == 25 and row["file_parses"] == 1
    assert row["total_s"] > 0 and row["per_lambda_s"] == row["total_s"] / 25
    assert "25" in report._table(lambda_files.COLUMNS, lambda_files.format_rows([row]))


def test_whole_suite_sections_render(tmp_path):
    results = {"first_call_split": [{"name": "broken", "error": "ValueError: x"}],
               "lambda_files": [{"size": 3, "error": "KeyError: y"}]}
    text = "\n".join(report._source_sections(results))
    assert "First call of a new function" in text and "ValueError" in text
    assert "Converting every lambda" in text and "KeyError" in text
    assert "####" in "\n".join(report._source_sections(results, markdown=True))


def test_primitive_counts_count_the_equations_of_nested_jaxprs():
    import jax
    from jax import lax

    closed = jax.make_jaxpr(lambda x: lax.cond(x > 0, lambda: x + 1.0, lambda: x * 2.0))(1.0)
    counts = first_call.primitive_counts(closed)
    assert counts["cond"] == 1 and counts["add"] == 1 and counts["mul"] == 1
    rows = first_call.equation_diffs(first_call.CASES[:1])
    assert rows[0][0] == first_call.CASES[0].name and len(rows[0]) == 5
