"""Size-classed layouts (``SizeChooser``, ``schedule.class_layouts``): after a few
batches, smaller layouts for the batches below the largest, computing the same."""

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.fold import schedule
from tests.fold import trees as T
from tests.fold.fuzz import _close, _stacked


@pytest.fixture
def early_classes(monkeypatch):
    monkeypatch.setattr(schedule, "CLASS_AFTER", 6)


def _inner(trees):
    return sum(T.count_nodes(t) - (T.count_nodes(t) + 1) // 2 for t in trees)


def test_class_layouts_are_smaller_and_compute_the_same(early_classes):
    p = T.treelstm_params(jax.random.PRNGKey(3), 4, vocab=50)
    rng = random.Random(3)
    batched = autograph.fold(T.encode)
    run = jax.jit(batched)
    grad = jax.jit(jax.grad(lambda p, plan: jnp.sum(batched(p, plan)[1] ** 2)))
    first = batched.plan(T.random_batch(rng, 16, 4, 40, vocab=50), params=p)
    classed = 0
    for b in range(16):
        trees = T.random_batch(rng, 16, 4, 40, vocab=50)
        plan = batched.plan(trees)
        if sum(plan.layout.steps) >= sum(first.layout.steps):
            continue
        classed += 1
        assert _close(run(p, plan), _stacked(p, trees), 1e-6)
        if b % 3 == 0:
            expected = jax.grad(lambda p, trees=trees: jnp.sum(_stacked(p, trees)[1] ** 2))(p)
            assert _close(grad(p, plan), expected, 1e-5)
    assert classed >= 3
    shape_key = next(iter(batched._sizes.issued))
    issued = batched._sizes.issued[shape_key]
    assert len(issued) <= schedule.MAX_LAYOUTS - 1      # one left for an outgrowing batch


def test_class_layouts_with_several_signatures(early_classes):
    # branchy's steps interleave several signatures: a class layout's level table
    # maps each (height, signature) to its step
    p = T.rnn_params(jax.random.PRNGKey(4), 4, vocab=50)
    rng = random.Random(4)
    batched = autograph.fold(T.branchy)
    run = jax.jit(batched)
    first = batched.plan(T.random_batch(rng, 8, 2, 20, vocab=50), params=p)
    classed = 0
    for _ in range(14):
        trees = T.random_batch(rng, 8, 2, 20, vocab=50)
        plan = batched.plan(trees)
        classed += sum(plan.layout.steps) < sum(first.layout.steps)
        assert _close(run(p, plan), _stacked(p, trees, T.branchy), 1e-5)
    assert classed >= 1


def test_class_layouts_pad_less(early_classes):
    # the chooser's own measure: steps' rows over the real inner nodes, later batches
    rng = random.Random(5)
    p = T.treelstm_params(jax.random.PRNGKey(5), 4, vocab=50)
    ratios = {}
    for after in (6, 10 ** 6):
        schedule.CLASS_AFTER = after
        batched = autograph.fold(T.encode)
        batched.plan(T.random_batch(random.Random(0), 32, 16, 64, vocab=50), params=p)
        rng = random.Random(5)
        for _ in range(8):
            batched.plan(T.random_batch(rng, 32, 16, 64, vocab=50))
        later = [T.random_batch(rng, 32, 16, 64, vocab=50) for _ in range(12)]
        ratios[after] = np.mean([sum(batched.plan(trees).layout.steps) / _inner(trees)
                                 for trees in later])
    assert ratios[6] < ratios[10 ** 6]


def test_no_class_layouts_with_the_users_capacities(early_classes):
    p = T.treelstm_params(jax.random.PRNGKey(6), 4, vocab=50)
    rng = random.Random(6)
    batched = autograph.fold(T.encode, capacities=(16, 4))
    for _ in range(10):
        plan = batched.plan(T.random_batch(rng, 8, 2, 20, vocab=50), params=p)
        assert set(plan.layout.steps) <= {16, 4}


def test_fuzzed_class_case():
    """One size-class fuzz case: batches of one size on the classed layouts, whose
    narrow tops have steps of one row (``python -m tests.fold.fuzz --classes``)."""
    from tests.fold.fuzz import check_class_case
    assert check_class_case(0) == []
