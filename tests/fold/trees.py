"""Trees and recursive models for the fold tests (plain Python, unconverted)."""

import random

import jax
import jax.numpy as jnp


class Node:
    """A binary tree node: a leaf holds a word, an inner node two children."""

    def __init__(self, word=None, left=None, right=None):
        self.word, self.left, self.right = word, left, right

    @property
    def is_leaf(self):
        return self.left is None


class NaryNode:
    def __init__(self, word, children=()):
        self.word, self.children = word, list(children)


def random_tree(rng: random.Random, leaves: int, vocab: int = 1000) -> Node:
    if leaves == 1:
        return Node(word=rng.randrange(vocab))
    k = rng.randrange(1, leaves)
    return Node(left=random_tree(rng, k, vocab), right=random_tree(rng, leaves - k, vocab))


def chain_tree(leaves: int, vocab: int = 1000) -> Node:
    tree = Node(word=0)
    for i in range(1, leaves):
        tree = Node(left=tree, right=Node(word=i % vocab))
    return tree


def random_batch(rng, n, low, high, vocab=1000):
    return [random_tree(rng, rng.randrange(low, high + 1), vocab) for _ in range(n)]


def count_nodes(tree, seen=None):
    seen = set() if seen is None else seen
    if id(tree) in seen:
        return 0
    seen.add(id(tree))
    if tree.is_leaf:
        return 1
    return 1 + count_nodes(tree.left, seen) + count_nodes(tree.right, seen)


# -- a binary TreeLSTM --------------------------------------------------------------

def treelstm_params(key, hidden, vocab=1000):
    k1, k2 = jax.random.split(key)
    return {"embed": jax.random.normal(k1, (vocab, hidden)) * 0.5,
            "w": jax.random.normal(k2, (2 * hidden, 5 * hidden)) / jnp.sqrt(2.0 * hidden),
            "b": jnp.zeros(5 * hidden)}


def leaf(p, word):
    x = p["embed"][word]
    return jnp.tanh(x), x


def cell(p, left, right):
    (hl, cl), (hr, cr) = left, right
    z = jnp.concatenate([hl, hr]) @ p["w"] + p["b"]
    i, fl, fr, o, u = jnp.split(z, 5)
    c = (jax.nn.sigmoid(i) * jnp.tanh(u) + jax.nn.sigmoid(fl) * cl
         + jax.nn.sigmoid(fr) * cr)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def encode(p, node):
    if node.is_leaf:
        return leaf(p, node.word)
    return cell(p, encode(p, node.left), encode(p, node.right))


def word_cell(p, word, left, right):
    """The cell of a tree whose inner nodes carry a word too: the callee gathers
    from the parameters (``p["embed"][word]``), indexes a child's state by a
    number and adds into one element, inside every step (of one row, at a batch's
    narrow top)."""
    (hl, cl), (hr, cr) = left, right
    h, c = cell(p, (hl + p["embed"][word], cl), (hr, cr))
    return (h * hl[word % hl.shape[0]]).at[0].add(hr[1]), c + cr[0]


def encode_words(p, node):
    if node.is_leaf:
        return leaf(p, node.word)
    return word_cell(p, node.word, encode_words(p, node.left), encode_words(p, node.right))


def with_inner_words(trees, rng, vocab=1000):
    """``trees`` with a random word on each inner node (for :func:`encode_words`)."""
    stack = list(trees)
    while stack:
        node = stack.pop()
        if not node.is_leaf:
            node.word = rng.randrange(vocab)
            stack += [node.left, node.right]
    return trees


# -- a tree-RNN with branches on computed values ------------------------------------

def rnn_params(key, hidden, vocab=50):
    k1, k2 = jax.random.split(key)
    return {"e": jax.random.normal(k1, (vocab, hidden)),
            "w": jax.random.normal(k2, (hidden, 2 * hidden)) / jnp.sqrt(2.0 * hidden)}


def embed(p, word):
    return p["e"][word]


def mix(p, a, b):
    return jnp.tanh(p["w"] @ jnp.concatenate([a, b]))


def branchy(p, node):
    if node.is_leaf:
        return embed(p, node.word)
    left, right = branchy(p, node.left), branchy(p, node.right)
    h = mix(p, left, right)
    if h.sum() > 0:                     # decided per node, on a computed value
        return h * 2.0
    return -h + left


def nary(p, node):
    """Children in a list; jnp calls and operators straight in the recursion."""
    h = embed(p, node.word)
    for child in node.children:
        h = mix(p, h, nary(p, child))
    total = jnp.tanh(h) + 0.5 * h
    return total if node.children else h


def looping(p, node):
    if node.is_leaf:
        return embed(p, node.word)
    h = mix(p, looping(p, node.left), looping(p, node.right))
    while h.sum() > 0:                  # a trip count decided by computed values
        h = mix(p, h, h)
    return h


def deepening(p, node, h=None):
    h = embed(p, node.word if node.is_leaf else 0) if h is None else h
    if h.sum() > 0:                     # recursion continues on a computed value
        return deepening(p, node, mix(p, h, h))
    return h


def reads_number(p, node):
    if node.is_leaf:
        return embed(p, node.word)
    h = mix(p, reads_number(p, node.left), reads_number(p, node.right))
    return h * float(h.sum())
