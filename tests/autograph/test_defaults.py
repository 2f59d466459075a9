"""A converted function reads its original's defaults when it is called, as Python
does: a later ``f.__defaults__ = ...`` or ``f.__kwdefaults__ = ...`` is seen."""

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph import api


def _make():
    def scaled(x, k=1, *, shift=2):
        if x > 0:
            x = x * k
        return x + shift
    return scaled


@pytest.mark.parametrize("twins", [True, False], ids=["python_twin", "operators"])
def test_later_defaults_are_seen(twins, monkeypatch):
    monkeypatch.setattr(api, "_PYTHON_TWINS", twins)
    original = _make()
    converted = autograph.convert(original)
    assert converted(3) == original(3) == 5
    original.__defaults__ = (10,)
    assert converted(3) == original(3) == 32
    original.__kwdefaults__ = {"shift": -1}
    assert converted(3) == original(3) == 29
    original.__kwdefaults__["shift"] = 7          # changed in place
    assert converted(3) == original(3) == 37
    # Traced afresh (a new jit), the traced `if` reads the new defaults too.
    assert int(jax.jit(converted)(jnp.int32(3))) == original(3)
    original.__defaults__ = None
    with pytest.raises(TypeError) as expected:
        original(3)
    with pytest.raises(TypeError) as got:
        converted(3)
    assert str(got.value) == str(expected.value)



def countdown(n, step=1):
    return 0 if n <= 0 else 1 + countdown(n - step)


def test_a_recursion_through_the_decorated_name_sees_later_defaults(monkeypatch):
    """The twin calls the function ``autograph.convert`` made (the module's global,
    as a decorator leaves it) as the twin of its original: that twin too is made
    again when the original's defaults change."""
    original = countdown
    converted = autograph.convert(original)
    monkeypatch.setitem(globals(), "countdown", converted)
    monkeypatch.setattr(original, "__defaults__", original.__defaults__)
    expected, got = [original(9)], [converted(9)]
    original.__defaults__ = (3,)
    expected.append(original(9))
    got.append(converted(9))
    assert got == expected == [9, 3]
