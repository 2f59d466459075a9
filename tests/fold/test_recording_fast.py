"""Recording's fast path (recording_fast) against the general recorder: the same
recording where it records, a handover where it cannot, and the fold's results.

    python -m tests.fold.test_recording_fast --count 300   # random recursions and trees
"""

import argparse
import gc
import random
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.fold import recording_fast
from autograph.fold.recording import Recorder, Registry
from tests.fold import trees as T


def avals(p):
    return jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), p)


def same_recording(a, b):
    """Whether two recordings have the same nodes, rows, data, counts and roots once
    each is reduced to one node per distinct call (``canonical``): the fast path
    looks up only leaf calls in its subexpression table, the general recorder every
    call."""
    a_counts, a_roots, a_packed = canonical(a)
    b_counts, b_roots, b_packed = canonical(b)
    if a_counts != b_counts or a_roots != b_roots or a.root_treedef != b.root_treedef:
        return False
    if a_packed.keys() != b_packed.keys():     # (in the order of their registry's numbers)
        return False
    for sig, (rows, data) in a_packed.items():
        other_rows, other_data = b_packed[sig]
        if not np.array_equal(rows, other_rows) or len(data) != len(other_data):
            return False
        if not all(np.array_equal(x, y) and x.dtype == y.dtype
                   for x, y in zip(data, other_data, strict=True)):
            return False
    return True


def canonical(recording):
    """The recording with every repeated call (same signature, same input rows once
    reduced, same data) folded into its first node, rows renumbered densely in
    their order: (counts, roots, packed by callee)."""
    packed = by_callee(recording)
    sigs = {key: sig for sig in recording.packed
            for key in [(sig.callee, sig.treedef, sig.kinds)]}
    nodes = []          # (height, signature key, first output row, node index)
    for key, (rows, _) in packed.items():
        n_in = len(sigs[key].in_classes)
        nodes += [(int(r[0]), id(sigs[key]), int(r[1 + n_in]), key, i)
                  for i, r in enumerate(rows)]
    nodes.sort(key=lambda node: node[:3])       # inputs first, repeats in their order
    target, seen, kept = {}, {}, {key: [] for key in packed}
    for _, _, _, key, i in nodes:
        sig, (rows, data) = sigs[key], packed[key]
        n_in = len(sig.in_classes)
        inputs = tuple(target.get((c, r), (c, r)) for c, r in
                       zip(sig.in_classes, rows[i, 1:1 + n_in].tolist(), strict=True))
        outs = list(zip(sig.out_classes, rows[i, 1 + n_in:].tolist(), strict=True))
        first = seen.setdefault((key, inputs, tuple(d[i].tobytes() for d in data)), outs)
        if first is outs:
            kept[key].append(i)
        else:
            target.update(zip(outs, first, strict=True))
    dense, counts = {}, {}          # a kept row's new number, in its class's order
    for c, n in recording.counts.items():
        for r in range(n):
            if (c, r) not in target:
                dense[(c, r)] = counts.get(c, 0)
                counts[c] = dense[(c, r)] + 1
    for row, first in target.items():
        dense[row] = dense[first]
    out = {}
    for key, idx in kept.items():
        idx.sort()                  # in the order they were made
        sig, (rows, data) = sigs[key], packed[key]
        classes = sig.in_classes + sig.out_classes
        new = rows[idx].copy()
        for j, c in enumerate(classes):
            new[:, 1 + j] = [dense[(c, r)] for r in new[:, 1 + j].tolist()]
        out[key] = (new, [d[idx] for d in data])
    roots = [(c, dense[(c, r)]) for c, r in recording.roots]
    return counts, roots, out


def by_callee(recording):
    """Its packed rows keyed by what a signature is (registries number their own)."""
    return {(sig.callee, sig.treedef, sig.kinds): packed
            for sig, packed in recording.packed.items()}


def both(fn, p, tree):
    """The general and the fast recording of ``tree``, each in a registry of its own,
    and the fast one's registry."""
    general = Recorder(Registry(avals(p)), fn).record(tree)
    registry = Registry(avals(p))
    return general, recording_fast.record(registry, fn, tree), registry


def shared_tree(rng):
    shared = T.random_tree(rng, 5, vocab=50)
    return T.Node(left=T.Node(left=shared, right=T.Node(word=1)), right=shared)


def nary_tree(rng, depth=3):
    children = [] if depth == 0 else [nary_tree(rng, depth - 1)
                                      for _ in range(rng.randrange(0, 3))]
    return T.NaryNode(rng.randrange(50), children)


@pytest.fixture(scope="module")
def lstm():
    return T.treelstm_params(jax.random.PRNGKey(0), 4, vocab=50)


@pytest.fixture(scope="module")
def rnn():
    return T.rnn_params(jax.random.PRNGKey(1), 4)


def test_treelstm_fast_path_records_what_the_general_path_records(lstm):
    rng = random.Random(0)
    for tree in [T.Node(word=3), T.chain_tree(9, 50), shared_tree(rng),
                 *T.random_batch(rng, 5, 1, 30, vocab=50)]:
        general, fast, registry = both(T.encode, lstm, tree)
        assert same_recording(general, fast)
        assert registry.recorded == {"fast": 1, "general": 0}
        assert registry.fast_declined is None


def test_lists_loops_jnp_calls_and_operators_on_the_fast_path(rnn):
    rng = random.Random(1)
    for _ in range(6):
        tree = nary_tree(rng)
        general, fast, registry = both(T.nary, rnn, tree)
        assert same_recording(general, fast)
        assert registry.recorded["fast"] == 1


def helpers(p, node):
    """Calls the fast hook hands to the general one: a keyword argument, a nested
    tuple, a constant array as data, a helper taking tree nodes, builtins."""
    if node.is_leaf:
        return T.embed(p, word=node.word)
    pair = ((both_children(p, node),),)
    h = scaled(pair, np.float32(0.5) * np.ones(4, np.float32))
    return h + max(len(h), 1) * T.mix(p, h, h)


def both_children(p, node):
    return T.mix(p, helpers(p, node.left), helpers(p, node.right))


def scaled(pair, scale):
    return pair[0][0] * scale


def test_calls_handed_to_the_general_hook_record_the_same(rnn):
    rng = random.Random(2)
    for tree in T.random_batch(rng, 4, 1, 12, vocab=50) + [shared_tree(rng)]:
        general, fast, registry = both(helpers, rnn, tree)
        assert same_recording(general, fast)
        assert registry.recorded == {"fast": 1, "general": 0}
    trees = T.random_batch(rng, 5, 1, 12, vocab=50)
    expected = jnp.stack([helpers(rnn, t) for t in trees])
    np.testing.assert_allclose(autograph.fold(helpers)(rnn, trees), expected, rtol=1e-5)


def test_a_branch_on_a_computed_value_hands_the_function_to_the_general_path(rnn):
    trees = T.random_batch(random.Random(3), 6, 2, 12, vocab=50)
    for tree in trees[:3]:
        general, fast, registry = both(T.branchy, rnn, tree)
        assert same_recording(general, fast)
        assert registry.fast_declined == recording_fast.VALUE_BRANCH
        assert registry.recorded == {"fast": 0, "general": 1}
    batched = autograph.fold(T.branchy)
    roots = batched(rnn, trees)
    np.testing.assert_allclose(roots, jnp.stack([T.branchy(rnn, t) for t in trees]),
                               rtol=1e-5)
    registry = batched._last_registry
    # declined once; the later trees went straight to the general recorder
    assert registry.fast_declined == recording_fast.VALUE_BRANCH
    assert registry.recorded == {"fast": 0, "general": len(trees)}


def leafy_branch(p, node):
    """Branches on a computed value only below some inner nodes: the first trees,
    all leaves, record fast; the first tree that branches hands over."""
    if node.is_leaf:
        return T.embed(p, node.word)
    h = T.mix(p, leafy_branch(p, node.left), leafy_branch(p, node.right))
    if h.sum() > 0:
        return h
    return -h


def test_a_handover_after_fast_trees_keeps_the_batch_correct(rnn):
    trees = [T.Node(word=w) for w in (1, 2, 3)] + T.random_batch(random.Random(4), 4, 2, 9,
                                                                 vocab=50)
    batched = autograph.fold(leafy_branch)
    roots = batched(rnn, trees)
    np.testing.assert_allclose(roots, jnp.stack([leafy_branch(rnn, t) for t in trees]),
                               rtol=1e-5)
    assert batched._last_registry.recorded == {"fast": 3, "general": 4}


def _reciprocal(p, x):
    return p["w"] / x


def signed(p, node):
    """Leaves' data are floats: 0.0 and -0.0 are equal (and hash alike) in Python
    but not here (1 / x), so a subexpression table keyed by the data must not merge
    them."""
    if node.is_leaf:
        return _reciprocal(p, node.word)
    return signed(p, node.left) + 2 * signed(p, node.right)


def signed_branchy(p, node):
    """``signed`` with a branch on a computed value: recorded by the general path."""
    if node.is_leaf:
        return _reciprocal(p, node.word)
    h = signed_branchy(p, node.left) + 2 * signed_branchy(p, node.right)
    if h.sum() > 0:
        return h
    return h * 3


@pytest.mark.parametrize("fn, path", [(signed, "fast"), (signed_branchy, "general")])
def test_signed_zeros_in_data_stay_apart(fn, path):
    p = {"w": jnp.arange(1.0, 4.0)}
    trees = [T.Node(left=T.Node(word=0.0), right=T.Node(word=-0.0)),
             T.Node(left=T.Node(word=-0.0), right=T.Node(word=0.0)),
             T.Node(left=T.Node(word=0.0), right=T.Node(word=0.0))]
    expected = np.stack([fn(p, t) for t in trees])
    assert np.isnan(expected[0]).all() and np.isposinf(expected[2]).all()
    batched = autograph.fold(fn)
    np.testing.assert_array_equal(batched(p, trees), expected)
    assert batched._last_registry.recorded[path] == len(trees)
    plan = batched.plan(trees, params=p)
    np.testing.assert_array_equal(jax.jit(batched)(p, plan), expected)


@pytest.mark.parametrize("model, text", [(T.looping, "while h.sum() > 0"),
                                         (T.deepening, "if h.sum() > 0")])
def test_depth_on_computed_values_is_still_refused_at_the_users_line(rnn, model, text):
    import inspect
    lines, first = inspect.getsourcelines(model)
    line = first + next(i for i, source in enumerate(lines) if text in source)
    registry = Registry(avals(rnn))
    with pytest.raises(autograph.ConversionError, match="depth depends on computed") as e:
        recording_fast.record(registry, model, T.random_tree(random.Random(5), 4, 50))
    assert (e.value.filename, e.value.lineno) == (T.__file__, line)
    assert registry.fast_declined == recording_fast.VALUE_BRANCH


def test_an_error_in_the_fast_path_is_the_general_paths_error(rnn):
    with pytest.raises(autograph.ConversionError, match="read as a Python number") as e:
        autograph.fold(T.reads_number)(rnn, [T.random_tree(random.Random(6), 4, 50)])
    assert e.value.filename == T.__file__


def test_the_garbage_collector_is_paused_only_while_recording(rnn):
    tree = T.random_tree(random.Random(7), 6, 50)
    seen = []

    def watching(p, node):
        seen.append(gc.isenabled())
        return T.nary(p, node) if isinstance(node, T.NaryNode) else T.embed(p, 1)

    assert gc.isenabled()
    recording_fast.record(Registry(avals(rnn)), watching, tree)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(autograph.ConversionError):
        recording_fast.record(Registry(avals(rnn)), T.reads_number, tree)
    assert gc.isenabled()
    gc.disable()
    try:
        recording_fast.record(Registry(avals(rnn)), watching, tree)
        assert not gc.isenabled()           # the caller's setting is left as it was
    finally:
        gc.enable()
    gc.collect()
    recording_fast.record(Registry(avals(rnn)), helpers, tree)
    assert gc.collect() == 0                # the recorder died by reference counting


def test_each_recording_reads_the_closure_as_it_is_then(rnn):
    offset = 1

    def shifted(p, node):
        if node.is_leaf:
            return T.embed(p, node.word + offset)
        return T.mix(p, shifted(p, node.left), shifted(p, node.right))

    batched = autograph.fold(shifted)
    first = [T.random_tree(random.Random(8), 5, 40)]
    np.testing.assert_allclose(batched(rnn, first)[0], shifted(rnn, first[0]), rtol=1e-5)
    offset = 2
    second = [T.random_tree(random.Random(9), 5, 40)]
    np.testing.assert_allclose(batched(rnn, second)[0], shifted(rnn, second[0]), rtol=1e-5)


def _unassigned_closure():
    def reads_later(p, node):
        return T.embed(p, word)
    return reads_later
    word = 0    # noqa: F841 (never runs: the closure's cell stays empty)


def test_an_empty_closure_cell_is_refused_at_the_functions_line(rnn):
    fn = _unassigned_closure()
    with pytest.raises(autograph.ConversionError, match="reads `word` before") as e:
        autograph.fold(fn)(rnn, [T.Node(word=1)])
    assert (e.value.filename, e.value.lineno) == (__file__, fn.__code__.co_firstlineno)


# -- random recursions: the fast and the general recorder agree --------------------------

def _random_model(rng):
    """A recursion over binary trees built from random parts: which calls, how the
    children are combined (tuple, list, operators), repeated calls (shared rows),
    Python numbers as data, a branch on a computed value sometimes."""
    combine = rng.choice(["mix", "tuple", "list", "ops", "twice", "switch"])
    leaf_scale = rng.choice([None, 2, 0.5])
    branch = rng.random() < 0.25

    def model(p, node):
        if node.is_leaf:
            h = T.embed(p, node.word % 7 if leaf_scale is None else node.word)
            return h if leaf_scale is None else h * leaf_scale
        a, b = model(p, node.left), model(p, node.right)
        if combine == "mix":
            h = T.mix(p, a, b)
        elif combine == "tuple":
            h = _pair(p, (a, b))
        elif combine == "list":
            h = _pair(p, [a, b])
        elif combine == "ops":
            h = jnp.tanh(a - b) + 0.25 * a
        elif combine == "twice":
            h = T.mix(p, a, b) + T.mix(p, a, b)
        else:       # one call site, several patterns: callees, a tuple or a list, a number
            left, right = node.left.is_leaf, node.right.is_leaf
            f = T.mix if left and right else _weigh
            h = f(p, a, b if left and right else (b, a) if left else [a, b] if right
                  else 0.5)
        if branch and h.sum() > 0:
            return -h
        return h

    return model


def _pair(p, children):
    return jnp.tanh(p["w"] @ jnp.concatenate(children))


def _weigh(p, a, parts):
    return a * parts if not isinstance(parts, (tuple, list)) else _pair(p, parts)


def check_random(seed):
    """One random recursion over a few random trees (some with a shared subtree),
    each recorded alone and all as one batch: a list of mismatch descriptions."""
    rng = random.Random(seed)
    model = _random_model(rng)
    p = T.rnn_params(jax.random.PRNGKey(seed % 4), 4)
    trees = T.random_batch(rng, 3, 1, 16, vocab=50) + [shared_tree(rng)]
    bad = []
    shared = Registry(avals(p))         # the later trees on the sites the first learned
    batch = recording_fast.record_batch(Registry(avals(p)), model, trees)
    for i, tree in enumerate(trees):
        general, fast, _ = both(model, p, tree)
        if not same_recording(general, fast):
            bad.append(f"seed {seed} tree {i}: the fast recording differs")
        if not same_recording(general, recording_fast.record(shared, model, tree)):
            bad.append(f"seed {seed} tree {i}: the fast recording through one registry "
                       "differs")
        if not same_recording(general, batch[i]):
            bad.append(f"seed {seed} tree {i}: the batch's recording differs")
    return bad


def test_random_recursions_record_the_same_on_both_paths():
    assert [m for seed in range(40) for m in check_random(seed)] == []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args(argv)
    bad = [m for seed in range(args.seed, args.seed + args.count) for m in check_random(seed)]
    print(f"{args.count} random recursions, {len(bad)} mismatches")
    print("\n".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
