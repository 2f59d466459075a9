"""``jax.vmap`` over converted functions whose control flow differs per example.

Each example in a batch takes its own branch, runs its own number of iterations and
stops at its own time; the batched result equals the function applied to each
example alone (TensorFlow Fold's dynamic batching, with vmap doing the batching).
"""

import jax
import jax.numpy as jnp
import numpy as np

import autograph
from autograph import set_loop_options
from tests.differential import assert_close, check


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def piecewise(x):
    if x < -1.0:
        y = -x
    elif x < 1.0:
        y = x * x
    else:
        y = jnp.sqrt(x)
    return y


def triangle(n):
    total = 0
    for i in range(n):
        total += i
    return total


def first_square_above(limit):
    """Early exit through the loop condition: stop at the first k*k > limit."""
    k = 0
    found = False
    while jnp.logical_not(found):  # `not` needs the logical converter
        k += 1
        found = k * k > limit
    return k


def bounded_newton(a):
    x = a
    while jnp.abs(x * x - a) > 1e-4:
        set_loop_options(maximum_iterations=40)
        x = 0.5 * (x + a / x)
    return x


def nested_counts(n):
    total = 0
    for i in range(n):
        j = i
        while j > 0:
            total += j % 3
            j = j // 2
    return total


def scan_rows(rows):
    best = rows[0]
    for row in rows:
        if jnp.sum(row) > jnp.sum(best):
            best = row
    return best


def test_collatz_per_example_trip_count():
    starts = list(range(1, 65))
    check(collatz, 27, vmap=starts)
    batched = jax.jit(jax.vmap(autograph.convert(collatz)))(jnp.arange(1, 65))
    assert batched.tolist() == [collatz(n) for n in starts]


def test_branch_per_example():
    check(piecewise, 0.5, vmap=[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 4.0])


def test_traced_range_per_example():
    check(triangle, 5, vmap=[0, 1, 2, 7, 30])


def test_early_exit_per_example():
    check(first_square_above, 10, vmap=[0, 1, 3, 4, 50, 99, 1000])


def test_nested_loops_per_example():
    check(nested_counts, 9, vmap=[0, 1, 5, 9, 33])


def test_bounded_while_per_example():
    values = [0.25, 2.0, 9.0, 150.0]
    batched = jax.vmap(autograph.convert(bounded_newton))(jnp.array(values))
    assert_close(np.sqrt(values), batched, rtol=1e-4)


def test_scan_over_each_examples_rows():
    batch = jnp.array([[[1.0, 2.0], [5.0, 0.0], [0.0, 0.0]],
                       [[0.0, 0.0], [1.0, 1.0], [4.0, 4.0]]])
    expected = np.stack([np.asarray(scan_rows(b)) for b in batch])
    assert_close(expected, jax.vmap(autograph.convert(scan_rows))(batch))


def test_per_example_gradients_through_per_example_loops():
    values = jnp.array([0.25, 2.0, 9.0, 150.0])
    grads = jax.jit(jax.vmap(jax.grad(autograph.convert(bounded_newton))))(values)
    assert_close(0.5 / np.sqrt(np.asarray(values)), grads, rtol=1e-3)


def test_vmap_of_jit_and_jit_of_vmap_agree():
    starts = jnp.array([3, 7, 27, 97, 871])
    converted = autograph.convert(collatz)
    expected = [collatz(int(n)) for n in starts]
    assert jax.vmap(jax.jit(converted))(starts).tolist() == expected
    assert jax.jit(jax.vmap(converted))(starts).tolist() == expected


def test_vmap_over_a_two_dimensional_batch():
    starts = jnp.arange(1, 17).reshape(4, 4)
    batched = jax.vmap(jax.vmap(autograph.convert(collatz)))(starts)
    assert batched.tolist() == [[collatz(int(n)) for n in row] for row in starts]


# -- effects on paths an example does not take -------------------------------------------
# Under vmap a staged `if` with a batched condition runs both branches (a select), and a
# staged `while` runs its body for every example until all are done; a print or a traced
# assert in there runs for the examples that are not on that path too.


def guarded_log(x):
    if x > 0:
        assert x > 0.5, "positive inputs must exceed 0.5"
        x = jnp.log(x)
    return x


def countdown(n):
    while n > 0:
        print("n =", n)
        n -= 1
    return n



def test_assert_in_a_branch_an_example_does_not_take():
    xs = jnp.array([1.0, -1.0])
    expected = [float(guarded_log(x)) for x in (1.0, -1.0)]   # Python: -1.0 skips the assert
    np.testing.assert_allclose(jax.jit(jax.vmap(autograph.convert(guarded_log)))(xs), expected)



def test_print_in_a_loop_body_prints_only_for_running_examples(capsys):
    jax.block_until_ready(jax.jit(jax.vmap(autograph.convert(countdown)))(jnp.array([1, 3])))
    jax.effects_barrier()
    lines = sorted(capsys.readouterr().out.splitlines())
    assert lines == ["n = 1", "n = 1", "n = 2", "n = 3"]


def report_sign(x):
    if x > 0:
        print("positive", x)
    else:
        print("not positive", x)
    return x


def test_print_in_a_branch_prints_only_for_examples_taking_it(capsys):
    jax.block_until_ready(jax.jit(jax.vmap(autograph.convert(report_sign)))(
        jnp.array([1.0, -2.0])))
    jax.effects_barrier()
    lines = sorted(capsys.readouterr().out.splitlines())
    assert lines == ["not positive -2.0", "positive 1.0"]
