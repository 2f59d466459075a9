"""What a corpus function gives run as Python and compiled with its arguments as arrays.

Shared by ``tests/corpus/test_numerical.py`` and ``benchmarks/numerical_corpus.py``
(which also runs it against another checkout's autograph, for before/after counts).
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

# How a compiled call compares with Python's
SAME_VALUE = "same value"
SAME_ERROR = "same exception"
REFUSED = "ConversionError"
OTHER_ERROR = "other error"
WRONG_VALUE = "wrong value"
KINDS = (SAME_VALUE, SAME_ERROR, REFUSED, OTHER_ERROR, WRONG_VALUE)


def run(call):
    """``('value', result)`` or ``('raises', type, message)``."""
    try:
        return ("value", call())
    except Exception as error:  # noqa: BLE001 - every outcome is recorded
        return ("raises", type(error), str(error))


def as_array(value):
    """A numeric argument as the array a user would pass to ``to_graph``."""
    if isinstance(value, bool | numbers.Number):
        return jnp.asarray(value)
    if isinstance(value, list | tuple) and all(isinstance(v, numbers.Number) for v in value):
        return jnp.asarray(value)
    return value


def compiled(autograph, fn, args):
    """The outcome of ``autograph.to_graph(fn)`` on ``args`` as arrays."""
    arrays = [as_array(a) for a in args]
    return run(lambda: jax.block_until_ready(autograph.to_graph(fn)(*arrays)))


def classify(autograph, python, staged) -> str:
    """How the compiled outcome ``staged`` compares with Python's ``python``."""
    if staged[0] == "raises":
        kind, message = staged[1], staged[2]
        if python[0] == "raises" and kind is python[1] and message == python[2]:
            return SAME_ERROR
        if issubclass(kind, autograph.ConversionError):
            return REFUSED
        return OTHER_ERROR
    if python[0] == "raises":
        return WRONG_VALUE
    return SAME_VALUE if close(python[1], staged[1]) else WRONG_VALUE


def close(expected, actual) -> bool:
    try:
        e, a = np.asarray(expected, dtype=float), np.asarray(actual, dtype=float)
    except (TypeError, ValueError):
        return False
    return e.shape == a.shape and bool(np.allclose(a, e, rtol=1e-5, atol=1e-6))
