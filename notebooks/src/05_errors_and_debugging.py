# %% [md]
# # Errors and debugging
#
# When converted code cannot be staged, `autograph` says so at the line you wrote, with
# what went wrong and how to fix it. This notebook shows the common mistakes and the
# messages they give. Each example is caught and printed so the notebook runs through; in
# your own code you would see the same text in the traceback.
# %%
import traceback

import jax
import jax.numpy as jnp

import autograph


def show_error(fn, *args):
    """Run autograph.to_graph(fn)(*args) and print the error it raises."""
    try:
        autograph.to_graph(fn)(*args)
    except Exception as e:  # noqa: BLE001  (we want to see whatever it is)
        print(f"{type(e).__name__}: {e}")
        for note in getattr(e, "__notes__", []):
            if note.startswith("autograph"):  # (JAX adds a note of its own)
                print(note)
    else:
        print("no error")
# %% [md]
# ## A variable gets different types in the two branches
#
# A staged `if` becomes `lax.cond`, whose two branches must return values of the same
# shape, dtype and structure. Here one branch makes a number and the other a pair:
# %%
def branch_types(x):
    if x > 0:
        y = x
    else:
        y = (x, -x)
    return y


print("Python values are fine:", branch_types(2.0), branch_types(-2.0))
show_error(branch_types, 1.0)
# %% [md]
# The message starts with the file and line of the `if` (in a notebook, the cell's
# pseudo-file), names the variable and both types, and says how to fix it.
#
# ## A variable defined in only one branch
# %%
def one_branch(x):
    if x > 0:
        y = x * 2
    return y


print("Python, true branch:", one_branch(3.0))
show_error(one_branch, 3.0)
# %% [md]
# With Python values the original's behaviour is kept: the function works when the branch
# runs and raises Python's own error when it does not.
# %%
try:
    autograph.convert(one_branch)(-3.0)
except Exception as e:  # noqa: BLE001
    print(f"{type(e).__name__}: {e}")
# %% [md]
# ## A loop variable that changes shape
#
# A staged loop carries its variables with one fixed type. Doubling an array every
# iteration cannot be staged:
# %%
def doubling(n):
    acc = jnp.ones(1)
    i = 0
    while i < n:
        acc = jnp.concatenate([acc, acc])
        i += 1
    return acc


print("Python int n:", doubling(3))
show_error(doubling, 3)
# %% [md]
# ## A loop that needs a bound
#
# Two things need to know, while tracing, how many times a staged `while` can run: a list
# that grows in it (its buffer is preallocated) and reverse-mode differentiation (which
# stores every iteration). The messages say where to put the bound:
# %%
def halvings(x):
    seen = []
    while x > 1:
        seen.append(x)
        x = x / 2
    return autograph.stack(seen)


show_error(halvings, 100.0)


def doublings(x):
    while x < 10:
        x = x * 2
    return x


try:
    jax.grad(autograph.convert(doublings))(1.0)
except autograph.ConversionError as e:
    print(f"{type(e).__name__}: {e}")
# %% [md]
# ## A traced value used as a Python bool where `autograph` does not stage
#
# Statements (`if`, `while`, `for`, `and`/`or`/`not`, `assert`, conditional expressions) are
# converted; a comprehension's `if` is not. JAX raises its usual error, and `autograph` adds a
# note pointing at the exact spot and saying what to do instead:
# %%
def positives_sum(xs):
    return sum([v for v in xs if v > 0])


show_error(positives_sum, jnp.array([1.0, -2.0, 3.0]))
# %% [md]
# One fix is to write the loop as a statement, or to use `jnp.where`:
# %%
def positives_sum_fixed(xs):
    return jnp.sum(jnp.where(xs > 0, xs, 0.0))


print(autograph.to_graph(positives_sum_fixed)(jnp.array([1.0, -2.0, 3.0])))
# %% [md]
# ## An `assert` that fails inside the compiled program
#
# A staged `assert` is checked at run time: the compiled program stops at the first failed
# check and `to_graph` raises an error with the message, the file, the line and the
# statement.
# %%
def safe_sqrt(x):
    assert x >= 0, "safe_sqrt needs a non-negative input"
    return jnp.sqrt(x)


safe = autograph.to_graph(safe_sqrt)
print(safe(4.0))
try:
    safe(-1.0)
except Exception as e:  # noqa: BLE001
    print(f"{type(e).__name__}: {e}")
# %% [md]
# ## From the traceback back to your code
#
# The converted code is compiled with your file and line numbers on every statement, so a
# traceback through converted code shows your lines, not generated ones. Here an error
# happens inside a loop body:
# %%
def mismatched_matmul(xs):
    total = 0.0
    for i in range(3):
        total += xs[i] @ xs  # shapes do not match
    return total


def user_frames(error):
    """The traceback entries outside installed packages and autograph itself."""
    return [f for f in traceback.extract_tb(error.__traceback__)
            if "site-packages" not in f.filename and "/autograph/" not in f.filename]


try:
    autograph.to_graph(mismatched_matmul)(jnp.ones((3, 2)))
except TypeError as e:
    print(f"{type(e).__name__}: {e}".splitlines()[0])
    for f in user_frames(e):
        print(f"  {f.filename}, line {f.lineno}, in {f.name}: {f.line}")
# %% [md]
# To see what the code was turned into, `to_code` prints the generated source:
# %%
print(autograph.to_code(mismatched_matmul))
# %% [md]
# And to step through the generated code itself (in a traceback, or with `pdb`),
# `autograph.set_debug(store_source=True)` makes functions converted from then on run code
# compiled from that generated text, kept in memory under a name that says which function
# and line it came from:
# %%
autograph.set_debug(store_source=True)
try:
    autograph.to_graph(mismatched_matmul)(jnp.ones((3, 2)))
except TypeError as e:
    for f in user_frames(e):
        print(f"  {f.filename}, line {f.lineno}, in {f.name}: {f.line}")
finally:
    autograph.set_debug(store_source=False)
