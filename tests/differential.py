"""Differential testing: a function run as written, converted, and compiled must agree.

    check(fn, 27)                  # original vs convert (Python values) vs to_graph
                                   # vs convert inside the user's own jax.jit
    check(fn, 27, vmap=[1, 2, 3])  # plus jax.vmap over a batch of first arguments

Functions under test must live in a file (conversion reads their source).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

import autograph


def assert_same_python(expected, actual):
    """Equal values *and* equal Python types, leaf by leaf (an int stays an int)."""
    exp_leaves, exp_tree = tree_util.tree_flatten(expected)
    act_leaves, act_tree = tree_util.tree_flatten(actual)
    assert exp_tree == act_tree, f"structure {act_tree} != {exp_tree}"
    for e, a in zip(exp_leaves, act_leaves, strict=True):
        assert type(e) is type(a), f"type {type(a).__name__} != {type(e).__name__}"
        if isinstance(e, (jax.Array, np.ndarray)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(e))
        else:
            assert a == e or (a != a and e != e), f"{a!r} != {e!r}"


def assert_close(expected, actual, rtol=1e-5, atol=1e-6):
    """Equal structure and numerically close leaves (compiled vs Python values)."""
    exp_leaves, exp_tree = tree_util.tree_flatten(expected)
    act_leaves, act_tree = tree_util.tree_flatten(actual)
    assert exp_tree == act_tree, f"structure {act_tree} != {exp_tree}"
    for e, a in zip(exp_leaves, act_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


def check(fn, *args, vmap=None, compiled=True, rtol=1e-5, atol=1e-6, **kwargs):
    """Run ``fn`` four ways and assert they agree; returns the original's result.

    1. ``fn(*args)``: the oracle;
    2. ``convert(fn)(*args)``: identical result, identical Python types;
    3. ``to_graph(fn)(*args)`` and 4. ``jax.jit(convert(fn))(*args)``: close to the
       oracle, with every argument traced;
    5. with ``vmap=[a0, a1, ...]``: ``jax.vmap`` of the converted function over
       those first arguments (the other arguments as given) matches the original
       applied to each.
    """
    expected = fn(*args, **kwargs)
    assert_same_python(expected, autograph.convert(fn)(*args, **kwargs))
    if compiled:
        assert_close(expected, autograph.to_graph(fn)(*args, **kwargs), rtol, atol)
        assert_close(expected, jax.jit(autograph.convert(fn))(*args, **kwargs), rtol, atol)
    if vmap is not None:
        batch = jnp.asarray(vmap)
        per_example = [fn(x, *args[1:], **kwargs) for x in vmap]
        batched = jax.vmap(lambda x: autograph.convert(fn)(x, *args[1:], **kwargs))(batch)
        assert_close(tree_util.tree_map(lambda *xs: np.stack(xs), *per_example), batched,
                     rtol, atol)
    return expected
