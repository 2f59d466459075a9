"""The benchmark machinery: timing, jaxpr sizes, error capture, reports (tiny runs)."""

import json

import jax
import jax.numpy as jnp
import pytest
from jax import lax

import autograph
from benchmarks import report
from benchmarks.harness import TimingPlan, aot_split, count_eqns, interleaved_medians
from benchmarks.suite import SuiteConfig, compare, run_suite, run_workload
from benchmarks.workloads import AUTOGRAPH, EAGER, HAND_LAX, Workload

TINY_PLAN = TimingPlan(rounds=2, sample_s=0.0005, budget_s=0.05)


def test_count_eqns_counts_top_level_and_nested():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c * 2.0 + 1.0, x)

    counts = count_eqns(jax.make_jaxpr(f)(1.0))
    assert counts["top"] < counts["total"]


def test_aot_split_reports_each_stage():
    split = aot_split(jax.jit(lambda x: x + 1), (jnp.float32(1),))
    assert set(split) == {"trace_s", "lower_s", "compile_s", "eqns", "temp_bytes"}
    assert split["eqns"] == {"top": 1, "total": 1}
    assert split["temp_bytes"] is None or split["temp_bytes"] >= 0


def test_interleaved_medians_times_every_function():
    stats = interleaved_medians({"a": lambda: 1, "b": lambda: jnp.ones(3)}, TINY_PLAN)
    assert set(stats) == {"a", "b"}
    assert all(s["median_s"] > 0 and s["samples"] >= 1 for s in stats.values())


def test_compare_reports_mismatches():
    assert compare(jnp.ones(3), jnp.ones(3), 1e-6) is None
    assert "shape" in compare(jnp.ones(3), jnp.ones(2), 1e-6)
    assert "difference" in compare(jnp.ones(3), jnp.zeros(3), 1e-6)


def _unsupported():
    raise autograph.ConversionError("not supported yet")


def test_a_failing_implementation_is_recorded_not_raised():
    w = Workload(
        name="broken", description="one implementation raises", source=abs,
        make_args=lambda tiny: (jnp.float32(-2.0),),
        builders={EAGER: lambda: abs, AUTOGRAPH: _unsupported,
                  HAND_LAX: lambda: jax.jit(jnp.abs)},
    )
    result = run_workload(w, SuiteConfig(plan=TINY_PLAN), conversions={})
    assert result["impls"][AUTOGRAPH]["error"].startswith("ConversionError: not supported")
    assert result["impls"][HAND_LAX]["agrees_with_eager"] is True
    assert "median_s" in result["impls"][EAGER]


@pytest.fixture(scope="module")
def tiny_results():
    config = SuiteConfig.quick_preset(only=["huber_scalar"], plan=TINY_PLAN, scaling_ns=(4, 8),
                                      scaling_unroll_cap=4, conversion_cold_reps=1,
                                      conversion_cached_reps=5)
    return run_suite(config, progress=lambda line: None)


def test_suite_results_are_json_and_render(tiny_results, tmp_path):
    path = report.write_json(tiny_results, tmp_path)
    loaded = json.loads(path.read_text())
    assert [w["name"] for w in loaded["workloads"]] == ["huber_scalar"]
    assert {r["n"] for r in loaded["scaling"]} == {4, 8}
    text = report.render_text(tiny_results)
    for heading in ("Per-call time", "First call", "Conversion time", "Compile-time scaling"):
        assert heading in text
    markdown = report.write_markdown(tiny_results, tmp_path).read_text()
    assert "| huber_scalar |" in markdown


def test_chart_is_written_when_matplotlib_is_installed(tiny_results, tmp_path):
    pytest.importorskip("matplotlib")
    path = report.write_chart(tiny_results, tmp_path)
    assert path.is_file() and path.stat().st_size > 0


def test_chart_is_skipped_without_matplotlib(tiny_results, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert report.write_chart(tiny_results, tmp_path) is None
    assert not (tmp_path / "results.png").exists()
