"""The benchmarked programs, each written twice.

First the eager original, the way a user writes it: jax.numpy and plain
Python control flow. `autograph.to_graph` converts exactly this source, and
`jax.jit` of it (where it traces at all) unrolls its Python loops.

Then the same computation written by hand with `jax.lax`: what a careful
person writes today without autograph, and the speed autograph must reach.
The hand versions keep the structure of the originals (a ``cond`` where the
original has an ``if``, a loop where it has a loop) so the comparison is
like for like.
"""

import jax
import jax.numpy as jnp
from jax import lax

import autograph
from autograph.examples import collatz, huber_loss

__all__ = [
    "accumulate",
    "accumulate_lax",
    "collatz",
    "collatz_lax",
    "fibonacci",
    "fibonacci_lax",
    "fibonacci_while",
    "fibonacci_while_lax",
    "huber_loss",
    "huber_loss_lax",
    "rnn_forward",
    "rnn_forward_lax",
    "rnn_loss",
    "rnn_train",
    "rnn_train_lax",
    "row_sum",
    "row_sum_lax",
    "triangle_sum",
    "triangle_sum_lax",
]


# --- eager originals (plus collatz and huber_loss from autograph.examples) ---

def fibonacci(first_two, n):
    """The first ``n`` Fibonacci numbers from ``first_two``, grown in a list."""
    seq = []
    autograph.set_element_type(seq, first_two.dtype)
    a = first_two[0]
    b = first_two[1]
    for _ in range(n):
        seq.append(a)
        a, b = b, a + b
    return autograph.stack(seq)


def fibonacci_while(first_two, n):
    """Fibonacci numbers grown in a list inside a while loop, ``n`` traced (at most 1002)."""
    fib = [first_two[0], first_two[1]]
    i = 2
    while i < n:
        autograph.set_loop_options(maximum_iterations=1000)
        fib.append(fib[-1] + fib[-2])
        i += 1
    return fib[-1], len(fib), jnp.sum(autograph.stack(fib))


def row_sum(x):
    """Sum of the rows of ``x``, one row at a time."""
    z = jnp.zeros(x.shape[1], x.dtype)
    for i in range(x.shape[0]):
        z += x[i]
    return z


def accumulate(x):
    """Sum of the elements of a vector, one at a time (the scaling probe)."""
    total = jnp.zeros((), x.dtype)
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
    return total


def rnn_forward(params, xs):
    """Final hidden state of a tanh RNN run over ``xs`` (time, batch, features)."""
    h = jnp.zeros((xs.shape[1], params["w_hh"].shape[0]), xs.dtype)
    for x in xs:
        h = jnp.tanh(x @ params["w_xh"] + h @ params["w_hh"] + params["b"])
    return h


def rnn_loss(params, xs, ys):
    """Mean squared error of a linear read-out of the RNN's final state."""
    h = rnn_forward(params, xs)
    pred = h @ params["w_out"]
    return jnp.mean((pred - ys) ** 2)


def rnn_train(params, xs, ys, num_steps, lr=0.1):
    """``num_steps`` steps of plain SGD on :func:`rnn_loss`."""
    for _ in range(num_steps):
        grads = jax.grad(rnn_loss)(params, xs, ys)
        params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params


def triangle_sum(x, n):
    """Sum of ``x[i] * x[j]`` over ``j < i < n``, with ``n`` a traced bound."""
    total = 0.0
    for i in range(n):
        for j in range(i):
            total += x[i] * x[j]
    return total


# --- the same, written by hand with jax.lax ---

def collatz_lax(n):
    """:func:`collatz` as ``lax.while_loop`` over ``lax.cond``."""
    def cond(state):
        n, _ = state
        return n != 1

    def body(state):
        n, steps = state
        n = lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    _, steps = lax.while_loop(cond, body, (n, 0))
    return steps


def huber_loss_lax(a, delta=1.0):
    """:func:`huber_loss` as one ``lax.cond``."""
    return lax.cond(jnp.abs(a) <= delta,
                    lambda a: a * a / 2,
                    lambda a: delta * (jnp.abs(a) - delta / 2),
                    a)


def fibonacci_lax(first_two, n):
    """:func:`fibonacci` as a ``lax.scan`` stacking one number per step."""
    def step(carry, _):
        a, b = carry
        return (b, a + b), a

    _, seq = lax.scan(step, (first_two[0], first_two[1]), length=n)
    return seq


def fibonacci_while_lax(first_two, n):
    """:func:`fibonacci_while` as ``lax.while_loop`` filling a preallocated buffer."""
    buf = jnp.zeros(1002, first_two.dtype).at[:2].set(first_two)

    def cond(state):
        i, _ = state
        return i < n

    def body(state):
        i, buf = state
        return i + 1, buf.at[i].set(buf[i - 1] + buf[i - 2])

    length, buf = lax.while_loop(cond, body, (2, buf))
    return buf[length - 1], length, jnp.sum(buf)


def row_sum_lax(x):
    """:func:`row_sum` as ``lax.fori_loop``."""
    return lax.fori_loop(0, x.shape[0], lambda i, z: z + x[i], jnp.zeros(x.shape[1], x.dtype))


def accumulate_lax(x):
    """:func:`accumulate` as ``lax.fori_loop``."""
    return lax.fori_loop(0, x.shape[0], lambda i, t: t + x[i] * x[i], jnp.zeros((), x.dtype))


def rnn_forward_lax(params, xs):
    """:func:`rnn_forward` as ``lax.scan`` over time."""
    def step(h, x):
        return jnp.tanh(x @ params["w_xh"] + h @ params["w_hh"] + params["b"]), None

    h0 = jnp.zeros((xs.shape[1], params["w_hh"].shape[0]), xs.dtype)
    h, _ = lax.scan(step, h0, xs)
    return h


def _rnn_loss_lax(params, xs, ys):
    h = rnn_forward_lax(params, xs)
    return jnp.mean((h @ params["w_out"] - ys) ** 2)


def rnn_train_lax(params, xs, ys, num_steps, lr=0.1):
    """:func:`rnn_train` as ``lax.fori_loop`` over SGD steps."""
    def step(_, params):
        grads = jax.grad(_rnn_loss_lax)(params, xs, ys)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads)

    return lax.fori_loop(0, num_steps, step, params)


def triangle_sum_lax(x, n):
    """:func:`triangle_sum` as nested ``lax.fori_loop`` with traced bounds."""
    def outer(i, total):
        return lax.fori_loop(0, i, lambda j, t: t + x[i] * x[j], total)

    return lax.fori_loop(0, n, outer, jnp.zeros((), x.dtype))
