# %% [md]
# # A whole training loop in one compiled call
#
# A training loop is usually a Python `for` that calls a compiled step function once per
# step, with logging and schedule logic in Python between the calls. With `autograph` the
# loop itself, the `if`s inside it and the `print` every few steps can all be staged: the
# function below is written as eager Python and `autograph.to_graph` compiles all of it,
# forward pass, loss, gradient, update and the loop over steps, into one XLA program.
# %%
import time

import matplotlib.pyplot as plt

import jax
import jax.numpy as jnp

import autograph
from autograph import stack
# %% [md]
# ## The model: a small MLP fitting a noisy sine
# %%
key_x, key_noise, key_init = jax.random.split(jax.random.key(0), 3)
xs = jax.random.uniform(key_x, (256, 1), minval=-3.0, maxval=3.0)
ys = jnp.sin(xs) + 0.05 * jax.random.normal(key_noise, xs.shape)


def init_params(key, sizes=(1, 32, 32, 1)):
    params = []
    for k, (m, n) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append((jax.random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n)))
    return params


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)
# %% [md]
# ## The training loop, as eager Python
#
# Plain Python control flow on traced values: the loop over steps, an `if` that clips the
# gradient when its norm is large, an `if` that halves the learning rate half way, and a
# `print` of an f-string every 250 steps. The losses are appended to a list and stacked at
# the end.
#
# The f-string is formatted when the compiled program runs, from the concrete values: its
# format specs (`{step:>4}`, `{loss:.4f}`) give exactly the line Python prints, though `step`
# and `loss` are traced values inside the compiled loop.
# %%
def train(params, x, y, steps, lr):
    losses = []
    for step in range(steps):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads)))
        if norm > 1.0:
            grads = jax.tree.map(lambda g: g / norm, grads)
        if step == steps // 2:
            lr = lr / 2
        params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
        if step % 250 == 0:
            print(f"step {step:>4}: loss {loss:.4f}, grad norm {norm:.3f}")
        losses.append(loss)
    return params, stack(losses)


STEPS = 2000
train_compiled = autograph.to_graph(train, static_argnums=3)
params0 = init_params(key_init)
start = time.perf_counter()
params, losses = train_compiled(params0, xs, ys, STEPS, 0.02)
losses.block_until_ready()
jax.effects_barrier()
print(f"{STEPS} steps, compile included: {time.perf_counter() - start:.2f} s; final loss {losses[-1]:.4f}")
# %% [md]
# The whole run is one program: the `for` became a `fori_loop`/`scan` over steps, each
# `if` a `lax.cond`, the `print` a host callback that formats the f-string
# (`ag__.format_('step {:>4}: ...', step, loss, norm)` below). The generated code:
# %%
print(autograph.to_code(train))
# %% [md]
# A second call with new data or initial weights reuses the compiled program:
# %%
start = time.perf_counter()
_, losses2 = train_compiled(init_params(jax.random.key(1)), xs, ys, STEPS, 0.02)
losses2.block_until_ready()
jax.effects_barrier()
print(f"{STEPS} steps, already compiled: {time.perf_counter() - start:.3f} s")
# %% [md]
# ## The loss curve
# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
ax1.semilogy(losses, label="seed 0")
ax1.semilogy(losses2, label="seed 1")
ax1.axvline(STEPS // 2, color="grey", linestyle=":", label="learning rate halved")
ax1.set_xlabel("step")
ax1.set_ylabel("training loss (MSE)")
ax1.legend()
grid = jnp.linspace(-3, 3, 200)[:, None]
ax2.scatter(xs[:, 0], ys[:, 0], s=6, alpha=0.4, label="data")
ax2.plot(grid[:, 0], mlp(params, grid)[:, 0], color="C3", label="fitted MLP")
ax2.legend()
plt.tight_layout()
plt.show()
# %% [md]
# ## Gradients through a converted loop
#
# `jax.grad` differentiates the staged loops and branches. `damped` runs a data-dependent
# number of `while` iterations; `set_loop_options(maximum_iterations=...)` bounds the loop,
# which makes it reverse-differentiable: the backward pass replays the iterations the loop
# took (not the bound) as scans that reverse mode goes through. We check the
# gradient against central finite differences, in float64 so that the check is precise
# (the finite differences come from running the same function on Python floats, the loop
# exactly as written).
# %%
jax.config.update("jax_enable_x64", True)


@autograph.convert
def damped(x, scale):
    steps = 0
    while x > 0.1:
        autograph.set_loop_options(maximum_iterations=50)
        if x > 1.0:
            x = x * scale
        else:
            x = x * x * scale
        steps += 1
    return x * steps


grad = jax.jit(jax.grad(damped, argnums=(0, 1)))
eps = 1e-5
print("   x  scale |   d/dx   finite diff |  d/dscale  finite diff")
for x0, s in [(3.0, 0.8), (1.7, 0.9), (0.6, 0.95), (2.5, 0.7)]:
    gx, gs = grad(x0, s)
    fd_x = (damped(x0 + eps, s) - damped(x0 - eps, s)) / (2 * eps)
    fd_s = (damped(x0, s + eps) - damped(x0, s - eps)) / (2 * eps)
    assert abs(gx - fd_x) < 1e-6 * max(1, abs(fd_x)) and abs(gs - fd_s) < 1e-6 * max(1, abs(fd_s))
    print(f"{x0:4} {s:6} | {float(gx):8.5f} {fd_x:10.5f}  | {float(gs):8.4f} {fd_s:10.4f}")
# %% [md]
# The step count is piecewise constant in the inputs, so the derivative is that of the
# iterations actually run; where a tiny change of the input would change the number of
# iterations (or the branch taken), the function jumps and no derivative exists.
