# %% [md]
# # Performance: converted code vs hand-written `lax`
#
# Two questions a user asks before adopting `autograph`:
#
# 1. Does the converted program run as fast as the `lax.while_loop` / `lax.cond` /
#    `lax.fori_loop` / `lax.scan` code one would write by hand? It should: the conversion
#    happens once, at trace time, and the staged program is the same kind of program.
# 2. What does staging a loop buy over letting `jax.jit` unroll a Python loop? Compile time
#    that does not grow with the trip count.
#
# The workloads are small so that this notebook runs quickly on a CPU; the figures depend on
# the machine (and on its load: we interleave the two versions and keep the best of many
# runs so that both see the same conditions).
# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

import autograph
from autograph import stack
# %% [md]
# ## Four workloads, each written twice
# %%
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


def clipped_sum(xs):
    total = 0.0
    for i in range(xs.shape[0]):
        if xs[i] > 0:
            total += xs[i]
        else:
            total -= 0.5 * xs[i]
    return total


def clipped_sum_lax(xs):
    def body(i, total):
        return lax.cond(xs[i] > 0, lambda t: t + xs[i], lambda t: t - 0.5 * xs[i], total)
    return lax.fori_loop(0, xs.shape[0], body, 0.0)


def running_squares(xs):
    out = []
    acc = 0.0
    for x in xs:
        acc = 0.9 * acc + x * x
        out.append(acc)
    return stack(out)


def running_squares_lax(xs):
    def step(acc, x):
        acc = 0.9 * acc + x * x
        return acc, acc
    return lax.scan(step, 0.0, xs)[1]


def newton_sqrt(a):
    x = a
    while jnp.abs(x * x - a) > 1e-4 * a:
        x = 0.5 * (x + a / x)
    return x


def newton_sqrt_lax(a):
    return lax.while_loop(lambda x: jnp.abs(x * x - a) > 1e-4 * a,
                          lambda x: 0.5 * (x + a / x), a)


xs = jax.random.normal(jax.random.key(0), (1000,))
WORKLOADS = {
    "collatz\n(while + if)": (collatz, collatz_lax, (jnp.int32(871),)),
    "clipped sum\n(for + if)": (clipped_sum, clipped_sum_lax, (xs,)),
    "running squares\n(for + append)": (running_squares, running_squares_lax, (xs,)),
    "Newton sqrt\n(while)": (newton_sqrt, newton_sqrt_lax, (jnp.float32(1e6),)),
}
# %% [md]
# ## Interleaved timing
#
# Three compiled versions of each workload: `jax.jit(autograph.convert(f))` (the converted
# program), `autograph.to_graph(f)` (the same program behind autograph's call wrapper,
# which maps errors back to the user's lines) and `jax.jit` of the hand-written `lax`
# version. Each round calls all three, in a rotating order; we keep the best time of each.
# %%
def interleaved(fns, args, rounds=300):
    for fn in fns:
        jax.block_until_ready(fn(*args))
    best = [float("inf")] * len(fns)
    for r in range(rounds):
        for k in range(len(fns)):
            which = (r + k) % len(fns)
            start = time.perf_counter()
            jax.block_until_ready(fns[which](*args))
            best[which] = min(best[which], time.perf_counter() - start)
    return best


results = {}
for name, (fn, by_hand, args) in WORKLOADS.items():
    versions = [jax.jit(autograph.convert(fn)), autograph.to_graph(fn), jax.jit(by_hand)]
    for v in versions[:2]:
        np.testing.assert_allclose(v(*args), versions[2](*args), rtol=1e-5)
    results[name] = interleaved(versions, args)
    t_jit, t_graph, t_hand = results[name]
    print(f"{name.splitlines()[0]:16s} jit(convert) {t_jit * 1e6:6.1f} us   to_graph {t_graph * 1e6:6.1f} us"
          f"   lax by hand {t_hand * 1e6:6.1f} us")
# %%
names = list(results)
x = np.arange(len(names))
fig, ax = plt.subplots(figsize=(9, 3.8))
for offset, k, label in ((-0.2, 0, "jax.jit(convert(f))"), (0.2, 1, "to_graph(f)")):
    ratios = [results[n][k] / results[n][2] for n in names]
    bars = ax.bar(x + offset, ratios, width=0.4, label=label)
    ax.bar_label(bars, fmt="%.2f")
ax.axhline(1.0, color="grey", linestyle=":")
ax.set_xticks(x, names)
ax.set_ylim(0, 1.6)
ax.set_ylabel("time / hand-written lax\n(best call time)")
ax.set_title("Converted code vs hand-written lax (1.0 = same speed)")
ax.legend(loc="lower right")
plt.tight_layout()
plt.show()
# %% [md]
# The converted program runs at the speed of the hand-written one (the ratios of
# `jax.jit(convert(f))` are 1 within timing noise). `to_graph` adds a fixed cost of about a
# microsecond or two per call for its wrapper, visible only on calls as short as these.
#
# The staged programs have the same structure; for collatz, the top-level operations of each:
# %%
for label, f in (("converted", autograph.convert(collatz)), ("by hand", collatz_lax)):
    print(f"{label:10s}", [eqn.primitive.name for eqn in jax.make_jaxpr(f)(871).eqns])
# %% [md]
# ## Compile time: unrolled vs staged `for i in range(n)`
#
# Under plain `jax.jit` a Python `for i in range(n)` is unrolled: the traced program has `n`
# copies of the body, and tracing and compiling grow with `n`. The converted loop is staged
# into one `fori_loop` whatever `n` is. We time tracing plus compilation for each `n`.
# %%
def leaky(x, n):
    for i in range(n):
        x = jnp.sin(x) * 0.9 + 0.01 * i
    return x


def compile_time(fn, n):
    start = time.perf_counter()
    jax.jit(lambda x: fn(x, n)).lower(jnp.float32(1.0)).compile()
    return time.perf_counter() - start


converted_leaky = autograph.convert(leaky)
compile_time(converted_leaky, 2)  # first conversion and JAX warm-up, not counted
compile_time(leaky, 2)
sizes = [10, 100, 1000]
staged = [compile_time(converted_leaky, n) for n in sizes]
unrolled = [compile_time(leaky, n) for n in sizes]
for n, s, u in zip(sizes, staged, unrolled):
    print(f"n = {n:5d}: staged {s * 1e3:7.1f} ms   unrolled {u * 1e3:8.1f} ms")
np.testing.assert_allclose(jax.jit(lambda x: converted_leaky(x, 100))(1.0), leaky(1.0, 100), rtol=1e-5)
# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(sizes, [t * 1e3 for t in unrolled], "o-", label="unrolled (plain jax.jit)")
ax.loglog(sizes, [t * 1e3 for t in staged], "s-", label="staged (autograph: fori_loop)")
ax.set_xlabel("trip count n")
ax.set_ylabel("trace + compile time (ms)")
ax.set_title("Compile time of for i in range(n)")
ax.legend()
plt.tight_layout()
plt.show()
# %% [md]
# Unrolling can still be the right choice for a handful of iterations (XLA optimizes across
# them); for loops of more than a few dozen steps, staging keeps compile time flat.
# %% [md]
# ## The full benchmark suite
#
# The measurements above are kept small so that the notebook runs in seconds. The benchmark
# suite times more workloads (an RNN forward pass and training loop, Fibonacci lists, huber
# loss over 10,000 inputs, nested loops with a traced bound, ...) four ways (eager,
# `to_graph`, hand-written `lax`, unrolled), splits the first call into conversion, trace,
# lower and compile, and writes tables and a chart:
#
#     autograph bench --quick --out results/     # under a minute
#     autograph bench --out results/             # several minutes, steadier figures
#     autograph bench --list                     # the workloads
#
# It needs a source checkout (the suite lives in `benchmarks/`, next to `autograph/`); the
# README has the figures of a full run.
