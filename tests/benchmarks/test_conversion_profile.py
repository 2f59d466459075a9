"""benchmarks/conversion.py --profile: the sampled shares of cold conversion time."""

from __future__ import annotations

from benchmarks import conversion


def test_the_profile_gives_shares_of_the_samples_in_convert(capsys):
    conversion.profile(rounds=20, rows=100)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("samples in Transpiler.convert")
    inclusive = lines[lines.index("-- inclusive (% of the samples)") + 1:
                      lines.index("-- self (% of the samples)")]
    assert 0 < len(inclusive) <= 100
    shares = {line.split()[1]: float(line.split()[0]) for line in inclusive}
    # shares are of the samples inside Transpiler.convert; the stages are in it
    assert shares["transpiler.py:convert"] == 100.0
    assert 0 < shares["transpiler.py:_compile"] < 100.0
