"""benchmarks/conversion.py --profile: the sampled shares of cold conversion time."""

from __future__ import annotations

from benchmarks import conversion


def test_the_profile_gives_shares_of_the_samples_in_convert(capsys):
    shares = conversion.profile(rounds=20, rows=5)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("samples in Transpiler.convert")
    assert lines[1] == "-- inclusive (% of the samples)"
    assert lines[7] == "-- self (% of the samples)"
    assert len(lines) == 13
    # shares are of the samples inside Transpiler.convert; the stages are in it
    inclusive = shares["inclusive"]
    assert inclusive["transpiler.py:convert"] == 100.0
    assert 0 < inclusive["transpiler.py:_compile"] < 100.0
    assert 0 < sum(shares["self"].values())
