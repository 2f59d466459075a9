"""``and``, ``or`` and ``not``: Python's operators, or ``jnp.logical_*`` on traced values.

Generated code passes each operand after the first as a function, so it is only
evaluated when Python would evaluate it: ``a and b`` becomes
``ag__.and_(lambda: a, lambda: b)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from autograph.runtime.tracing import is_tracer


def and_(*operands):
    """``operands[0]() and operands[1]() and ...`` with Python's short-circuit.

    A traced operand makes the result ``jnp.logical_and`` of the remaining operands
    (all of them are then evaluated, as staged code computes every value).
    """
    value = operands[0]()
    for i, operand in enumerate(operands[1:], start=1):
        if is_tracer(value):
            return _logical(jnp.logical_and, value, operands[i:])
        if not value:
            return value
        value = operand()
    return value


def or_(*operands):
    """``operands[0]() or operands[1]() or ...`` with Python's short-circuit."""
    value = operands[0]()
    for i, operand in enumerate(operands[1:], start=1):
        if is_tracer(value):
            return _logical(jnp.logical_or, value, operands[i:])
        if value:
            return value
        value = operand()
    return value


def not_(value):
    """``not value``; ``jnp.logical_not`` for a traced value."""
    if is_tracer(value):
        return jnp.logical_not(value)
    return not value


def _logical(op, value, rest):
    for operand in rest:
        value = op(value, operand())
    return value
