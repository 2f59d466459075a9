"""The runtime's checks of expressions left to Python (runtime/unstaged.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autograph import ConversionError
from autograph.runtime import comprehension_test, formattable


def test_python_and_concrete_values_pass_as_they_are():
    for value in (True, 0, 1.5, np.bool_(False), jnp.asarray(2.0), "s", None):
        assert comprehension_test(value) is value
        assert formattable(value) is value


def test_traced_values_are_refused_here():
    with pytest.raises(ConversionError, match="comprehension"):
        jax.jit(comprehension_test)(1.0)
    with pytest.raises(ConversionError, match="formats a traced value"):
        jax.jit(formattable)(1.0)
