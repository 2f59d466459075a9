"""The numerical corpora (``numerical.py``, ``numerical_methods.py``): every function
run as Python, converted with Python values (identical), and compiled with its
arguments as arrays (its recorded outcome)."""

import pytest

import autograph
from tests.corpus import numerical, numerical_methods, outcomes
from tests.corpus.numerical import SAME, Refused
from tests.differential import assert_same_python

CASES = numerical.CASES + numerical_methods.CASES
CALLS = [(fn, args, expected) for fn, calls, expected in CASES for args in calls]


def test_the_corpus_is_large_enough():
    assert len(numerical.CASES) >= 40 and len(numerical_methods.CASES) >= 30
    assert len(CALLS) >= 200


@pytest.mark.parametrize("fn, args, expected", CALLS,
                         ids=[f"{fn.__name__}{args}" for fn, args, _ in CALLS])
def test_corpus_call(fn, args, expected):
    python = outcomes.run(lambda: fn(*args))
    converted = outcomes.run(lambda: autograph.convert(fn)(*args))
    if python[0] == "value":
        assert converted[0] == "value", converted
        assert_same_python(python[1], converted[1])
    else:
        assert converted == python
    staged = outcomes.compiled(autograph, fn, args)
    kind = outcomes.classify(autograph, python, staged)
    if expected == SAME:
        assert kind in (outcomes.SAME_VALUE, outcomes.SAME_ERROR), (kind, staged)
    else:
        assert isinstance(expected, Refused)
        assert kind == outcomes.REFUSED, (kind, staged)
        assert expected.reason in staged[2]
