"""A converted recursion that exceeds the limit raises Python's RecursionError, with
Python's message and no chained error of autograph's own probe (issue 26.11)."""

import traceback

import pytest

import autograph
from autograph import api


def forever(n):
    return forever(n + 1)


@pytest.mark.parametrize("twins", [True, False], ids=["python_twin", "operators"])
def test_recursion_error_has_pythons_message(twins, monkeypatch):
    """The Python twin (the default outside a trace) meets the limit in a call of
    C code in ``converted_call`` as often as in a frame of the user's: its message
    is Python's all the same; so is the operators' path's."""
    monkeypatch.setattr(api, "_PYTHON_TWINS", twins)
    with pytest.raises(RecursionError) as original:
        forever(0)
    with pytest.raises(RecursionError) as converted:
        autograph.convert(forever)(0)
    assert str(converted.value) == str(original.value)
    text = "".join(traceback.format_exception(converted.value))
    assert "During handling" not in text and "in comparison" not in text
