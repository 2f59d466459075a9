"""Random batches share a few compiled executors (geometric size buckets, reuse)."""

import os
import random

import jax
import jax.numpy as jnp
import pytest

import autograph
from tests.fold import trees as T


def count_compiles(batches, n_trees, low, high, seed=0):
    """Compiles of the folded executor and of the user's jitted loss over random batches
    (the issue's shape: batches of trees of ``low``-``high`` leaves)."""
    p = T.treelstm_params(jax.random.PRNGKey(0), 4)
    batched = autograph.fold(T.encode)
    @jax.jit
    def loss(p, plan):
        h, _ = batched(p, plan)
        return jnp.sum(h ** 2)

    rng = random.Random(seed)
    grad = jax.jit(jax.grad(loss))
    after = {}
    batched(p, [T.Node(word=0)])          # a first call fixes the parameters' shapes
    first = batched.traces
    for i in range(batches):
        plan = batched.plan(T.random_batch(rng, n_trees, low, high))
        loss(p, plan)
        grad(p, plan)
        after[i + 1] = (loss._cache_size(), grad._cache_size(), batched.traces - first)
    return after


def test_compiles_over_random_batches():
    after = count_compiles(30, 64, 16, 128)
    # The goal: at most 2 compiles over the first 20 batches (measured: 1).
    assert max(after[20][:2]) <= 2      # the loss and its gradient, each
    assert max(after[30][:2]) <= 2
    assert after[30][2] <= 2 * after[30][0]     # the executor: traced within those


# CI runs fewer (the 1,000 batches take about ten minutes here); the goal is
# stated over 1,000, the default.
BATCHES = int(os.environ.get("AUTOGRAPH_FOLD_BATCHES", "1000"))


@pytest.mark.slow
def test_compiles_over_a_thousand_batches():
    """Issue 29's goal: at most 2 compiles over the first 20 random batches, at most
    4 over 1,000 (``AUTOGRAPH_FOLD_BATCHES`` batches)."""
    after = count_compiles(BATCHES, 64, 16, 128)
    assert max(after[min(20, BATCHES)][:2]) <= 2
    assert max(after[BATCHES][:2]) <= 4
