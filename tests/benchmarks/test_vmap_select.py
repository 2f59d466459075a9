"""The vmap-select benchmark measures every form of a row and renders its table."""

import jax.numpy as jnp

from benchmarks import report, vmap_select
from benchmarks.harness import TimingPlan

TINY = TimingPlan(rounds=1, sample_s=0.001, budget_s=0.05, max_calls=2)


def test_a_row_times_every_form_and_they_agree():
    forms = vmap_select._forms(*vmap_select.make_step(8), grad=True)
    row = vmap_select.measure_row("step", forms, (jnp.ones((4, 8)),), TINY)
    assert set(row["forms"]) == set(vmap_select.FORMS)
    for cell in row["forms"].values():
        assert cell["median_s"] > 0 and cell["max_abs_diff"] < 1e-5
    # the 'before' form is traced with plain lax.cond: it copies the weights as lax does
    assert row["forms"]["autograph_before"]["temp_bytes"] == \
        row["forms"]["lax_cond"]["temp_bytes"]
    text = vmap_select.format_table([row])
    assert "step" in text and "vs where" in text
    rendered = "\n".join(report._source_sections({"vmap_select": [row]}, markdown=True))
    assert "staged if under vmap" in rendered
