# %% [md]
# # Dynamic batching: per-example control flow under `vmap`
#
# Some computations have a different shape for every example: a loop that runs a
# different number of times, a tree with a different structure. Written as ordinary Python
# per example, they are easy to read but slow to run one by one. `jax.vmap` over a converted
# function runs the whole batch in one compiled call, and every example still takes its own
# branches and its own number of iterations (under `vmap`, a `while` runs until all examples
# are done, and each example's state stops changing once its own condition is false).
# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import jax
import jax.numpy as jnp

import autograph


def best_time(fn, repeat=5):
    """Best wall time of fn() over a few runs, after one warm-up (compilation) run."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
# %% [md]
# ## Collatz over 1024 starting numbers
#
# Each starting number takes its own number of steps (from 0 up to 178 below 1025).
# %%
@autograph.convert
def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


starts = jnp.arange(1, 1025)
one = jax.jit(collatz)
batched = jax.jit(jax.vmap(collatz))
steps = batched(starts)
assert [collatz(n) for n in range(1, 40)] == [int(s) for s in steps[:39]]  # Python run agrees
print("steps for 1..12:", steps[:12])
print("most steps:", int(steps.max()), "starting at", int(jnp.argmax(steps)) + 1)

collatz_times = {
    "1024 calls, one per start": best_time(lambda: jax.block_until_ready([one(n) for n in starts]), 2),
    "one vmapped call": best_time(lambda: batched(starts).block_until_ready()),
}
for name, t in collatz_times.items():
    print(f"{name:28s} {t * 1e3:8.2f} ms")
# %% [md]
# ## A batch of differently shaped trees
#
# A TreeRNN: leaves embed a word, inner nodes combine their two children with a small dense
# layer. A tree is encoded as arrays, nodes in topological order (children before parents,
# the root last): `words[i]`, `left[i]`, `right[i]` (`left[i] < 0` marks a leaf), padded to a
# common length, plus its number of nodes `size`. The per-tree function is a plain loop
# over nodes with an `if` for leaf vs inner node.
# %%
HIDDEN, VOCAB = 16, 50


def random_trees(count, max_leaves, seed=0):
    """count random binary trees with 1..max_leaves leaves, as padded arrays."""
    rng = np.random.default_rng(seed)
    max_nodes = 2 * max_leaves - 1
    words = np.zeros((count, max_nodes), np.int32)
    left = np.full((count, max_nodes), -1, np.int32)
    right = np.full((count, max_nodes), -1, np.int32)
    sizes = np.zeros(count, np.int32)
    for t in range(count):
        leaves = int(rng.integers(1, max_leaves + 1))
        words[t, :leaves] = rng.integers(0, VOCAB, leaves)
        frontier, nxt = list(range(leaves)), leaves  # subtrees not yet joined
        while len(frontier) > 1:  # join two random neighbours: a random shape
            k = int(rng.integers(0, len(frontier) - 1))
            left[t, nxt], right[t, nxt] = frontier[k], frontier[k + 1]
            frontier[k:k + 2] = [nxt]
            nxt += 1
        sizes[t] = nxt
    return words, left, right, sizes


@autograph.convert
def tree_rnn(params, words, left, right, size):
    embed, w, b = params
    states = jnp.zeros((words.shape[0], HIDDEN))
    for i in range(words.shape[0]):
        leaf = embed[words[i]]
        inner = jnp.tanh(w @ jnp.concatenate([states[left[i]], states[right[i]]]) + b)
        if left[i] < 0:
            h = leaf
        else:
            h = inner
        states[i] = h
    return states[size - 1]


k1, k2 = jax.random.split(jax.random.key(0))
params = (jax.random.normal(k1, (VOCAB, HIDDEN)),
          jax.random.normal(k2, (HIDDEN, 2 * HIDDEN)) / np.sqrt(2 * HIDDEN),
          jnp.zeros(HIDDEN))
count = 256
words, left, right, sizes = (jnp.asarray(a) for a in random_trees(count, max_leaves=8))
print("tree sizes (nodes) in the batch:", np.bincount(np.asarray(sizes))[1::2], "(1, 3, 5, ... nodes)")
# %% [md]
# The `if` above only picks between two values computed before it. Under `vmap`, a `cond`
# whose branches do the work becomes a `select` that runs both branches anyway, and JAX
# batches what the branches close over (here the weights) for every example; computing both
# candidates up front avoids that cost. The per-tree results match the one-at-a-time run:
# %%
one_tree = jax.jit(lambda *tree: tree_rnn(params, *tree))
tree_batch = jax.jit(jax.vmap(lambda *tree: tree_rnn(params, *tree)))
roots = tree_batch(words, left, right, sizes)
for t in range(0, count, 37):
    np.testing.assert_allclose(roots[t], one_tree(words[t], left[t], right[t], sizes[t]), atol=1e-5)
print("root states:", roots.shape)

trees = [(words[t], left[t], right[t], sizes[t]) for t in range(count)]
tree_times = {
    f"{count} calls, one per tree": best_time(lambda: jax.block_until_ready([one_tree(*tr) for tr in trees]), 2),
    "one vmapped call": best_time(lambda: tree_batch(words, left, right, sizes).block_until_ready()),
}
for name, t in tree_times.items():
    print(f"{name:28s} {t * 1e3:8.2f} ms")
# %% [md]
# ## Per-example calls vs one batched call
# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
for ax, (title, times) in zip(axes, [("collatz, 1024 starts", collatz_times),
                                     (f"TreeRNN, {count} trees", tree_times)]):
    names, values = list(times), [v * 1e3 for v in times.values()]
    bars = ax.bar(names, values, color=["C7", "C2"])
    ax.bar_label(bars, fmt="%.1f ms")
    ax.set_yscale("log")
    ax.set_ylabel("time per batch (ms, log scale)")
    ax.set_title(f"{title}: {values[0] / values[1]:.0f}x faster batched")
plt.tight_layout()
plt.show()
# %% [md]
# The numbers depend on the machine; on a CPU the batched call wins by one to two orders of
# magnitude, mostly because a Python loop of calls pays the dispatch cost for each example.
# `benchmarks/dynamic_batching.py` measures the same workloads at full size, against
# hand-written `lax` too.
