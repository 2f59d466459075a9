"""autograph.fold on a binary TreeLSTM: against one jitted call per node, padding under
vmap, and a hand-written depth-batched oracle.

Workload (issue 29): batches of random binary trees of 16-128 leaves, vocabulary
1,000, float32, state width H. Rows, timed interleaved in one run with host time
included (``harness.interleaved_medians``); every row cycles through 8 different
random batches, one per call, as a training loop does (a layout fits some batches
by its table lookup and list-schedules the others):

- ``fold``: ``jit(batched)(p, batched.plan(trees))``: each call merges the trees'
  cached recordings and schedules them (Python) and runs the compiled executor;
  ``fold_recording``: the same with every tree recorded afresh; ``fold_planned``:
  the same plans made before the timing, no planning in the call (it was ~10%
  slower than ``fold_fwd`` in three runs when these plans were made before the
  size classes, on the larger first layouts: likely the cause; not measured since);
- ``per_node``: the plain recursion calling ``jit(leaf)`` / ``jit(cell)`` per node;
- ``padded``: every tree padded to the largest possible tree (2 x 128 - 1 node
  slots, topological order) and run under ``vmap``, one slot per step of a
  ``fori_loop``, leaf and cell both computed and selected;
- ``oracle``: written by hand for this batch: all leaves at once, then one
  gather / cell / scatter-add per level at its exact size, unrolled under ``jit``
  (compiled per batch, compile excluded: one program per batch of the cycle).

Before the warm-up, the rows' batches are planned until the size chooser has made its
size-classed layouts (``_settle``: a training loop's steady state), and nothing is
planned between the warm-up and the timing, so no timed call compiles; the compiles
while timed are counted (``fold_compiles_while_timed``, 0).

Each forward and forward+backward (``grad`` of the sum of squares of the roots'
h). Also: XLA's temp memory of the gradient (fold vs oracle), the gradient /
forward ratio, one chain-shaped tree in a batch vs a random batch, compiles over
random batches, and recording cost per node against the bare recursion.

    python -m benchmarks.fold              # small profile (a few minutes, 2 cores)
    python -m benchmarks.fold --full       # the issue's sizes: 64 trees, H = 128 and 512
    python -m benchmarks.fold --widths 128,512 --batches 20   # small timing, both widths
    python -m benchmarks.fold --widths 512 --rows fold_fwd,oracle_fwd   # some rows only
    python -m benchmarks.fold --ab CAPACITY_HEADROOM=1.03   # schedule constants A/B, one run
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph

from .harness import TimingPlan, interleaved_medians

VOCAB = 1000
LOW, HIGH = 16, 128
PROFILES = {
    # name: trees per batch, widths, timing plan, random batches for the compile count
    "tiny": dict(batch=8, widths=(32,), plan=TimingPlan(rounds=3, sample_s=0.002,
                                                        budget_s=0.3), batches=20),
    "small": dict(batch=64, widths=(128,), plan=TimingPlan(rounds=5, sample_s=0.02,
                                                           budget_s=4.0), batches=50),
    "full": dict(batch=64, widths=(128, 512), plan=TimingPlan(rounds=7, sample_s=0.05,
                                                              budget_s=20.0), batches=1000),
}


# -- the model: plain recursive Python ------------------------------------------------

class Node:
    def __init__(self, word=None, left=None, right=None):
        self.word, self.left, self.right = word, left, right

    @property
    def is_leaf(self):
        return self.left is None


def random_tree(rng, leaves):
    if leaves == 1:
        return Node(word=rng.randrange(VOCAB))
    k = rng.randrange(1, leaves)
    return Node(left=random_tree(rng, k), right=random_tree(rng, leaves - k))


def chain_tree(leaves, rng):
    tree = Node(word=rng.randrange(VOCAB))
    for _ in range(leaves - 1):
        tree = Node(left=tree, right=Node(word=rng.randrange(VOCAB)))
    return tree


def random_batch(rng, n):
    return [random_tree(rng, rng.randrange(LOW, HIGH + 1)) for _ in range(n)]


def init(key, hidden):
    k1, k2 = jax.random.split(key)
    return {"embed": jax.random.normal(k1, (VOCAB, hidden)) * 0.5,
            "w": jax.random.normal(k2, (2 * hidden, 5 * hidden)) / np.sqrt(2.0 * hidden),
            "b": jnp.zeros(5 * hidden)}


def leaf(p, word):
    x = p["embed"][word]
    return jnp.tanh(x), x


def cell(p, left, right):
    (hl, cl), (hr, cr) = left, right
    z = jnp.concatenate([hl, hr], axis=-1) @ p["w"] + p["b"]
    i, fl, fr, o, u = jnp.split(z, 5, axis=-1)
    c = (jax.nn.sigmoid(i) * jnp.tanh(u) + jax.nn.sigmoid(fl) * cl
         + jax.nn.sigmoid(fr) * cr)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def encode(p, node):
    if node.is_leaf:
        return leaf(p, node.word)
    return cell(p, encode(p, node.left), encode(p, node.right))


# -- baseline: one jitted call per node -----------------------------------------------

leaf_jit, cell_jit = jax.jit(leaf), jax.jit(cell)


def encode_per_node(p, node):
    if node.is_leaf:
        return leaf_jit(p, node.word)
    return cell_jit(p, encode_per_node(p, node.left), encode_per_node(p, node.right))


def per_node_roots(p, trees):
    return jnp.stack([encode_per_node(p, t)[0] for t in trees])


# -- baseline: padded to the largest tree, under vmap ---------------------------------

SLOTS = 2 * HIGH - 1


def padded_arrays(trees):
    words = np.zeros((len(trees), SLOTS), np.int32)
    left = np.zeros((len(trees), SLOTS), np.int32)
    right = np.zeros((len(trees), SLOTS), np.int32)
    is_leaf = np.ones((len(trees), SLOTS), bool)
    root = np.zeros(len(trees), np.int32)
    for b, tree in enumerate(trees):
        order = []

        def visit(node, order=order):
            if not node.is_leaf:
                node.slot_l, node.slot_r = visit(node.left), visit(node.right)
            order.append(node)
            return len(order) - 1

        root[b] = visit(tree)
        for i, node in enumerate(order):
            if node.is_leaf:
                words[b, i] = node.word
            else:
                is_leaf[b, i] = False
                left[b, i], right[b, i] = node.slot_l, node.slot_r
    return words, left, right, is_leaf, root


def padded_tree(p, words, left, right, is_leaf, root):
    hidden = p["b"].shape[0] // 5

    def step(i, state):
        hs, cs = state
        h_leaf, c_leaf = leaf(p, words[i])
        h_in, c_in = cell(p, (hs[left[i]], cs[left[i]]), (hs[right[i]], cs[right[i]]))
        h = jnp.where(is_leaf[i], h_leaf, h_in)
        c = jnp.where(is_leaf[i], c_leaf, c_in)
        return hs.at[i].set(h), cs.at[i].set(c)

    zeros = jnp.zeros((SLOTS, hidden))
    hs, _ = lax.fori_loop(0, SLOTS, step, (zeros, zeros))
    return hs[root]


padded_roots = jax.vmap(padded_tree, in_axes=(None, 0, 0, 0, 0, 0))


# -- the oracle: depth-batched by hand --------------------------------------------------

def oracle_arrays(trees):
    """Rows: all leaves first, then each level's nodes contiguously."""
    leaves, levels = [], {}

    def height(node):
        if node.is_leaf:
            node.row = len(leaves)
            leaves.append(node.word)
            return 0
        node.height = 1 + max(height(node.left), height(node.right))
        levels.setdefault(node.height, []).append(node)
        return node.height

    for tree in trees:
        height(tree)
    row = len(leaves)
    level_arrays = []
    for h in sorted(levels):
        for node in levels[h]:
            node.row = row
            row += 1
        level_arrays.append((np.asarray([n.left.row for n in levels[h]], np.int32),
                             np.asarray([n.right.row for n in levels[h]], np.int32)))
    return (np.asarray(leaves, np.int32), tuple(level_arrays),
            np.asarray([t.row for t in trees], np.int32), row)


def make_oracle(arrays):
    words, levels, roots, rows = arrays

    def roots_h(p):
        h0, c0 = jax.vmap(leaf, in_axes=(None, 0))(p, words)
        hidden = h0.shape[1]
        hs = jnp.zeros((rows, hidden)).at[:len(words)].add(h0)
        cs = jnp.zeros((rows, hidden)).at[:len(words)].add(c0)
        start = len(words)
        batched_cell = jax.vmap(cell, in_axes=(None, 0, 0))
        for left, right in levels:
            h, c = batched_cell(p, (hs[left], cs[left]), (hs[right], cs[right]))
            hs = hs.at[start:start + len(left)].add(h)
            cs = cs.at[start:start + len(left)].add(c)
            start += len(left)
        return hs[roots]

    return roots_h


# -- measurements -----------------------------------------------------------------------

def _loss(roots):
    return jnp.sum(roots ** 2)


def _rotating(fn, items):
    """``fn`` called on the next of ``items`` at each call (round-robin)."""
    cycle = itertools.cycle(items)
    return lambda: fn(next(cycle))


def measure_width(hidden, batch, plan, seed=0, rows=None, varied=8, warm=0):
    """Every row at one width, interleaved; ratios against fold. Each row cycles
    through ``varied`` different random batches (as a user's training loop does:
    the fold rows plan every call, the oracle has one compiled program per batch),
    the chain rows through the same batches with one tree replaced by a chain.
    ``warm``: other random batches planned first (a training loop's earlier
    steps: the layouts the timed batches get depend on the batches seen before,
    ``SizeChooser``'s size classes come after ``CLASS_AFTER`` of them)."""
    rng = random.Random(seed)
    p = init(jax.random.PRNGKey(seed), hidden)
    batches = [random_batch(rng, batch) for _ in range(varied)]
    chain = chain_tree(HIGH, rng)
    with_chain = [b[:-1] + [chain] for b in batches]
    trees = batches[0]
    batched = autograph.fold(encode)
    batched(p, trees[:1])
    warm_rng = random.Random(seed + 1000)
    for _ in range(warm):
        batched.plan(random_batch(warm_rng, batch))

    fold_fwd = jax.jit(lambda p, plan: batched(p, plan)[0])
    fold_grad = jax.jit(jax.grad(lambda p, plan: _loss(batched(p, plan)[0])))
    # the layouts first, then the compiles: every plan before the timing is made here
    # (the random batches: with the chain batches in the classes' history, half of it,
    # every class layout had the chain's 127 steps, and a random batch ran them: 8x)
    settled = _settle(batched, batches, batched.plan)
    fast = _fast_path_share(batched, batches + with_chain)
    planned = [batched.plan(b) for b in batches]
    padded = [padded_arrays(b) for b in batches]
    pad_fwd = jax.jit(padded_roots)
    pad_grad = jax.jit(jax.grad(lambda p, *a: _loss(padded_roots(p, *a))))
    oracles = [make_oracle(oracle_arrays(b)) for b in batches]
    oracle_fwds = [jax.jit(o) for o in oracles]
    oracle_grads = [jax.jit(jax.grad(lambda p, o=o: _loss(o(p)))) for o in oracles]

    def per_node_grad(trees):
        return jax.grad(lambda p: _loss(per_node_roots(p, trees)))(p)

    def fresh_plan(tree_list):
        batched._recordings.clear()
        return batched.plan(tree_list)

    fns = {
        "fold_fwd": _rotating(lambda b: fold_fwd(p, batched.plan(b)), batches),
        "fold_grad": _rotating(lambda b: fold_grad(p, batched.plan(b)), batches),
        "fold_recording_fwd": _rotating(lambda b: fold_fwd(p, fresh_plan(b)), batches),
        # the same plans made before the timing (see the module's docstring)
        "fold_planned_fwd": _rotating(lambda pl: fold_fwd(p, pl), planned),
        "fold_chain_grad": _rotating(lambda b: fold_grad(p, batched.plan(b)), with_chain),
        "fold_chain_fwd": _rotating(lambda b: fold_fwd(p, batched.plan(b)), with_chain),
        "oracle_fwd": _rotating(lambda o: o(p), oracle_fwds),
        "oracle_grad": _rotating(lambda o: o(p), oracle_grads),
        "padded_fwd": _rotating(lambda a: pad_fwd(p, *a), padded),
        "padded_grad": _rotating(lambda a: pad_grad(p, *a), padded),
        "per_node_fwd": _rotating(lambda b: per_node_roots(p, b), batches),
        "per_node_grad": _rotating(per_node_grad, batches),
    }
    if rows:
        fns = {k: v for k, v in fns.items() if k in rows}
    # correctness first: the roots and gradients of every row against the recursion
    expected = per_node_roots(p, trees)
    plan_ = batched.plan(trees)
    checks = {
        "fold_roots_rel_err": _rel(fold_fwd(p, plan_), expected),
        "padded_roots_rel_err": _rel(pad_fwd(p, *padded[0]), expected),
        "oracle_roots_rel_err": _rel(oracle_fwds[0](p), expected),
    }
    for name, fn in fns.items():       # compile (and warm) every batch outside the timings
        for _ in range(1 if name.startswith("per_node") else varied):
            jax.block_until_ready(fn())
    if "per_node_grad" in fns:
        checks["fold_grad_rel_err"] = _rel(fold_grad(p, plan_), per_node_grad(trees))
    compiled = {"fold_fwd": fold_fwd._cache_size(), "fold_grad": fold_grad._cache_size()}
    timings = interleaved_medians(fns, plan)
    # a compile in a timed call is a bug of this benchmark's warm-up, not a figure
    checks["fold_compiles_while_timed"] = (fold_fwd._cache_size() + fold_grad._cache_size()
                                           - sum(compiled.values()))
    med = {k: v["median_s"] for k, v in timings.items()}
    memory = {
        "fold_grad_temp_bytes": _temp_bytes(fold_grad, p, plan_),
        "oracle_grad_temp_bytes": _temp_bytes(oracle_grads[0], p),
        "padded_grad_temp_bytes": _temp_bytes(pad_grad, p, *padded[0]),
    }
    nodes = sum(len(g[0]) for t in trees for g in batched._record(
        batched._registry(None), t).groups.values())
    return {"hidden": hidden, "batch": batch, "nodes": nodes, "median_s": med,
            "ratios": _ratios(med, memory), "memory": memory, "checks": checks,
            "plan": repr(plan_), "varied": varied, "warm": warm, "fast_path": fast,
            "settled_after": settled,
            "computed_rows": _computed_rows(batched, batches)}


def _computed_rows(batched, batch_list):
    """The steps' rows over the real inner nodes, averaged over ``batch_list`` (each
    planned as the timed rows plan it): the padding the executor computes."""
    def inner(node):
        return 0 if node.is_leaf else 1 + inner(node.left) + inner(node.right)

    ratios = [sum(batched.plan(trees).layout.steps) / sum(inner(t) for t in trees)
              for trees in batch_list]
    return float(np.mean(ratios))


def _settle(batched, batch_list, plan):
    """Plans ``batch_list`` round-robin (``plan(trees)``) until ``batched``'s size
    chooser has issued the size-classed layouts of their layout shapes (after
    ``schedule.CLASS_AFTER`` batches of a shape: a training loop's steady state), so
    that the timed batches get the layouts they keep and the warm-up compiles all of
    them. Before, the classes came during the timing (at its first call when the
    rows had planned 32 batches before it: a compile taken as the only sample).
    Returns the plans made."""
    from autograph.fold import schedule as planning

    history, shapes, made = batched._sizes.history, set(), 0
    while made < len(batch_list) or any(history.get(k, ()) is not None for k in shapes):
        if made > 4 * planning.CLASS_AFTER + len(batch_list):
            raise RuntimeError("benchmarks.fold: the size chooser made no size classes")
        shapes.add(plan(batch_list[made % len(batch_list)]).layout.shape_key())
        made += 1
    return made


def _fast_path_share(batched, batch_list):
    """How many of ``batch_list`` are placed by a layout's table lookup (the fast
    path), not by list scheduling; and the plan's median milliseconds."""
    from autograph.fold import schedule as planning

    looked_up = []
    original = planning.place_by_levels

    def counted(*args):
        placement = original(*args)
        looked_up.append(placement is not None)
        return placement

    planning.place_by_levels = counted
    try:
        fast, times = 0, []
        for trees in batch_list:
            looked_up.clear()
            start = time.perf_counter()
            batched.plan(trees)
            times.append(time.perf_counter() - start)
            fast += any(looked_up)
    finally:
        planning.place_by_levels = original
    return {"batches": len(batch_list), "fast": fast,
            "plan_ms": float(np.median(times) * 1e3)}


def _ratios(med, memory):
    r = {}

    def ratio(name, a, b):
        if a in med and b in med:
            r[name] = med[a] / med[b]

    ratio("fwd_speedup_vs_per_node", "per_node_fwd", "fold_fwd")
    ratio("grad_speedup_vs_per_node", "per_node_grad", "fold_grad")
    ratio("fwd_speedup_vs_padded", "padded_fwd", "fold_fwd")
    ratio("grad_speedup_vs_padded", "padded_grad", "fold_grad")
    ratio("fold_speed_vs_oracle_fwd", "oracle_fwd", "fold_fwd")
    ratio("fold_speed_vs_oracle_grad", "oracle_grad", "fold_grad")
    ratio("planned_speed_vs_oracle_fwd", "oracle_fwd", "fold_planned_fwd")
    ratio("grad_over_fwd", "fold_grad", "fold_fwd")
    ratio("chain_batch_over_random_fwd", "fold_chain_fwd", "fold_fwd")
    ratio("chain_batch_over_random_grad", "fold_chain_grad", "fold_grad")
    ratio("recording_fwd_over_cached_fwd", "fold_recording_fwd", "fold_fwd")
    if memory["oracle_grad_temp_bytes"]:
        r["grad_memory_vs_oracle"] = (memory["fold_grad_temp_bytes"]
                                      / memory["oracle_grad_temp_bytes"])
    return r


def _rel(actual, expected):
    """The largest error over the leaves, each relative to its leaf's largest value."""
    worst = 0.0
    for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected),
                    strict=True):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        worst = max(worst, float(np.abs(a - e).max() / max(np.abs(e).max(), 1e-30)))
    return worst


def _temp_bytes(jitted, *args):
    try:
        return int(jitted.lower(*args).compile().memory_analysis().temp_size_in_bytes)
    except Exception:
        return None


def measure_compiles(batches, batch, hidden=16, seed=1):
    """Compiles of the user's jitted loss and its gradient over random batches."""
    rng = random.Random(seed)
    p = init(jax.random.PRNGKey(seed), hidden)
    batched = autograph.fold(encode)
    batched(p, [Node(word=0)])
    fwd = jax.jit(lambda p, plan: _loss(batched(p, plan)[0]))
    grad = jax.jit(jax.grad(lambda p, plan: _loss(batched(p, plan)[0])))
    counts = {}
    for i in range(1, batches + 1):
        plan = batched.plan(random_batch(rng, batch))
        fwd(p, plan)
        grad(p, plan)
        if i in (1, 20, batches):
            counts[i] = {"fwd": fwd._cache_size(), "grad": grad._cache_size()}
    return counts


def measure_recording(batch, seed=2):
    """Microseconds per node: the bare recursion, recording (fresh), and the
    recursion converted by autograph.convert run in Python mode."""
    rng = random.Random(seed)
    trees = random_batch(rng, batch)
    p = init(jax.random.PRNGKey(0), 8)
    batched = autograph.fold(encode)
    batched(p, trees[:1])

    def bare(node):
        if node.is_leaf:
            return node.word
        return bare(node.left) + bare(node.right)

    nodes = 0

    def count(node):
        return 1 if node.is_leaf else 1 + count(node.left) + count(node.right)

    nodes = sum(count(t) for t in trees)
    converted = autograph.convert(bare)

    def timed(fn, repeat=3):
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        return best / nodes * 1e6

    def record():
        batched._recordings.clear()
        batched.plan(trees)

    out = {"nodes": nodes,
           "bare_us_per_node": timed(lambda: [bare(t) for t in trees]),
           "converted_python_us_per_node": timed(lambda: [converted(t) for t in trees]),
           "recording_us_per_node": timed(record)}
    out["recording_over_bare"] = out["recording_us_per_node"] / out["bare_us_per_node"]
    return out


def measure_recording_paths(batch, seed=3):
    """Microseconds per node of recording alone (no planning), interleaved: the bare
    recursion, the general recorder and the fast path (``recording_fast.record``),
    each tree recorded afresh, and the fast path's batch (``record_batch``). The
    harness pauses the garbage collector while timing, as the fast path does itself,
    so the general recorder's collections (part of its cost in use) are not counted
    here."""
    from autograph.fold import recording_fast
    from autograph.fold.recording import Recorder

    trees = random_batch(random.Random(seed), batch)
    batched = autograph.fold(encode)
    batched(init(jax.random.PRNGKey(0), 8), trees[:1])
    registry = batched._last_registry

    def bare(node):
        return node.word if node.is_leaf else bare(node.left) + bare(node.right)

    def count(node):
        return 1 if node.is_leaf else 1 + count(node.left) + count(node.right)

    nodes = sum(count(t) for t in trees)
    med = {name: m["median_s"] for name, m in interleaved_medians({
        "bare": lambda: [bare(t) for t in trees],
        "general": lambda: [Recorder(registry, encode).record(t) for t in trees],
        "fast": lambda: [recording_fast.record(registry, encode, t) for t in trees],
        "batch": lambda: recording_fast.record_batch(registry, encode, trees),
        "unspecialised": lambda: [recording_fast.record(registry, encode, t, specialise=False)
                                  for t in trees],
    }, TimingPlan(rounds=7, sample_s=0.05, budget_s=3.0)).items()}
    out = {f"{name}_us_per_node": s / nodes * 1e6 for name, s in med.items()}
    out.update(nodes=nodes, fast_over_bare=med["fast"] / med["bare"],
               general_over_fast=med["general"] / med["fast"],
               unspecialised_over_fast=med["unspecialised"] / med["fast"],
               fast_over_batch=med["fast"] / med["batch"])
    return out


def measure_schedule_ab(hidden, batch, plan, settings, seed=0, varied=8, warm=0):
    """Milliseconds of ``fold`` planned with ``autograph.fold.schedule``'s constants
    as they are (``fold_A``) and with ``settings`` (name -> value, ``fold_B``), and
    of the oracle, interleaved in one run: two runs on a shared machine are not
    comparable, one run's rows are. Each fold row gets its own folded function, its
    plans made under its constants, and cycles through the same ``varied`` random batches, after the
    same ``warm`` others planned."""
    from autograph.fold import schedule as planning

    rng = random.Random(seed)
    p = init(jax.random.PRNGKey(seed), hidden)
    batches = [random_batch(rng, batch) for _ in range(varied)]
    unknown = [name for name in settings if not hasattr(planning, name)]
    if unknown:
        raise ValueError(f"not constants of autograph.fold.schedule: {unknown}")
    default = {name: getattr(planning, name) for name in settings}
    fns, plans, rows, jitted = {}, {}, {}, {}
    try:
        for row, values in (("fold_A", default), ("fold_B", settings)):
            for name, value in values.items():
                setattr(planning, name, value)
            batched = autograph.fold(encode)
            batched(p, batches[0][:1])
            warm_rng = random.Random(seed + 1000)
            for _ in range(warm):
                batched.plan(random_batch(warm_rng, batch))
            # (not settled: most constants size the first layouts, not the classes)
            for trees in batches:
                batched.plan(trees)
            rows[row] = _computed_rows(batched, batches)
            fwd = jax.jit(lambda p, plan, batched=batched: batched(p, plan)[0])
            jitted[row] = [fwd]
            fns[row] = _rotating(
                lambda b, batched=batched, fwd=fwd, values=dict(values): fwd(
                    p, _planned_with(planning, values, batched, b)), batches)
            plans[row] = repr(batched.plan(batches[0]))
    finally:
        for name, value in default.items():
            setattr(planning, name, value)
    jitted["oracle_fwd"] = [jax.jit(make_oracle(oracle_arrays(b))) for b in batches]
    fns["oracle_fwd"] = _rotating(lambda o: o(p), jitted["oracle_fwd"])
    for fn in fns.values():
        for _ in range(varied):
            jax.block_until_ready(fn())
    before = _compiles(jitted)
    med = {k: v["median_s"] * 1e3 for k, v in interleaved_medians(fns, plan).items()}
    # as fold_compiles_while_timed: a timed call that compiles makes its row's median a lie
    after = _compiles(jitted)
    return {"hidden": hidden, "settings": settings, "median_ms": med, "plans": plans,
            "computed_rows": rows, "compiles": before,
            "compiles_while_timed": {k: after[k] - before[k] for k in after},
            "oracle_over": {k: med["oracle_fwd"] / v for k, v in med.items()}}


def _compiles(jitted):
    """Compiled programs of each row's jitted functions (row -> list of ``jax.jit``)."""
    return {row: sum(fn._cache_size() for fn in fns) for row, fns in jitted.items()}


def _planned_with(module, values, batched, trees):
    """``batched.plan(trees)`` with ``module``'s constants set to ``values`` (some are
    read at every plan: ``CLASS_AFTER``), then put back."""
    saved = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        return batched.plan(trees)
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def _setting(text):
    name, value = text.split("=", 1)
    return name.strip(), (float(value) if "." in value else int(value))


GOALS = [
    # (ratio key, goal, H, "min"/"max")
    ("fwd_speedup_vs_per_node", 5, 128, "min"), ("fwd_speedup_vs_per_node", 2, 512, "min"),
    ("grad_speedup_vs_per_node", 50, 128, "min"), ("grad_speedup_vs_per_node", 25, 512, "min"),
    ("fwd_speedup_vs_padded", 2.5, None, "min"), ("grad_speedup_vs_padded", 4, None, "min"),
    ("grad_over_fwd", 5, 128, "max"), ("grad_memory_vs_oracle", 1.25, None, "max"),
    ("fold_speed_vs_oracle_fwd", 0.85, None, "min"),
    ("fold_speed_vs_oracle_grad", 0.85, None, "min"),
    ("chain_batch_over_random_grad", 2, None, "max"),
    ("chain_batch_over_random_fwd", 2, None, "max"),
]


def run(profile="small", progress=print, widths=None, batches=None, rows=None, warm=0):
    """All measurements of one profile ("tiny", "small", "full") as a dict;
    ``widths`` and ``batches`` override the profile's; ``rows``: the timed rows
    (names, e.g. ``("fold_fwd", "oracle_fwd")``), all if None."""
    config = dict(PROFILES[profile])
    if widths:
        config["widths"] = tuple(widths)
    if batches:
        config["batches"] = batches
    out = {"profile": profile, "device": jax.devices()[0].device_kind, "widths": []}
    for hidden in config["widths"]:
        progress(f"fold: H = {hidden}, {config['batch']} trees of {LOW}-{HIGH} leaves")
        out["widths"].append(measure_width(hidden, config["batch"], config["plan"],
                                           rows=rows, warm=warm))
    progress(f"fold: compiles over {config['batches']} random batches")
    out["compiles"] = measure_compiles(config["batches"], config["batch"])
    out["recording"] = measure_recording(config["batch"])
    out["recording_paths"] = measure_recording_paths(config["batch"])
    return out


def table(result) -> str:
    lines = [f"autograph.fold benchmark ({result['profile']} profile, {result['device']})"]
    for w in result["widths"]:
        lines.append(f"\nH = {w['hidden']}, {w['batch']} trees, {w['nodes']} nodes; {w['plan']}")
        fp = w["fast_path"]
        lines.append(f"  each row cycles through {w['varied']} random batches (after "
                     f"{w['warm']} others planned); planned by "
                     f"lookup: {fp['fast']} of {fp['batches']} (with the chain batches), "
                     f"plan {fp['plan_ms']:.2f} ms; computed rows / real "
                     f"{w['computed_rows']:.3f}; layouts settled after "
                     f"{w['settled_after']} plans")
        for name, s in w["median_s"].items():
            lines.append(f"  {name:<22} {s * 1e3:10.2f} ms")
        for name, value in w["ratios"].items():
            goal = [g for g in GOALS if g[0] == name and g[2] in (None, w["hidden"])]
            mark = ""
            if goal:
                _, target, _, how = goal[0]
                met = value >= target if how == "min" else value <= target
                mark = f"   goal {'>=' if how == 'min' else '<='} {target}: " + (
                    "met" if met else "NOT met")
            lines.append(f"  {name:<34} {value:8.2f}{mark}")
        for name, value in {**w["memory"], **w["checks"]}.items():
            lines.append(f"  {name:<34} {value}")
    lines.append(f"\ncompiles (jitted loss / its gradient): {result['compiles']}")
    rec = result["recording"]
    lines.append(f"recording ({rec['nodes']} nodes, us per node): bare recursion "
                 f"{rec['bare_us_per_node']:.2f}, converted (Python mode) "
                 f"{rec['converted_python_us_per_node']:.2f}, recording "
                 f"{rec['recording_us_per_node']:.2f} ({rec['recording_over_bare']:.0f}x bare)")
    paths = result["recording_paths"]
    lines.append(f"recording alone ({paths['nodes']} nodes, us per node, interleaved): bare "
                 f"{paths['bare_us_per_node']:.2f}, general {paths['general_us_per_node']:.2f}, "
                 f"fast {paths['fast_us_per_node']:.2f} ({paths['fast_over_bare']:.0f}x bare, "
                 f"general/fast {paths['general_over_fast']:.2f}; call sites unspecialised "
                 f"{paths['unspecialised_us_per_node']:.2f}; one recorder per batch "
                 f"{paths['batch_us_per_node']:.2f})")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the issue's sizes")
    parser.add_argument("--tiny", action="store_true", help="a smoke run")
    parser.add_argument("--widths", help="state widths H, comma-separated (e.g. 128,512)")
    parser.add_argument("--batches", type=int, help="random batches for the compile count")
    parser.add_argument("--ab", help="schedule constants to compare with the current ones, "
                        "interleaved (fold forward and the oracle only), e.g. "
                        "CAPACITY_HEADROOM=1.03,SPARE_ROWS=32")
    parser.add_argument("--warm", type=int, default=0,
                        help="random batches planned before the timed ones (a training "
                        "loop's earlier steps; size-classed layouts come after 32)")
    parser.add_argument("--rows", help="timed rows only, comma-separated (e.g. "
                        "fold_fwd,fold_grad,oracle_fwd,oracle_grad)")
    args = parser.parse_args(argv)
    profile = "full" if args.full else "tiny" if args.tiny else "small"
    widths = [int(w) for w in args.widths.split(",")] if args.widths else None
    rows = tuple(args.rows.split(",")) if args.rows else None
    if args.ab:
        config = PROFILES[profile]
        settings = dict(_setting(item) for item in args.ab.split(","))
        for hidden in widths or config["widths"]:
            out = measure_schedule_ab(hidden, config["batch"], config["plan"], settings,
                                      warm=args.warm)
            print(f"H = {hidden}, B = {settings}, after {args.warm} batches planned")
            for row, ms in out["median_ms"].items():
                rows_note = (f"   computed rows / real {out['computed_rows'][row]:.3f}"
                             if row in out["computed_rows"] else "")
                print(f"  {row:<12} {ms:8.2f} ms   oracle / row "
                      f"{out['oracle_over'][row]:.3f}{rows_note}")
            print(f"  compiles before the timing {out['compiles']}, while timed "
                  f"{out['compiles_while_timed']}")
        return
    print(table(run(profile, progress=lambda s: print(s, file=sys.stderr), widths=widths,
                    batches=args.batches, rows=rows, warm=args.warm)))


if __name__ == "__main__":
    main()
