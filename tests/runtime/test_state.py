"""``runtime/state.py`` and the pytree helper of ``runtime/tracing.py``, called directly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autograph.errors import ConversionError
from autograph.runtime import Undefined, for_stmt, range_
from autograph.runtime.state import (
    fill_undefined,
    split_unbound,
    through_unbound,
)
from autograph.runtime.tracing import FlatTree, is_tracer


def test_split_unbound_and_rebuild():
    y = Undefined("y")
    defined, holes, rebuild = split_unbound((1, y, 3))
    assert defined == (1, 3) and holes == {1: y}
    assert rebuild((10, 30)) == (10, y, 30)
    defined, holes, rebuild = split_unbound((1, 2))
    assert defined == (1, 2) and not holes and rebuild((5, 6)) == (5, 6)


def test_fill_undefined_gives_zeros_of_what_one_iteration_binds():
    def iteration(state, item):
        x, y, z = state
        return x + item, x * 2.0, z          # binds y, leaves z unbound

    z = Undefined("z")
    x, y, z_out = fill_undefined(iteration, (jnp.float32(1.0), Undefined("y"), z), 0)
    assert float(x) == 1.0 and y.dtype == jnp.float32 and float(y) == 0.0 and z_out is z


def test_through_unbound_carries_what_stays_unbound_as_none():
    seen = []

    def stage(state):
        seen.append(state)
        return tuple(v if v is None else v + 1 for v in state)

    r = Undefined("r")
    out = through_unbound(stage, lambda state, item: state, (jnp.int32(1), r), None)
    assert seen[0][1] is None and out[1] is r and int(out[0]) == 2


def test_flat_tree_rebuilds_around_the_selected_leaves():
    tree = {"a": jnp.ones(2), "b": (3, "s")}
    flat = FlatTree(tree, lambda leaf: isinstance(leaf, jax.Array))
    assert len(flat.selected) == 1
    rebuilt = flat.rebuild([jnp.zeros(2)])
    assert rebuilt["b"] == (3, "s") and np.array_equal(rebuilt["a"], np.zeros(2))

    def traced_positions(x):
        return FlatTree((x, 1.0, [x]), is_tracer).positions

    positions = []
    jax.make_jaxpr(lambda x: positions.append(traced_positions(x)) or x)(1.0)
    assert positions == [[0, 2]]


def test_a_static_trip_count_ignores_the_bound_a_traced_one_checks_it():
    def body(i, total):
        return total + i

    def staged(n, bound):
        return for_stmt(range(n), body, (jnp.float32(0.0),), maximum_iterations=bound)

    assert float(jax.jit(lambda: staged(4, -3))()) == 6.0          # static: ignored
    with pytest.raises(ConversionError, match=">= 0"):
        jax.jit(lambda n: for_stmt(range_(n), body, (jnp.float32(0.0),),
                                   maximum_iterations=-3))(jnp.int32(4))
