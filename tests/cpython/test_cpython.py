"""CPython's language tests under ``convert``: the slow run and the harness itself.

The slow tests run each module of ``harness.DEFAULT_MODULES`` unconverted and
converted (``python -m tests.cpython.run`` does the same from the command line)
and fail when a test differs without being listed in ``expected_failures.txt``, or
is listed and no longer differs: the list may only shrink.
"""

from __future__ import annotations

import sys

import pytest

from tests.cpython import harness, run

LIST_VERSION = (3, 11)   # the CPython whose test modules the list was made from


def test_expected_failure_list_is_well_formed():
    expected = run.read_expected()
    for entry in expected.values():
        assert entry.test_id.startswith("test.test_"), entry
        assert run.module_of(entry.test_id) in harness.DEFAULT_MODULES, entry
        assert len(entry.reason) > 10, entry


def test_harness_compares_outcomes():
    report = harness.run_module("tests.cpython.sample_tests", timeout=60)
    assert report.error is None
    outcomes = {o.test_id.rsplit(".", 1)[1]: o for o in report.outcomes}
    assert outcomes["test_passes"].original == outcomes["test_passes"].converted == "pass"
    assert outcomes["test_fails_both_ways"].converted == "fail"
    assert outcomes["test_fails_both_ways"].agrees
    assert outcomes["test_errors_both_ways"].converted == "error:KeyError"
    assert outcomes["test_skipped"].converted == "skip"
    assert outcomes["test_subtests"].converted == "subtests[(i=1): fail]"
    assert outcomes["test_subtests"].agrees
    differs = outcomes["test_differs"]
    assert (differs.original, differs.converted) == ("pass", "fail")
    assert "test_coroutine_method" not in outcomes and report.not_compared == 1


def test_table_and_comparison_with_the_list():
    report = harness.run_module("tests.cpython.sample_tests", timeout=60)
    differs = "tests.cpython.sample_tests.Sample.test_differs"
    assert "1" in run.table([report]).splitlines()[2]
    listed = {differs: run.Expected(differs, "21.6", "listed for the test")}
    assert run.compare_with_expected([report], listed) == ([], [], [])
    unexpected, fixed, stale = run.compare_with_expected([report], {})
    assert [o.test_id for o in unexpected] == [differs] and not fixed and not stale


@pytest.mark.slow
@pytest.mark.parametrize("module", harness.DEFAULT_MODULES)
def test_cpython_module_under_convert(module, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("CPython's test modules run with -m slow (or python -m tests.cpython.run)")
    if sys.version_info[:2] != LIST_VERSION:
        pytest.skip(f"expected_failures.txt lists the tests of CPython "
                    f"{'.'.join(map(str, LIST_VERSION))}")
    [report] = run.run_modules([module])
    assert report.error is None, report.error
    unexpected, fixed, stale = run.compare_with_expected([report], run.read_expected())
    problems = [f"differs, not listed: {run.describe(o)}" for o in unexpected]
    problems += [f"listed ({e.issue}) but now agrees: remove it from the list: {e.test_id}"
                 for e in fixed]
    problems += [f"listed but no longer exists: {e.test_id}" for e in stale]
    assert not problems, "\n".join(problems)
