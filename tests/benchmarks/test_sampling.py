"""benchmarks/sampling.py: samples counted only while switched on; first_call --profile."""

from __future__ import annotations

import time

from benchmarks import first_call
from benchmarks.sampling import StackSamples


def _spin_inside(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _spin_outside(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_only_the_stretches_switched_on_are_counted():
    samples = StackSamples()
    with samples.running():
        for _ in range(4):
            with samples:
                _spin_inside(0.03)
            _spin_outside(0.03)
    assert samples.inclusive["test_sampling.py:_spin_inside"] > 0
    assert samples.inclusive["test_sampling.py:_spin_outside"] == 0


def test_first_call_profiles_a_stage_of_autograph_only(capsys):
    shares = first_call.profile("trace", rounds=2, names=("collatz",), rows=3)
    out = capsys.readouterr().out
    assert "autograph's trace stage, 2 rounds of collatz" in out
    assert "first_call.py:_stages" in shares["inclusive"] or not shares["inclusive"]
