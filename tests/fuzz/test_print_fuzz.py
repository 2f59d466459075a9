"""Differential fuzzing of print formatting (see print_programs.py): the fast profile
checks a few programs; ``-m slow`` (``AUTOGRAPH_PRINT_FUZZ_COUNT``, default 200) or
``python -m tests.fuzz.print_programs --count N`` more."""

import os

import pytest

from tests.fuzz import print_programs


def test_fast_profile():
    checked, mismatches = print_programs.fuzz(0, 8)
    assert checked == 8
    assert not mismatches, "\n".join(mismatches[:3])


@pytest.mark.slow
def test_long_profile(request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("the long profile runs with -m slow")
    count = int(os.environ.get("AUTOGRAPH_PRINT_FUZZ_COUNT", "200"))
    checked, mismatches = print_programs.fuzz(50_000, count)
    assert not mismatches, "\n".join(mismatches[:3])


def test_generator_is_deterministic_and_valid():
    first = print_programs.PrintProgramGenerator(11).function("p")
    assert print_programs.PrintProgramGenerator(11).function("p") == first
    compile(first, "<fuzz>", "exec")
