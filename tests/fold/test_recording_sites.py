"""Recording's specialised call sites (recording_sites): learned once per registry,
the same recording as the general recorder on every later tree, the general hook
wherever a call does not match what its site learned."""

import gc
import inspect
import random

import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.fold import recording_fast, recording_sites, rewrite
from autograph.fold.recording import Recorder, Registry
from tests.fold import test_recording_fast as fast
from tests.fold import trees as T
from tests.fold.test_recording_fast import avals, helpers, nary_tree, same_recording, shared_tree

lstm, rnn = fast.lstm, fast.rnn         # its parameter fixtures


def through_one_registry(fn, p, trees):
    """Record ``trees`` one after another on the fast path with one registry (so the
    later trees use the sites the first ones learned); assert each recording is the
    general recorder's; the registry."""
    registry = Registry(avals(p))
    for i, tree in enumerate(trees):
        general = Recorder(Registry(avals(p)), fn).record(tree)
        assert same_recording(general, recording_fast.record(registry, fn, tree)), i
    return registry


def kinds(registry, fn):
    return [getattr(spec, "kind", spec) for spec in registry.site_specs[fn.__code__]]


def test_the_treelstm_learns_its_sites_once_and_records_the_same_later(lstm):
    rng = random.Random(0)
    trees = [T.chain_tree(7, 50), shared_tree(rng), T.Node(word=3),
             *T.random_batch(rng, 6, 1, 30, vocab=50)]
    registry = through_one_registry(T.encode, lstm, trees)
    # leaf(p, node.word), encode(p, node.left), encode(p, node.right), cell(p, ...)
    assert kinds(registry, T.encode) == ["node", "recursion", "recursion", "node"]
    assert registry.recorded == {"fast": len(trees), "general": 0}


def test_a_site_is_compiled_once_though_its_callers_recurse_before_calling_it(
        lstm, monkeypatch):
    # cell(p, encode(...), encode(...)): every level reads cell's site (its learner)
    # before its arguments recurse, so on the first tree each level's call reaches
    # the learner; the first to return learns the site, the others take its spec
    compiled = []
    compile_site = recording_sites._compile
    monkeypatch.setattr(recording_sites, "_compile",
                        lambda source, consts: compiled.append(source) or compile_site(
                            source, consts))
    registry = through_one_registry(T.encode, lstm, [T.chain_tree(9, 50)])
    node_sites = kinds(registry, T.encode).count("node")
    assert len([s for s in compiled if "cse_get" in s]) == node_sites


def test_lists_loops_and_helpers_record_the_same_through_one_registry(rnn):
    rng = random.Random(1)
    through_one_registry(T.nary, rnn, [nary_tree(rng) for _ in range(8)])
    registry = through_one_registry(
        helpers, rnn, T.random_batch(rng, 6, 1, 12, vocab=50) + [shared_tree(rng)])
    # the keyword call and the builtins stay on the general hook
    assert recording_sites.GENERAL in kinds(registry, helpers)


def _other(p, a, b):
    return jnp.sin(a) * b


def polymorphic(p, node):
    """Sites that see different callees, argument kinds and shapes from call to call:
    each learns its first pattern; the others go to the general hook."""
    if node.is_leaf:
        h = T.embed(p, node.word)
        return h if node.word % 3 else h[:2]          # another shape, sometimes
    a, b = polymorphic(p, node.left), polymorphic(p, node.right)
    if a.shape != b.shape:
        a, b = a[:2], b[:2]
    f = T.mix if a.shape == (4,) and node.left.is_leaf else _other
    h = f(p, a, b)                                    # two callees at one site
    scale = a if node.right.is_leaf else 0.5          # a placeholder or a number
    h = jnp.multiply(h, scale)
    return _pair_or_list(h, (h, b) if node.left.is_leaf else [h, b])


def _pair_or_list(h, parts):
    return h + parts[1] if h.shape == parts[1].shape else h


def test_a_site_that_sees_several_patterns_records_the_same(rnn):
    rng = random.Random(2)
    trees = T.random_batch(rng, 12, 1, 14, vocab=50) + [shared_tree(rng)]
    through_one_registry(polymorphic, rnn, trees)
    batched = autograph.fold(polymorphic)
    trees = [t for t in trees if polymorphic(rnn, t).shape == (4,)]
    roots = batched(rnn, trees)
    expected = jnp.stack([polymorphic(rnn, t) for t in trees])
    np.testing.assert_allclose(roots, expected, rtol=1e-6, atol=1e-6)


def late_placeholder(p, node, depth=0):
    """``jnp.tanh(x)``'s site first sees a Python number (learned as general), later a
    placeholder: still a node."""
    x = 0.5 if depth == 0 else T.embed(p, 1)
    y = jnp.tanh(x)
    if node.is_leaf:
        return T.embed(p, node.word) + y
    return T.mix(p, late_placeholder(p, node.left, depth + 1),
                 late_placeholder(p, node.right, depth + 1)) + y


def test_a_site_learned_as_general_still_records_placeholders(rnn):
    rng = random.Random(3)
    registry = through_one_registry(late_placeholder, rnn,
                                    T.random_batch(rng, 5, 2, 10, vocab=50))
    assert recording_sites.GENERAL in kinds(registry, late_placeholder)


def stuck_after(limit):
    def stuck(p, node):
        """Calls itself with its own arguments on trees wider than ``limit``: after
        the first trees taught its sites, the specialised recursion step meets the
        running call and hands it to the general hook's error."""
        if node.is_leaf:
            return T.embed(p, node.word)
        left = node if T.count_nodes(node) > limit else node.left
        return T.mix(p, stuck(p, left), stuck(p, node.right))
    return stuck


def test_a_call_with_its_own_arguments_is_refused_at_the_users_line_after_learning(rnn):
    stuck = stuck_after(1000)
    registry = Registry(avals(rnn))
    for tree in T.random_batch(random.Random(4), 3, 2, 8, vocab=50):
        recording_fast.record(registry, stuck, tree)
    assert kinds(registry, stuck) == ["node", "general", "recursion", "recursion", "node"]
    stuck.__closure__[0].cell_contents = 3           # now wide trees repeat themselves
    lines, first = inspect.getsourcelines(stuck)
    line = first + next(i for i, s in enumerate(lines) if "stuck(p, left)" in s)
    with pytest.raises(autograph.ConversionError, match="same arguments") as e:
        recording_fast.record(registry, stuck, T.random_tree(random.Random(5), 9, 50))
    assert (e.value.filename, e.value.lineno) == (__file__, line)


def test_a_branch_on_a_computed_value_after_learning_hands_over(rnn):
    trees = [T.Node(word=w) for w in (1, 2, 3)] + T.random_batch(random.Random(6), 4, 2, 9,
                                                                 vocab=50)
    registry = Registry(avals(rnn))
    for tree in trees:
        general = Recorder(Registry(avals(rnn)), T.branchy).record(tree)
        assert same_recording(general, recording_fast.record(registry, T.branchy, tree))
    assert registry.recorded == {"fast": 3, "general": 4}


def test_the_recorder_still_dies_by_reference_counting(lstm):
    registry = Registry(avals(lstm))
    trees = T.random_batch(random.Random(7), 3, 2, 20, vocab=50)
    recording_fast.record(registry, T.encode, trees[0])      # learns and compiles
    gc.collect()
    for tree in trees:
        recording_fast.record(registry, T.encode, tree)
    assert gc.collect() == 0


def test_the_copy_routes_positional_calls_through_one_hook_per_site():
    def calls(p, node, *rest):
        a = T.embed(p, node.word)
        b = T.mix(p, a, *rest)
        return T.mix(p, a=a, b=b)                 # keywords: the general hook

    assert rewrite.site_arities(calls) == (2, None)
    seen = []

    def site(j):
        return lambda f, *args: seen.append((j, f.__name__)) or args[-1]

    copy = rewrite.recording_copy(calls, lambda f, *a, **k: seen.append(("kw", f.__name__)),
                                  [site(0), site(1)])
    copy("p", T.Node(word=1), "r")
    assert seen == [(0, "embed"), (1, "mix"), ("kw", "mix")]


def _state(p, word, scale, even):
    h = T.embed(p, word) * jnp.where(even, scale, -scale)
    return {"h": h, "c": -h}


def _merge(p, left, right, flag):
    h = T.mix(p, left["h"], right["c"])
    return {"h": jnp.where(flag, h, -h), "c": left["c"] + right["h"]}


def walk(p, node):
    """Dict results (built by their treedef), Python numbers and booleans as data."""
    if node.is_leaf:
        return _state(p, node.word, 0.5, node.word % 2 == 0)
    return _merge(p, walk(p, node.left), walk(p, node.right), node.left.is_leaf)


def test_dict_results_numbers_and_booleans_through_learned_sites(rnn):
    trees = T.random_batch(random.Random(8), 6, 1, 12, vocab=50) + [T.chain_tree(6, 50)]
    registry = through_one_registry(walk, rnn, trees)
    # _merge takes dicts: the general hook
    assert kinds(registry, walk) == ["node", "recursion", "recursion", "general"]
    roots = autograph.fold(walk)(rnn, trees)
    expected = [walk(rnn, t) for t in trees]
    for name in "hc":
        np.testing.assert_allclose(roots[name], jnp.stack([e[name] for e in expected]),
                                   rtol=1e-6, atol=1e-6)


class Model:
    """Callees read as attributes of an object: a bound method is a new object per
    read, so its site tests the function and the object."""

    def __init__(self, scale):
        self.scale = scale

    def cell(self, p, a, b):
        return T.mix(p, a, b) * self.scale


def test_bound_methods_as_callees_are_learned_by_function_and_object(rnn):
    model, other = Model(2.0), Model(3.0)

    def run(p, node):
        return (model if node.is_leaf or node.left.is_leaf else other).cell(
            p, T.embed(p, 1), run(p, node.left) if not node.is_leaf else T.embed(p, 2))

    trees = T.random_batch(random.Random(9), 6, 1, 10, vocab=50)
    registry = through_one_registry(run, rnn, trees)
    assert "node" in kinds(registry, run)
    np.testing.assert_allclose(autograph.fold(run)(rnn, trees),
                               jnp.stack([run(rnn, t) for t in trees]), rtol=1e-6, atol=1e-6)


def _total(p, parts):
    return T.mix(p, parts[0], parts[-1]) + len(parts)


def lengths(p, node):
    """One site sees tuples of two placeholders and of three, lists of one and of two:
    a site learned on one length hands the others to the general hook."""
    if node.is_leaf:
        return T.embed(p, node.word)
    parts = (lengths(p, node.left), lengths(p, node.right))
    if node.word == 1:
        parts = (*parts, parts[0])
    elif node.word == 2:
        parts = [parts[1]]
    elif node.word == 3:
        parts = list(parts)
    return _total(p, parts)


def test_a_tuple_of_another_length_at_a_learned_site_records_the_same(rnn):
    rng = random.Random(10)
    trees = T.random_batch(rng, 8, 2, 12, vocab=50)
    for i, tree in enumerate(trees):      # inner nodes carry a word too: which length
        stack = [tree]
        while stack:
            node = stack.pop()
            if not node.is_leaf:
                node.word = (i + len(stack)) % 4
                stack += [node.left, node.right]
    registry = through_one_registry(lengths, rnn, trees)
    assert kinds(registry, lengths)[-1] == "node"
    np.testing.assert_allclose(autograph.fold(lengths)(rnn, trees),
                               jnp.stack([lengths(rnn, t) for t in trees]),
                               rtol=1e-6, atol=1e-6)
