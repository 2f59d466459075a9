"""The fold benchmark's A/B of schedule constants: both rows run, the constants come back."""

from autograph.fold import schedule
from benchmarks import fold
from benchmarks.harness import TimingPlan


def test_schedule_ab_restores_the_constants():
    before = schedule.CAPACITY_HEADROOM
    out = fold.measure_schedule_ab(8, 4, TimingPlan(rounds=1, sample_s=0.001, budget_s=0.2),
                                   {"CAPACITY_HEADROOM": 1.5}, varied=2)
    assert schedule.CAPACITY_HEADROOM == before
    assert set(out["median_ms"]) == {"fold_A", "fold_B", "oracle_fwd"}
    assert out["plans"]["fold_A"] != out["plans"]["fold_B"]


def test_settings_parse_as_numbers():
    assert fold._setting("SPARE_ROWS=32") == ("SPARE_ROWS", 32)
    assert fold._setting("CAPACITY_HEADROOM=1.03") == ("CAPACITY_HEADROOM", 1.03)


def test_an_unknown_constant_is_refused():
    import pytest

    with pytest.raises(ValueError, match="NO_SUCH"):
        fold.measure_schedule_ab(8, 4, TimingPlan(rounds=1, sample_s=0.001, budget_s=0.2),
                                 {"NO_SUCH": 1})
