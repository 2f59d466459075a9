"""The masked-scan form of a bounded loop, as the runtime staged it before
``autograph/runtime/bounded_loops.py``: the reference its gradients must equal.

A loop with ``set_loop_options(maximum_iterations=N)`` was a ``scan`` of ``N``
steps, each ``lax.cond(still running, body, identity)``. It costs ``N`` steps
forward and stores ``N`` states in reverse mode, but it is plainly right, so the
tests and the fuzzer differentiate programs both ways and compare::

    with masked_scan_reference():
        expected = jax.grad(autograph.convert(f))(x)
"""

from __future__ import annotations

import contextlib

import jax.numpy as jnp
from jax import lax

from autograph.runtime import loops


def masked_while(cond_fun, body_fun, state, maximum_iterations):
    """``N`` scan steps, each running the body while ``cond_fun`` holds."""

    def step(values, _):
        return lax.cond(cond_fun(values), body_fun, lambda v: v, values), None

    if maximum_iterations == 0:
        return state
    out, _ = lax.scan(step, state, None, length=maximum_iterations)
    return out


def masked_range(lower, upper, body_fun, state, maximum_iterations):
    """``fori_loop(lower, upper, ...)`` as ``N`` masked scan steps."""

    def step(carry, k):
        index = lower + k
        carry = lax.cond(index < upper, lambda c: body_fun(index, c), lambda c: c, carry)
        return carry, None

    if maximum_iterations == 0:
        return state
    out, _ = lax.scan(step, state, jnp.arange(maximum_iterations))
    return out


@contextlib.contextmanager
def masked_scan_reference():
    """While active, converted bounded loops stage as masked scans."""
    saved = loops._bounded_while, loops._bounded_range
    loops._bounded_while, loops._bounded_range = masked_while, masked_range
    try:
        yield
    finally:
        loops._bounded_while, loops._bounded_range = saved
