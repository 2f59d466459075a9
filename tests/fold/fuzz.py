"""Differential fuzzing of autograph.fold's plans: sequences of random batches through
one folded function, so later batches reuse earlier layouts (nodes spilled into later
steps, empty and spare steps), each checked against the plain recursion.

    python -m tests.fold.fuzz --count 200      # sequences; prints mismatches
    python -m tests.fold.fuzz --classes --count 50     # size-class cases
    python -m tests.fold.fuzz --profile issue --count 100   # trees of up to 128 leaves

A case (:func:`check_case`): step capacities on the grid or from a random list, no spare steps or
headroom half of the time (so batches must spill into the steps they have), then a
few batches of random, chain-shaped and single-leaf trees, through one of
``MODELS`` (one inner signature, or several interleaved). Each batch's roots
(compiled) are compared with the recursion's, and every few batches the gradient of
a loss too.

A size-class case (:func:`check_class_case`): batches of one size (1 to 8 trees) at
one state width, planned until the size chooser issues its size-classed layouts
(their steps sized to the levels' shares, down to one row at a batch's narrow top),
then run on them, through the TreeLSTM or a model whose callee gathers from the
parameters and indexes by a number (``CLASS_MODELS``). One-row steps once crashed
XLA CPU's compile (the executor's ``_take``).

A profile (``PROFILES``) sets the trees' sizes and the widths: ``ci`` (the tests' cases:
small trees, a few seconds a case) or ``issue`` (issue 29's trees, 16 to 128 leaves,
chains of up to 128, and widths up to 128; a case takes tens of seconds).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys

import jax
import jax.numpy as jnp
import numpy as np

import autograph
from autograph.fold import schedule
from tests.fold import trees as T

CAPACITIES = [None, None, (8, 2), (16, 4, 1), (4,), (32, 8, 2), (256, 64, 16, 4)]
HIDDEN = 4


@dataclasses.dataclass(frozen=True)
class Profile:
    """The trees a case draws: ``low`` to one of ``highs`` leaves, chains of 2 to
    ``chain`` leaves, ``trees`` per batch (at most), and the class cases' widths."""

    low: int
    highs: tuple
    chain: int
    trees: int
    widths: tuple


PROFILES = {
    "ci": Profile(low=1, highs=(6, 20, 40), chain=30, trees=8, widths=(4, 8, 32)),
    # issue 29's trees (its batches of 64 take the benchmark's budget: 8 here, as the
    # reference runs one jitted call per node, its gradient too)
    "issue": Profile(low=16, highs=(48, 128), chain=128, trees=8, widths=(4, 32, 128)),
}
CI = PROFILES["ci"]


def _batch(rng, profile=CI):
    kinds = rng.choice(["random", "random", "mixed", "leaves"])
    n = rng.randrange(1, profile.trees + 1)
    if kinds == "leaves":
        return [T.Node(word=rng.randrange(50)) for _ in range(n)]
    trees = T.random_batch(rng, n, profile.low, rng.choice(profile.highs), vocab=50)
    if kinds == "mixed":
        trees.append(T.chain_tree(rng.randrange(2, profile.chain), vocab=50))
        rng.shuffle(trees)
    return trees


_leaf, _cell = jax.jit(T.leaf), jax.jit(T.cell)


def _per_node(p, node):
    """The recursion, one jitted call per node (the reference)."""
    if node.is_leaf:
        return _leaf(p, node.word)
    return _cell(p, _per_node(p, node.left), _per_node(p, node.right))


_word_cell = jax.jit(T.word_cell)


def _per_node_words(p, node):
    """:func:`trees.encode_words`, one jitted call per node."""
    if node.is_leaf:
        return _leaf(p, node.word)
    return _word_cell(p, node.word, _per_node_words(p, node.left),
                      _per_node_words(p, node.right))


def _stacked(p, trees, recursion=_per_node):
    outs = [recursion(p, t) for t in trees]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *outs)


def _signed_row(p, zero):
    """A row scaled by the sign of a float zero (arctan2(+0.0, -1) is pi, arctan2(-0.0,
    -1) is -pi): calls whose data differ only in that sign differ."""
    return p["e"][0] * jnp.arctan2(zero, -1.0)


def signed_zeros(p, node):
    """Float data whose zeros carry a sign (``0.0 == -0.0`` in Python): a
    subexpression table keyed by the data must keep the calls apart."""
    if node.is_leaf:
        return T.mix(p, T.embed(p, node.word), _signed_row(p, (node.word % 2 * 2 - 1) * 0.0))
    return T.mix(p, signed_zeros(p, node.left), signed_zeros(p, node.right))


# name: (the folded recursion, its parameters, the reference recursion, the part of
# the result the gradient's loss reads, None: roots only, as the reference's branch on
# a computed value cannot run under jax.grad). The TreeLSTM has one inner signature;
# branchy's branch on a computed value gives several (mix, the comparison's
# reductions, both sides' arithmetic, the select), so steps of different
# signatures interleave (the executor's switch, placement by levels of several).
MODELS = {
    "treelstm": (T.encode, lambda key: T.treelstm_params(key, HIDDEN, vocab=50), _per_node,
                 lambda out: out[1]),
    "branchy": (T.branchy, lambda key: T.rnn_params(key, HIDDEN, vocab=50), T.branchy,
                None),
    "signed_zeros": (signed_zeros, lambda key: T.rnn_params(key, HIDDEN, vocab=50),
                     signed_zeros, lambda out: out),
}


def _close(actual, expected, rtol):
    for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected),
                    strict=True):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        if a.shape != e.shape or np.abs(a - e).max() > rtol * max(np.abs(e).max(), 1e-30):
            return False
    return True


def check_case(seed, batches=4, profile=CI):
    """One sequence of batches; a list of mismatch descriptions (empty: all agree)."""
    rng = random.Random(seed)
    fn, make_params, recursion, part = MODELS[rng.choice(sorted(MODELS))]
    p = make_params(jax.random.PRNGKey(seed))
    tight = rng.random() < 0.5
    saved = schedule.SPARE_ROWS, schedule.HEADROOM
    if tight:
        schedule.SPARE_ROWS, schedule.HEADROOM = 0, 1.0
    try:
        batched = autograph.fold(fn, capacities=rng.choice(CAPACITIES))
        run = jax.jit(batched)
        grad = jax.jit(jax.grad(lambda p, plan: jnp.sum(jnp.sin(part(batched(p, plan))))))
        mismatches = []
        for b in range(batches):
            trees = _batch(rng, profile)
            plan = batched.plan(trees, params=p)
            if not _close(run(p, plan), _stacked(p, trees, recursion), 1e-5):
                mismatches.append(f"seed {seed} batch {b}: roots differ ({plan})")
            if b % 2 == 1 and part is not None:
                expected = jax.grad(lambda p, trees=trees: jnp.sum(
                    jnp.sin(part(_stacked(p, trees, recursion)))))(p)
                if not _close(grad(p, plan), expected, 1e-4):
                    mismatches.append(f"seed {seed} batch {b}: gradients differ ({plan})")
        return mismatches
    finally:
        schedule.SPARE_ROWS, schedule.HEADROOM = saved


# The class cases' models: name -> (the folded recursion, its reference, what gives the
# trees' inner nodes their words). ``words``: a callee that gathers from the
# parameters and indexes a child's state by a number, inside one-row steps.
CLASS_MODELS = {
    "treelstm": (T.encode, _per_node, None),
    "words": (T.encode_words, _per_node_words, T.with_inner_words),
}


def check_class_case(seed, batches=3, profile=CI):
    """Batches of one size and width on the size-classed layouts; mismatch
    descriptions (a compile that fails is one)."""
    rng = random.Random(seed)
    n, hidden = rng.randrange(1, profile.trees + 1), rng.choice(profile.widths)
    p = T.treelstm_params(jax.random.PRNGKey(seed), hidden, vocab=50)
    low, high = profile.low, rng.choice(profile.highs)
    # drawn apart: the trees a seed draws stay those it drew before there were models
    name = random.Random(f"model {seed}").choice(sorted(CLASS_MODELS))
    fn, recursion, words = CLASS_MODELS[name]

    def draw():
        trees = T.random_batch(rng, n, low, high, vocab=50)
        return trees if words is None else words(trees, rng, vocab=50)

    saved = schedule.CLASS_AFTER
    schedule.CLASS_AFTER = 6
    try:
        batched = autograph.fold(fn)
        run = jax.jit(batched)
        grad = jax.jit(jax.grad(lambda p, plan: jnp.sum(jnp.sin(batched(p, plan)[1]))))
        for _ in range(schedule.CLASS_AFTER + 2):
            batched.plan(draw(), params=p)
        mismatches = []
        for b in range(batches):
            trees = draw()
            plan = batched.plan(trees, params=p)
            where = f"seed {seed} ({name}, {n} trees, H = {hidden}) batch {b}"
            try:
                if not _close(run(p, plan), _stacked(p, trees, recursion), 1e-5):
                    mismatches.append(f"{where}: roots differ ({plan})")
                expected = jax.grad(lambda p, trees=trees: jnp.sum(
                    jnp.sin(_stacked(p, trees, recursion)[1])))(p)
                if not _close(grad(p, plan), expected, 1e-4):
                    mismatches.append(f"{where}: gradients differ ({plan})")
            except jax.errors.JaxRuntimeError as e:
                mismatches.append(f"{where}: {str(e).splitlines()[0]} ({plan})")
        return mismatches
    finally:
        schedule.CLASS_AFTER = saved


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="sequences of batches")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--model", choices=sorted(MODELS), help="only the seeds of one model")
    parser.add_argument("--classes", action="store_true",
                        help="size-class cases (check_class_case) instead")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="ci",
                        help="the trees' sizes and widths (PROFILES)")
    parser.add_argument("--progress", action="store_true",
                        help="a line per case as it ends (long runs)")
    args = parser.parse_args(argv)
    profile = PROFILES[args.profile]
    mismatches, checked = [], 0
    for seed in range(args.seed, args.seed + args.count):
        if args.classes:
            found = check_class_case(seed, profile=profile)
        elif args.model is None or MODELS[random.Random(seed).choice(
                sorted(MODELS))] is MODELS[args.model]:
            found = check_case(seed, profile=profile)
        else:
            continue
        checked += 1
        mismatches += found
        if args.progress:
            print(f"seed {seed}: {len(found)} mismatches", *found, sep="\n  ", flush=True)
    print(f"{checked} sequences, {len(mismatches)} mismatches")
    for m in mismatches:
        print(m)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
