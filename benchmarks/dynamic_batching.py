"""Dynamic batching with ``jax.vmap`` over converted control flow.

TensorFlow Fold batched computations whose structure differs per example (trees,
variable trip counts) by rewriting the graph. With autograph the per-example code is
ordinary Python (``while``, ``if``, ``for`` over a traced range); ``jax.vmap`` over the
converted function runs the whole batch in one compiled call, each example keeping
its own branches and trip counts.

Two workloads, each timed three ways in one run:
- ``per_example``: a Python loop of compiled calls, one per example (what you write
  without batching);
- ``autograph_vmap``: one ``jax.jit(jax.vmap(convert(f)))`` call for the batch;
- ``lax_vmap``: the same computation written by hand with ``lax.while_loop`` /
  ``lax.cond`` / ``lax.fori_loop``, under ``jax.jit(jax.vmap(...))``.

Workloads: collatz step counts for 1024 starting numbers, and a TreeRNN over a batch
of differently shaped binary trees, each encoded as arrays (nodes in topological
order, leaves first; child indices; word ids) and evaluated by a converted loop over
its own number of nodes.

Findings (docs/transformations.md has the figures): collatz batches 50-300x; for the
trees, JAX's vmap of a ``cond`` broadcasts what its branches close over (the weights)
to every example, so the ``if`` that only picks a precomputed value
(``tree_rnn_select``) batches about 10x better than the one doing the matrix work in
its branches (``tree_rnn``), and a per-tree trip count (``tree_rnn_own_size``) makes
the loop counter batched (gathers, scatters). Converted code matches hand-written
``lax`` in every case.

    python -m benchmarks.dynamic_batching         # prints the table
    from benchmarks.dynamic_batching import run   # the figures as a dict
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph

# -- workload 1: collatz ---------------------------------------------------------------


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def collatz_lax(n):
    def body(carry):
        n, steps = carry
        n = lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return lax.while_loop(lambda carry: carry[0] != 1, body, (n, 0))[1]


# -- workload 2: TreeRNN over trees encoded as arrays ---------------------------------

HIDDEN = 32
VOCAB = 100


def tree_rnn(params, words, left, right, size):
    """The root's state: leaves embed their word, inner nodes combine their children.

    Nodes ``0 .. size-1`` are in topological order (children before parents), the
    root last; ``left[i] < 0`` marks a leaf. Arrays are padded to a common length
    with leaves, which no real node reads: the loop runs over the padded length, so
    its counter is the same for every tree in a batch."""
    embed, w, b = params
    states = jnp.zeros((words.shape[0], HIDDEN))
    for i in range(words.shape[0]):
        if left[i] < 0:
            h = embed[words[i]]
        else:
            children = jnp.concatenate([states[left[i]], states[right[i]]])
            h = jnp.tanh(w @ children + b)
        states = states.at[i].set(h)
    return states[size - 1]


def tree_rnn_select(params, words, left, right, size):
    """``tree_rnn`` with the work outside the ``if``: both candidates are computed,
    the ``if`` only picks one. Under ``vmap`` this avoids JAX broadcasting the
    weights that a branch closes over to every example (see ``run``)."""
    embed, w, b = params
    states = jnp.zeros((words.shape[0], HIDDEN))
    for i in range(words.shape[0]):
        leaf = embed[words[i]]
        inner = jnp.tanh(w @ jnp.concatenate([states[left[i]], states[right[i]]]) + b)
        if left[i] < 0:
            h = leaf
        else:
            h = inner
        states = states.at[i].set(h)
    return states[size - 1]


def tree_rnn_select_lax(params, words, left, right, size):
    embed, w, b = params

    def node(i, states):
        leaf = embed[words[i]]
        inner = jnp.tanh(w @ jnp.concatenate([states[left[i]], states[right[i]]]) + b)
        return states.at[i].set(jnp.where(left[i] < 0, leaf, inner))

    states = lax.fori_loop(0, words.shape[0], node, jnp.zeros((words.shape[0], HIDDEN)))
    return states[size - 1]


def tree_rnn_own_size(params, words, left, right, size):
    """``tree_rnn`` looping over each tree's own number of nodes (a traced range)."""
    embed, w, b = params
    states = jnp.zeros((words.shape[0], HIDDEN))
    for i in range(size):
        if left[i] < 0:
            h = embed[words[i]]
        else:
            children = jnp.concatenate([states[left[i]], states[right[i]]])
            h = jnp.tanh(w @ children + b)
        states = states.at[i].set(h)
    return states[size - 1]


def tree_rnn_own_size_lax(params, words, left, right, size):
    embed, w, b = params

    def node(i, states):
        h = lax.cond(
            left[i] < 0,
            lambda: embed[words[i]],
            lambda: jnp.tanh(w @ jnp.concatenate([states[left[i]], states[right[i]]]) + b))
        return states.at[i].set(h)

    states = lax.fori_loop(0, size, node, jnp.zeros((words.shape[0], HIDDEN)))
    return states[size - 1]


def tree_rnn_lax(params, words, left, right, size):
    embed, w, b = params

    def node(i, states):
        h = lax.cond(
            left[i] < 0,
            lambda: embed[words[i]],
            lambda: jnp.tanh(w @ jnp.concatenate([states[left[i]], states[right[i]]]) + b))
        return states.at[i].set(h)

    states = lax.fori_loop(0, words.shape[0], node, jnp.zeros((words.shape[0], HIDDEN)))
    return states[size - 1]


def random_trees(count, max_leaves, seed=0):
    """``count`` random binary trees with 1..max_leaves leaves, as padded arrays."""
    rng = np.random.default_rng(seed)
    max_nodes = 2 * max_leaves - 1
    words = np.zeros((count, max_nodes), np.int32)
    left = np.full((count, max_nodes), -1, np.int32)
    right = np.full((count, max_nodes), -1, np.int32)
    sizes = np.zeros(count, np.int32)
    for t in range(count):
        leaves = int(rng.integers(1, max_leaves + 1))
        words[t, :leaves] = rng.integers(0, VOCAB, leaves)
        frontier = list(range(leaves))  # subtrees not yet combined, as node indices
        nxt = leaves
        while len(frontier) > 1:  # join two random neighbours: a random tree shape
            k = int(rng.integers(0, len(frontier) - 1))
            left[t, nxt], right[t, nxt] = frontier[k], frontier[k + 1]
            frontier[k:k + 2] = [nxt]
            nxt += 1
        sizes[t] = nxt
    return words, left, right, sizes


def tree_params(seed=0):
    k1, k2 = jax.random.split(jax.random.key(seed))
    embed = jax.random.normal(k1, (VOCAB, HIDDEN)) * 0.5
    w = jax.random.normal(k2, (HIDDEN, 2 * HIDDEN)) / np.sqrt(2 * HIDDEN)
    return embed, w, jnp.zeros(HIDDEN)


WORKLOADS = ("collatz", "tree_rnn", "tree_rnn_select", "tree_rnn_own_size")


# -- timing ------------------------------------------------------------------------------


def _best(fn, repeat):
    """Best wall time of ``fn()`` (which blocks on its result) over ``repeat`` runs."""
    fn()  # compile and warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _three_ways(per_example_fn, batched_fn, lax_fn, examples, batch, repeat):
    """Times, after checking that the three agree on every example."""
    single = jax.jit(per_example_fn)
    batched = jax.jit(jax.vmap(batched_fn))
    by_hand = jax.jit(jax.vmap(lax_fn))
    expected = np.stack([np.asarray(single(*ex)) for ex in examples])
    np.testing.assert_allclose(np.asarray(batched(*batch)), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(by_hand(*batch)), expected, rtol=1e-5, atol=1e-5)

    def loop():
        jax.block_until_ready([single(*ex) for ex in examples])

    return {
        "per_example_s": _best(loop, max(1, repeat // 5)),
        "autograph_vmap_s": _best(lambda: jax.block_until_ready(batched(*batch)), repeat),
        "lax_vmap_s": _best(lambda: jax.block_until_ready(by_hand(*batch)), repeat),
    }


def run(count=1024, max_leaves=16, repeat=20):
    """The figures: seconds per batch for each way, and the speedups of one vmapped
    call over the Python loop of per-example calls."""
    figures = {"devices": str(jax.devices()[0].platform), "count": count}

    starts = jnp.arange(1, count + 1, dtype=jnp.int32)
    converted = autograph.convert(collatz)
    figures["collatz"] = _three_ways(
        converted, converted, collatz_lax, [(n,) for n in starts], (starts,), repeat)

    params = tree_params()
    words, left, right, sizes = (jnp.asarray(a) for a in random_trees(count, max_leaves))
    examples = [(words[t], left[t], right[t], sizes[t]) for t in range(count)]
    for name, fn, by_hand in (("tree_rnn", tree_rnn, tree_rnn_lax),
                              ("tree_rnn_select", tree_rnn_select, tree_rnn_select_lax),
                              ("tree_rnn_own_size", tree_rnn_own_size,
                               tree_rnn_own_size_lax)):
        converted = autograph.convert(fn)
        figures[name] = _three_ways(
            lambda *ex, f=converted: f(params, *ex),
            lambda *ex, f=converted: f(params, *ex),
            lambda *ex, f=by_hand: f(params, *ex),
            examples, (words, left, right, sizes), repeat)

    for name in WORKLOADS:
        t = figures[name]
        t["speedup_autograph_vmap"] = t["per_example_s"] / t["autograph_vmap_s"]
        t["speedup_lax_vmap"] = t["per_example_s"] / t["lax_vmap_s"]
        t["autograph_over_lax"] = t["autograph_vmap_s"] / t["lax_vmap_s"]
    return figures


def main():
    figures = run()
    print(f"dynamic batching, {figures['count']} examples on {figures['devices']}")
    print(f"{'workload':<18} {'per-example loop':>17} {'autograph vmap':>15} "
          f"{'lax vmap':>10} {'speedup':>8} {'lax speedup':>12} {'ag/lax':>7}")
    for name in WORKLOADS:
        t = figures[name]
        print(f"{name:<18} {t['per_example_s'] * 1e3:>14.2f} ms "
              f"{t['autograph_vmap_s'] * 1e3:>12.3f} ms {t['lax_vmap_s'] * 1e3:>7.3f} ms "
              f"{t['speedup_autograph_vmap']:>7.0f}x "
              f"{t['speedup_lax_vmap']:>11.0f}x {t['autograph_over_lax']:>7.2f}")
    return figures


if __name__ == "__main__":
    main()
