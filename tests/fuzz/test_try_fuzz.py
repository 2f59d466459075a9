"""The try-statement fuzzer (``tests/fuzz/try_programs.py``) in CI: checks inside a
``try`` agree with Python for every handler, or are refused at the user's line."""

from tests.fuzz import try_programs


def test_fuzzed_checks_inside_try_statements_agree_with_python():
    ran, refused, found = try_programs.check(30, seed=5)
    assert sum(ran.values()) == 30 and len(ran) >= 5
    assert not found, found[:3]
    assert sum(refused.values()) < 30 * len(try_programs.INPUTS) * 2   # not all refused
