# %% [md]
# # `autograph.fold`: batching a recursion over trees
#
# A tree-RNN is naturally a recursive Python function: a leaf embeds its token, an inner
# node combines its children. Run as written, every node is its own small computation,
# dispatched one by one. `autograph.fold` runs the same function over a whole batch of
# differently shaped trees with every node of one kind and one height computed together,
# by one compiled program that serves any batch of shapes (TensorFlow Fold's dynamic
# batching, for plain Python).
#
# Here: a tree-RNN learns the value of small arithmetic expressions.
# %%
import random
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import optax

import autograph

OPS = ["+", "-", "max"]


class Expr:
    """A leaf holds a digit, an inner node an operator and two operands."""

    def __init__(self, digit=None, op=None, left=None, right=None):
        self.digit, self.op, self.left, self.right = digit, op, left, right

    @property
    def is_leaf(self):
        return self.op is None

    def value(self):
        if self.is_leaf:
            return self.digit
        a, b = self.left.value(), self.right.value()
        return {"+": a + b, "-": a - b, "max": max(a, b)}[OPS[self.op]]


def random_expr(rng, leaves):
    if leaves == 1:
        return Expr(digit=rng.randrange(10))
    k = rng.randrange(1, leaves)
    return Expr(op=rng.randrange(len(OPS)), left=random_expr(rng, k),
                right=random_expr(rng, leaves - k))


rng = random.Random(0)
train = [random_expr(rng, rng.randrange(1, 9)) for _ in range(256)]
print(len(train), "expressions, e.g. a value of", train[0].value())
# %% [md]
# ## The model: plain recursive Python
#
# `leaf` and `combine` are functions of arrays; `encode` recurses over the structure.
# The operator of a node selects its weights by indexing the parameters with a
# Python int: fold batches it as per-node data.
# %%
H = 32


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {"digits": jax.random.normal(k1, (10, H)) * 0.5,
            "w": jax.random.normal(k2, (len(OPS), 2 * H, H)) / jnp.sqrt(2.0 * H),
            "b": jnp.zeros((len(OPS), H)),
            "out": jax.random.normal(k3, (H,)) / jnp.sqrt(H)}


def leaf(p, digit):
    return p["digits"][digit]


def combine(p, op, a, b):
    return jnp.tanh(jnp.concatenate([a, b]) @ p["w"][op] + p["b"][op])


def encode(p, node):
    if node.is_leaf:
        return leaf(p, node.digit)
    return combine(p, node.op, encode(p, node.left), encode(p, node.right))


batched = autograph.fold(encode)
params = init(jax.random.PRNGKey(0))
roots = batched(params, train[:4])                          # (4, H), batched
plain = jnp.stack([encode(params, t) for t in train[:4]])    # the same, node by node
print(roots.shape, float(jnp.abs(roots - plain).max()))
# %% [md]
# ## Training
#
# `batched.plan(trees)` is the schedule of a batch: arrays that go through `jax.jit` as
# an ordinary argument. Batches of different shapes reuse a few compiled programs
# (their sizes are rounded up to a geometric grid).
# %%
optimizer = optax.adam(1e-2)


def loss_fn(p, plan, targets):
    prediction = batched(p, plan) @ p["out"]
    return jnp.mean((prediction - targets) ** 2)


@jax.jit
def update(p, state, plan, targets):
    loss, grads = jax.value_and_grad(loss_fn)(p, plan, targets)
    updates, state = optimizer.update(grads, state)
    return optax.apply_updates(p, updates), state, loss


state = optimizer.init(params)
batches = [train[i:i + 64] for i in range(0, len(train), 64)]
plans = [batched.plan(b) for b in batches]
targets = [jnp.array([t.value() for t in b], jnp.float32) / 10 for b in batches]
losses = []
for _ in range(12):
    for plan, target in zip(plans, targets, strict=True):
        params, state, loss = update(params, state, plan, target)
        losses.append(float(loss))
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}; compiled programs: {update._cache_size()}")
# %% [md]
# ## Throughput
#
# Trees per second, forward, for a batch of expressions of 8-32 leaves: `fold` (plan
# and compiled run, host time included) against the same recursion with one jitted
# call per node.
# %%
leaf_jit, combine_jit = jax.jit(leaf), jax.jit(combine)


def encode_per_node(p, node):
    if node.is_leaf:
        return leaf_jit(p, node.digit)
    return combine_jit(p, node.op, encode_per_node(p, node.left),
                       encode_per_node(p, node.right))


def trees_per_second(fn, trees, repeat=3):
    fn(trees)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(fn(trees))
        best = min(best, time.perf_counter() - start)
    return len(trees) / best


forward = jax.jit(batched)
sizes = [4, 16, 64]
fold_rate, node_rate = [], []
for n in sizes:
    trees = [random_expr(rng, rng.randrange(8, 33)) for _ in range(n)]
    fold_rate.append(trees_per_second(lambda ts: forward(params, batched.plan(ts)), trees))
    node_rate.append(trees_per_second(
        lambda ts: [encode_per_node(params, t) for t in ts], trees[:4], repeat=1))
    print(f"{n:4d} trees: fold {fold_rate[-1]:8.0f} trees/s, per node {node_rate[-1]:6.0f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
axes[0].plot(losses)
axes[0].set(xlabel="step", ylabel="loss", title="training on expression values")
axes[1].plot(sizes, fold_rate, "o-", label="autograph.fold")
axes[1].plot(sizes, node_rate, "s-", label="one jitted call per node")
axes[1].set(xscale="log", yscale="log", xlabel="trees per batch", ylabel="trees / s",
            title="forward throughput")
axes[1].legend()
plt.tight_layout()
plt.show()
# %% [md]
# ## What fold batches, and what it does not
#
# - Branches on the structure (`node.is_leaf`, loops over `node.children`) run in Python
#   while the batch is planned; branches on computed values (`if h.sum() > 0`) become a
#   select of both sides, per node.
# - A loop or recursion whose *length* depends on computed values cannot be planned
#   ahead: it raises a `ConversionError` at its line.
# - Functions called in the recursion must be pure; a subtree shared by two parents
#   is computed once.
# %%
def looping(p, node):
    h = encode(p, node)
    while h.sum() > 0:
        h = combine(p, 0, h, h)
    return h


try:
    autograph.fold(looping)(params, train[:2])
except autograph.ConversionError as e:
    print(str(e).splitlines()[0][:160], "...")
