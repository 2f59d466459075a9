# %% [md]
# # Loops and lists
#
# Converted code keeps the loop forms people actually write: `for` and `while` with
# `break`, `continue` and an early `return`, lists grown with `append`, and item
# assignment. With Python values each runs exactly as written; with traced values each
# becomes a `lax` loop whose state is the variables the loop changes.
# %%
import jax
import jax.numpy as jnp

import autograph
from autograph import set_loop_options, stack
# %% [md]
# ## `break`, `continue` and `return` in a loop
#
# `first_above` scans an array for the first element above a threshold. `break` becomes a
# flag carried by the loop; once it is set, the remaining iterations do nothing. (Over a
# range of known length the loop stays one `scan`, which `jax.grad` can differentiate.)
# %%
@autograph.convert
def first_above(xs, threshold):
    index = -1
    for i in range(xs.shape[0]):
        if xs[i] > threshold:
            index = i
            break
    return index


xs = jnp.array([0.5, 1.5, 3.0, 0.2, 4.0])
print("Python loop:", first_above(xs, 1.0))
print("compiled:   ", autograph.to_graph(first_above)(xs, 2.5))
print("vmapped over thresholds:", jax.vmap(first_above, in_axes=(None, 0))(xs, jnp.array([0.0, 1.0, 3.5, 9.0])))
# %% [md]
# `continue` skips the rest of one iteration, and `return` inside a loop leaves the
# function with a value; both work on traced values as well:
# %%
@autograph.convert
def sum_of_odd_squares(n):
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        total += i * i
    return total


@autograph.convert
def find(xs, target):
    for i in range(xs.shape[0]):
        if xs[i] == target:
            return i
    return -1


print(sum_of_odd_squares(10), autograph.to_graph(sum_of_odd_squares)(10))
ys = jnp.array([4, 8, 15, 16, 23, 42])
print(find(ys, 16), autograph.to_graph(find)(ys, 23), autograph.to_graph(find)(ys, 7))
# %% [md]
# The generated code for `find`: the early `return` became a `did_return` flag and a
# return value carried through the loop, and the loop checks the flag before each
# iteration (`extra_test`).
# %%
print(autograph.to_code(find))
# %% [md]
# ## A list grown in a loop, then stacked
#
# Inside a staged loop a Python list cannot grow (the loop body is traced once), so the
# converted code keeps a preallocated buffer and a length. `autograph.stack(z)` gives the
# elements as one array; with a Python list it is `jnp.stack`.
# %%
@autograph.convert
def powers(x, n):
    z = []
    for i in range(n):
        z.append(x ** i)
    return stack(z)


print("Python:  ", powers(2.0, 6))
print("compiled:", autograph.to_graph(powers, static_argnums=1)(2.0, 6))
print(autograph.to_code(powers))
# %% [md]
# ## Fibonacci in a `while` loop
#
# Here the number of appends depends on a traced value, so the buffer needs a size:
# `set_loop_options(maximum_iterations=...)`, the first statement of the body, bounds the
# loop. The stacked result is the buffer, padded with zeros after `len(f)`.
# %%
@autograph.convert
def fibonacci(n):
    f = [0, 1]
    while len(f) < n:
        set_loop_options(maximum_iterations=30)
        f.append(f[-1] + f[-2])
    return len(f), stack(f)


print("Python:  ", fibonacci(12))
count, seq = autograph.to_graph(fibonacci)(12)
print("compiled:", int(count), seq)
print("the first len(f) entries:", seq[:int(count)])
# %% [md]
# ## Item assignment
#
# `x[i] = v` on a JAX array is not allowed in JAX (arrays are immutable); in converted code
# it becomes `x = x.at[i].set(v)`, so the eager-style version works, traced or not.
# %%
@autograph.convert
def running_max(xs):
    out = jnp.zeros_like(xs)
    best = xs[0]
    for i in range(xs.shape[0]):
        if xs[i] > best:
            best = xs[i]
        out[i] = best
    return out


xs = jnp.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
print(running_max(xs))
print(autograph.to_graph(running_max)(xs))
print(autograph.to_code(running_max))
