"""One fast recorder per batch (recording_fast.record_batch, recording_batch.split):
each tree's recording the same as the general recorder's of that tree alone, a
handover in the middle of a batch, and the fold's per-tree cache around it."""

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.fold import recording_fast, rewrite
from autograph.fold.recording import Recorder, Recording, Registry, numbers
from autograph.fold.schedule import merge
from tests.fold import trees as T
from tests.fold.test_recording_fast import (
    avals,
    helpers,
    leafy_branch,
    nary_tree,
    same_recording,
    shared_tree,
)


@pytest.fixture(scope="module")
def params():
    """The TreeLSTM's parameters (``lstm``) and the tree-RNN's (``rnn``)."""
    return {"lstm": T.treelstm_params(jax.random.PRNGKey(0), 4, vocab=50),
            "rnn": T.rnn_params(jax.random.PRNGKey(1), 4)}


def general_recordings(fn, p, trees):
    return [Recorder(Registry(avals(p)), fn).record(tree) for tree in trees]


@pytest.mark.parametrize("model, make", [
    ("encode", lambda rng: [T.Node(word=3), T.chain_tree(9, 50), shared_tree(rng),
                            *T.random_batch(rng, 5, 1, 30, vocab=50), T.Node(word=4)]),
    ("nary", lambda rng: [nary_tree(rng) for _ in range(6)]),
    ("helpers", lambda rng: T.random_batch(rng, 4, 1, 12, vocab=50) + [shared_tree(rng)]),
])
def test_a_batch_records_each_tree_as_the_general_path_records_it_alone(params, model, make):
    fn = helpers if model == "helpers" else getattr(T, model)
    p = params["lstm"] if model == "encode" else params["rnn"]
    trees = make(random.Random(0))
    registry = Registry(avals(p))
    batch = recording_fast.record_batch(registry, fn, trees)
    assert registry.recorded == {"fast": len(trees), "general": 0}
    for general, fast in zip(general_recordings(fn, p, trees), batch, strict=True):
        assert same_recording(general, fast)
    # and a second batch through the learned sites of the first
    again = recording_fast.record_batch(registry, fn, trees[::-1])
    for general, fast in zip(general_recordings(fn, p, trees[::-1]), again, strict=True):
        assert same_recording(general, fast)


def test_a_tree_that_branches_on_a_value_hands_it_and_the_rest_to_the_general_path(params):
    rnn = params["rnn"]
    leaves = [T.Node(word=w) for w in (1, 2, 3)]
    trees = leaves + T.random_batch(random.Random(4), 4, 2, 9, vocab=50) + [T.Node(word=5)]
    registry = Registry(avals(rnn))
    batch = recording_fast.record_batch(registry, leafy_branch, trees)
    # the fourth tree branched: its partial nodes are dropped, it and the rest general
    assert registry.recorded == {"fast": 3, "general": 5}
    assert registry.fast_declined == recording_fast.VALUE_BRANCH
    for general, fast in zip(general_recordings(leafy_branch, rnn, trees), batch,
                             strict=True):
        assert same_recording(general, fast)


def test_depth_on_computed_values_in_a_later_tree_is_refused_at_the_users_line(params):
    rnn = params["rnn"]
    import inspect
    lines, first = inspect.getsourcelines(T.looping)
    line = first + next(i for i, s in enumerate(lines) if "while h.sum() > 0" in s)
    trees = [T.Node(word=1), T.random_tree(random.Random(5), 4, 50)]
    with pytest.raises(autograph.ConversionError, match="depth depends on computed") as e:
        recording_fast.record_batch(Registry(avals(rnn)), T.looping, trees)
    assert (e.value.filename, e.value.lineno) == (T.__file__, line)


def again(p, node):
    if node.is_leaf:
        return T.embed(p, node.word)
    child = node if node.word == 0 else node.left           # a marked node: itself again
    return T.mix(p, again(p, child), again(p, node.right))


def test_a_call_of_itself_with_the_same_arguments_is_refused_at_the_users_line(params):
    import inspect
    lines, first = inspect.getsourcelines(again)
    line = first + next(i for i, s in enumerate(lines) if "again(p, child)" in s)
    registry = Registry(avals(params["rnn"]))
    leaf = T.Node(word=1)
    # the first tree teaches the site the recursion step; in the second, a marked node
    # below the root calls itself: no memo hit (the fast steps keep no mark of a running
    # call), so it recurses to Python's limit, and the general recorder names the call
    trees = [T.Node(left=leaf, right=leaf), T.Node(word=7, left=leaf, right=leaf),
             T.Node(left=T.Node(word=0, left=leaf, right=leaf), right=leaf)]
    with pytest.raises(autograph.ConversionError, match="calls itself again") as e:
        recording_fast.record_batch(registry, again, trees)
    assert (e.value.filename, e.value.lineno) == (__file__, line)
    # the fast path recorded the first trees, handed the looping one over, and stays on
    assert registry.recorded == {"fast": 2, "general": 1}
    assert registry.fast_declined is None
    recording_fast.record_batch(registry, again, trees[:2])
    assert registry.recorded == {"fast": 4, "general": 1}


def test_the_fold_records_each_new_tree_once_and_reuses_the_cached_ones(params):
    lstm = params["lstm"]
    rng = random.Random(6)
    trees = T.random_batch(rng, 6, 1, 20, vocab=50)
    batched = autograph.fold(T.encode)
    expected = jnp.stack([T.encode(lstm, t)[0] for t in trees])
    # a tree repeated inside the batch is recorded once
    roots = batched(lstm, [*trees[:4], trees[0], trees[1]])[0]
    np.testing.assert_allclose(roots, expected[jnp.array([0, 1, 2, 3, 0, 1])], rtol=1e-5)
    registry = batched._last_registry
    assert registry.recorded == {"fast": 4, "general": 0}
    # a later batch records only the trees it has not seen
    roots = batched(lstm, trees[::-1])[0]
    np.testing.assert_allclose(roots, expected[::-1], rtol=1e-5)
    assert registry.recorded == {"fast": 6, "general": 0}
    recordings = batched._record_all(registry, trees)
    assert recordings == batched._record_all(registry, trees)   # the same objects
    assert registry.recorded == {"fast": 6, "general": 0}


def rebinds(p, node):
    """Rebinds a parameter: no stepping copy (its memo entry would hold another node)."""
    if node.is_leaf:
        return T.embed(p, node.word)
    h = rebinds(p, node.left)
    node = node.right
    return T.mix(p, h, rebinds(p, node))


def counted(p, node, depth=0, *, scale=1):
    """Steps of three arguments (the stepping copy) under a root call of two."""
    if node.is_leaf:
        return T.embed(p, (node.word + depth * scale) % 50)
    return T.mix(p, counted(p, node.left, depth + 1), counted(p, node.right, depth + 1))


def one_line(p, node): return T.embed(p, node.word) if node.is_leaf else T.mix(p, one_line(p, node.left), one_line(p, node.left))  # noqa: E501, E704


@pytest.mark.parametrize("fn, steps", [(rebinds, False), (counted, True), (one_line, True)])
def test_recursion_steps_in_the_copys_own_frame_record_the_same(params, fn, steps):
    rnn = params["rnn"]
    assert (rewrite.stepping_arity(fn) is not None) == steps
    trees = T.random_batch(random.Random(8), 5, 1, 12, vocab=50) + [shared_tree(
        random.Random(9))]
    registry = Registry(avals(rnn))
    for _ in range(2):          # learning the sites, then through them
        batch = recording_fast.record_batch(registry, fn, trees)
        assert registry.fast_declined is None
        for general, fast in zip(general_recordings(fn, rnn, trees), batch, strict=True):
            assert same_recording(general, fast)
    expected = jnp.stack([fn(rnn, t) for t in trees])
    np.testing.assert_allclose(autograph.fold(fn)(rnn, trees), expected, rtol=1e-5)


def _plain(recording, registry):
    """The same recording, not tied to its batch (merged by slices)."""
    return Recording(recording.packed, recording.counts, recording.roots,
                     recording.root_treedef, recording.class_index, registry.root_keys)


def _same_merge(a, b):
    (nodes_a, totals_a, roots_a, def_a, classes_a), (nodes_b, totals_b, roots_b, def_b,
                                                     classes_b) = a, b
    if (totals_a, def_a, classes_a) != (totals_b, def_b, classes_b) or not np.array_equal(
            roots_a, roots_b) or roots_a.dtype != roots_b.dtype or nodes_a.keys() != nodes_b.keys():
        return False
    return all(np.array_equal(x, y) and x.dtype == y.dtype
               for sig in nodes_a for x, y in zip(
                   [*nodes_a[sig][:3], *nodes_a[sig][3]], [*nodes_b[sig][:3], *nodes_b[sig][3]],
                   strict=True))


@pytest.mark.parametrize("model", ["encode", "helpers", "leafy_branch"])
def test_a_fresh_batch_merges_as_its_trees_recordings_merge(params, model):
    # a fresh batch's plan takes the recorder's tables whole (recording_batch.Batch);
    # the same trees' recordings cut from it, or a part of the batch, merge by slices
    fn = {"encode": T.encode, "helpers": helpers, "leafy_branch": leafy_branch}[model]
    p = params["lstm"] if model == "encode" else params["rnn"]
    rng = random.Random(11)
    trees = ([T.Node(word=w) for w in (1, 2, 3)] if model == "leafy_branch" else []) + [
        T.chain_tree(6, 50), shared_tree(rng), *T.random_batch(rng, 6, 1, 20, vocab=50)]
    registry = Registry(avals(p))
    batch = recording_fast.record_batch(registry, fn, trees)
    plain = [_plain(r, registry) for r in batch]
    assert _same_merge(merge(batch), merge(plain))
    assert _same_merge(merge(batch[1:]), merge(plain[1:]))
    assert _same_merge(merge(batch[::-1]), merge(plain[::-1]))
    again = recording_fast.record_batch(registry, fn, trees[:3])
    mixed = [again[0], batch[1], again[2]]
    assert _same_merge(merge(mixed), merge([_plain(r, registry) for r in mixed]))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.bool_])
def test_numbers_are_the_arrays_fromiter_makes(dtype):
    values = [0, 1, -7, 2**31 - 1, -2**31, 5] if dtype != np.bool_ else [True, False]
    got = numbers(values, np.dtype(dtype), len(values))
    expected = np.fromiter(values, dtype, len(values))
    assert got.dtype == expected.dtype and got.flags.writeable
    np.testing.assert_array_equal(got, expected)


def test_numbers_out_of_range_raise_numpys_overflow_error():
    with pytest.raises(OverflowError):
        np.fromiter([1, 2**40], np.int32, 2)
    with pytest.raises(OverflowError):
        numbers([1, 2**40], np.dtype(np.int32), 2)
