# %% [md]
# # Quickstart: eager Python in, `jax.lax` out
#
# `autograph` reads an eager-style Python function, rewrites its `if`/`while`/`for` into
# calls that decide at run time: with Python values they run as plain Python, with traced
# values (inside `jax.jit`, `vmap`, `grad`) they stage into `lax.cond`, `lax.while_loop`,
# `lax.fori_loop` and `lax.scan`. This notebook shows the three entry points:
#
# * `autograph.convert(f)`: the converted function (a decorator too);
# * `autograph.to_graph(f)`: the converted function, compiled (`jax.jit(convert(f))`);
# * `autograph.to_code(f)`: the generated source, to read.
# %%
import inspect
import time

import jax
import jax.numpy as jnp

import autograph
# %% [md]
# ## A branch on a traced value: `huber_loss`
#
# Plain `jax.jit` cannot trace a Python `if` on a traced value. The converted function can.
# %%
@autograph.convert
def huber_loss(a, delta=1.0):
    if abs(a) <= delta:
        loss = a * a / 2
    else:
        loss = delta * (abs(a) - delta / 2)
    return loss


print("Python floats:", huber_loss(0.5), huber_loss(3.0))
print("inside jax.jit:", jax.jit(huber_loss)(jnp.float32(0.5)), jax.jit(huber_loss)(3.0))
print("to_graph:      ", autograph.to_graph(huber_loss)(3.0))
# %%
try:
    jax.jit(huber_loss.__wrapped__)(3.0)
except jax.errors.TracerBoolConversionError as e:
    print("the unconverted function under jax.jit:", type(e).__name__)
# %% [md]
# The generated code, next to the original. Each branch became a function of the variables
# it assigns, and `ag__.if_stmt` picks Python `if` or `lax.cond` from the condition's type:
# %%
print(inspect.getsource(huber_loss.__wrapped__))
print(autograph.to_code(huber_loss))
# %% [md]
# ## A loop with a traced condition: Collatz
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


print("Python int in, Python int out:", collatz(27), type(collatz(27)).__name__)
print("compiled:", autograph.to_graph(collatz)(27))
print(autograph.to_code(collatz))
# %% [md]
# The staged program is one `while` holding one `cond`, just what one would write by hand:
# %%
print(jax.make_jaxpr(collatz)(27))
# %% [md]
# Per-example control flow under `jax.vmap`: each starting number runs its own number of
# iterations, in one batched call.
# %%
starts = jnp.arange(1, 1025)
steps = jax.jit(jax.vmap(collatz))(starts)
print("longest chain below 1025 starts at", int(jnp.argmax(steps)) + 1, "with", int(steps.max()), "steps")
# %% [md]
# ## Nested `if` and `while`, with a `print`
# %%
@autograph.convert
def count_up(n):
    if n >= 0:
        while n < 5:
            n += 1
            print(n)
    return n


print("Python:")
count_up(2)
print("compiled:")
_ = autograph.to_graph(count_up)(2)
jax.effects_barrier()
print(autograph.to_code(count_up))
# %% [md]
# ## Eager vs compiled
#
# The same source, run eagerly (one dispatch per operation, Python control flow) and compiled
# (one call):
# %%
def per_call(fn, *args, repeat=20):
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeat):
        jax.block_until_ready(fn(*args))
    return (time.perf_counter() - start) / repeat


n = jnp.int32(97)
eager = per_call(collatz.__wrapped__, n, repeat=3)
compiled = per_call(autograph.to_graph(collatz), n)
print(f"collatz(97): eager {eager * 1e3:.1f} ms, compiled {compiled * 1e6:.0f} us, "
      f"{eager / compiled:.0f}x")
