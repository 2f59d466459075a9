"""Issue 27's idioms fuzzed: input checks that raise, math calls, reductions and
membership agree with Python converted and compiled (idiom_programs.py)."""

import collections

from tests.fuzz import idiom_programs


def test_generated_programs_agree_with_python():
    programs, mismatches, refusals = idiom_programs.fuzz(first_seed=27_000, count=24)
    assert not mismatches, "\n".join(f"{p.source}\n{text}" for p, text in mismatches)
    assert not refusals, "\n".join(f"{p.source}\n{text}" for p, text in refusals)
    kinds = collections.Counter(p.kind for p in programs)
    assert set(kinds) == set(idiom_programs.KINDS)


def test_each_kind_uses_its_idioms():
    sources = {kind: "".join(idiom_programs.generate(seed, kind).source for seed in range(20))
               for kind in idiom_programs.KINDS}
    assert "raise" in sources["raises"] and "elif" in sources["raises"]
    assert "math.sqrt" in sources["math"] and "math.isqrt" in sources["math"]
    assert "any(" in sources["reductions"] and "range(n" in sources["reductions"]
    assert " in (" in sources["membership"] and ".count(" in sources["membership"]
    assert "table[n" in sources["membership"]
    assert "% 2147483647" in sources["int_counters"] and "range(n)" in sources["int_counters"]
    held = sources["held_objects"]
    assert "for p in ps" in held and "p.stats.n += 1" in held and "setattr(p" in held
    assert "collections.deque" in held and "c = c + 1" in held
    assert "math.inf" in sources["nonfinite"] and "min(" in sources["nonfinite"]
    assert ".index(a, " in sources["positions"] and "(b, " in sources["positions"]
