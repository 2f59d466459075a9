"""Effects in the bodies of bounded loops that carry floats (traced again for grad)
agree with Python: replay_programs.py. ``python -m tests.fuzz.run --kind replay``
runs more."""

from tests.fuzz import replay_programs


def test_generated_programs_agree_with_python():
    programs, mismatches, refusals = replay_programs.fuzz(first_seed=15_000, count=8)
    assert len(programs) == 8
    assert not mismatches, "\n".join(f"{p.source}\n{mode}: {text}"
                                     for p, mode, text in mismatches)
    assert not refusals, "\n".join(f"{p.source}\n{mode}: {text}"
                                   for p, mode, text in refusals)


def test_every_effect_is_generated_in_a_loop_traced_again():
    programs = [replay_programs.generate(seed) for seed in range(40)]
    assert set().union(*(p.effects for p in programs)) == set(replay_programs.EFFECTS)
    source = "".join(p.source for p in programs)
    # seed 172's shape: a float loop with a bound, a raise decided in Python in it
    assert "while j < " in source and "set_loop_options(maximum_iterations=" in source
    assert "if k < " in source and "raise ValueError('reached')" in source
    for text in ("print(", "values.append(", "t += 1", "return w + t", "break", "assert "):
        assert text in source


def test_generator_is_deterministic_and_valid():
    first = replay_programs.generate(172).source
    assert replay_programs.generate(172).source == first
    compile(first, "<fuzz>", "exec")
