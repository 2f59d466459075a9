"""Staging is an optimisation (issue 17): whatever ``jax.jit`` of the original traces,
``to_graph`` gives the same result; staged where the body allows it, unrolled where
it needs Python iteration, and lists come out as lists.

Each case is checked against the original with Python values and under ``jax.jit``
(``tests.differential.check``), against ``jax.jit`` of the original (``like_jit``:
same pytree structure, a list stays a list), and for what was staged or unrolled
(``unrolling.count_decisions``, jaxpr primitives).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import ConversionError, set_element_type, set_loop_options
from autograph.runtime import unrolling
from tests.differential import assert_close, check


def like_jit(fn, *args, **jit_kwargs):
    """``to_graph(fn)`` gives what ``jax.jit(fn)`` gives: the same pytree (lists as
    lists) of close values. Returns the result."""
    expected = jax.jit(fn, **jit_kwargs)(*args)
    actual = autograph.to_graph(fn, **jit_kwargs)(*args)
    assert_close(expected, actual)
    return actual


def decisions(fn, *args, **jit_kwargs):
    """The staging decisions taken while tracing ``convert(fn)`` (fresh trace)."""
    with unrolling.count_decisions() as seen:
        jax.make_jaxpr(autograph.convert(fn), **jit_kwargs)(*args)
    return seen


def primitives(fn, *args, **jit_kwargs) -> str:
    return str(jax.make_jaxpr(autograph.convert(fn), **jit_kwargs)(*args))


# -- carries that change shape across iterations of a static loop -------------------


def grow_concatenate(x):
    v = jnp.zeros(1)
    for i in range(4):
        v = jnp.concatenate([v, x * i])
    return v


def grow_kron(m):
    out = jnp.ones((1, 1))
    for _ in range(3):
        out = jnp.kron(out, m)
    return out


def pad_each_step(m):
    for i in range(3):
        m = jnp.pad(m, 1) + i
    return m


def nested_lists(x):
    rows = []
    for i in range(3):
        row = []
        for j in range(2):
            row.append(x * i + j)
        rows.append(row)
    return rows


def scan_growth(xs):
    acc = jnp.zeros(0)
    for x in xs:
        acc = jnp.concatenate([acc, x[None] * 2])
    return acc


@pytest.mark.parametrize("fn, args", [
    (grow_concatenate, (np.ones(1, np.float32),)),
    (grow_kron, (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),)),
    (pad_each_step, (np.ones((2, 2), np.float32),)),
    (nested_lists, (np.float32(1.5),)),
    (scan_growth, (np.arange(3.0, dtype=np.float32),)),
])
def test_a_carry_that_changes_shape_unrolls_as_jit_does(fn, args):
    check(fn, *args)
    like_jit(fn, *args)
    seen = decisions(fn, *args)
    assert seen.counts["unrolled"] >= 1


WEIGHTS = [1.0, 2.0, 3.0]


def weighted_by_a_python_list(xs):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + WEIGHTS[i] * x
    return s


def zipped_growth(xs, ys):
    out = jnp.zeros(0)
    for x, (k, y) in zip(xs, enumerate(ys)):  # noqa: B905 - the code under test
        out = jnp.concatenate([out, jnp.array([x * y * WEIGHTS[k]])])
    return out


def test_unrolled_scans_give_enumerate_indices_as_python_ints():
    xs = np.arange(3.0, dtype=np.float32)
    check(weighted_by_a_python_list, xs)
    like_jit(weighted_by_a_python_list, xs)
    check(zipped_growth, xs, xs + 1)
    like_jit(zipped_growth, xs, xs + 1)


def test_the_unrolled_loop_is_logged_with_its_reason(caplog):
    with caplog.at_level("INFO", logger="autograph.loops"):
        autograph.to_graph(grow_concatenate)(np.ones(1, np.float32))
    (record,) = [r for r in caplog.records if r.decision == "unrolled"]
    assert "'v' changes from float32[1] to float32[2]" in record.getMessage()
    assert record.where.lineno == grow_concatenate.__code__.co_firstlineno + 2


def test_nested_lists_keep_their_inner_loops_staged():
    seen = decisions(nested_lists, np.float32(1.5))
    # The outer loop appends lists (unrolled); each inner loop appends arrays (staged).
    assert seen.counts == {"unrolled": 1, "staged": 3}


# -- lists appended a static number of times come out as lists ----------------------


def fib(n):
    a, b = jnp.int32(0), jnp.int32(1)
    out = []
    for _ in range(n):
        out.append(a)
        a, b = b, a + b
    return jnp.stack(out)


def fib_list(x):
    a, b = x, x + 1
    out = []
    for _ in range(6):
        out.append(a)
        a, b = b, a + b
    return out


def used_as_a_list(x):
    out = []
    for i in range(5):
        out.append(x * i)
    total = 0.0
    for item in out:
        total = total + item
    return len(out), out[2], out[-1], jnp.array(out), total, [o + 1 for o in out]


def grown_from_an_array(xs):
    out = [xs[0]]
    for x in xs:
        out.append(jnp.sin(x))
    return out, autograph.stack(out)


def test_the_seed_fibonacci_stacks_its_list():
    assert autograph.to_graph(fib, static_argnums=0)(10).tolist() == [
        0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    like_jit(fib, 10, static_argnums=0)
    assert primitives(fib, 10, static_argnums=0).count("scan[") == 1


def test_a_list_appended_in_a_static_loop_is_returned_as_a_list():
    check(fib_list, np.float32(1.0), vmap=[1.0, 2.0])
    out = like_jit(fib_list, np.float32(1.0))
    assert type(out) is list and len(out) == 6
    assert decisions(fib_list, np.float32(1.0)).counts == {"staged": 1}


def test_such_a_list_has_len_iteration_indexing_and_array_conversion():
    check(used_as_a_list, np.float32(2.0))
    like_jit(used_as_a_list, np.float32(2.0))


def test_stack_of_such_a_list_is_the_loop_buffer_itself():
    check(grown_from_an_array, np.arange(4.0, dtype=np.float32))
    jaxpr = primitives(grown_from_an_array, np.arange(4.0, dtype=np.float32))
    # the buffer: the list's start padded with the loop's room (one pad), then the scan
    assert jaxpr.count("scan[") == 1 and "pad[" in jaxpr


def bump_first(x):
    y = [x, x * 2]
    for i in range(3):
        y[0] += 2
        y[1] = y[1] * i
    return y


def test_a_list_modified_by_item_in_a_staged_loop_stays_a_list():
    check(bump_first, np.float32(1.0))
    out = like_jit(bump_first, np.float32(1.0))
    assert type(out) is list


def append_when_positive(xs):
    z = []
    for x in xs:
        if x > 0:
            z.append(x)
    return z


def stacked_when_positive(xs):
    z = []
    for x in xs:
        if x > 0:
            z.append(x)
    return jnp.stack(z)


def as_array_when_positive(xs):
    z = []
    for x in xs:
        if x > 0:
            z.append(x)
    return jnp.array(z)


def stacked_by_autograph(xs):
    z = []
    for x in xs:
        if x > 0:
            z.append(x)
    return autograph.stack(z), len(z)


@pytest.mark.parametrize("fn", [append_when_positive, stacked_when_positive,
                                as_array_when_positive])
def test_a_list_of_data_dependent_length_asks_for_autograph_stack(fn):
    with pytest.raises((TypeError, ConversionError), match=r"autograph\.stack\(lst\)"):
        autograph.to_graph(fn)(jnp.array([1.0, -1.0, 2.0]))
    check(fn, np.array([1.0, -1.0, 2.0], np.float32), compiled=False)


def test_autograph_stack_of_a_data_dependent_list_is_its_padded_buffer():
    stacked, length = autograph.to_graph(stacked_by_autograph)(jnp.array([1.0, -1.0, 2.0]))
    assert stacked.tolist() == [1.0, 2.0, 0.0] and int(length) == 2


def depth_first(adj, start):
    n = adj.shape[0]
    visited = jnp.zeros(n, bool)
    stack = [start]
    set_element_type(stack, jnp.int32)
    count = 0
    while len(stack) > 0:
        set_loop_options(maximum_iterations=32)
        node = stack.pop()
        if not visited[node]:
            visited = visited.at[node].set(True)
            count += 1
            for j in range(n):
                if adj[node, j] and not visited[j]:
                    stack.append(j)
    return count, visited


ADJACENCY = np.array([[0, 1, 0, 0, 1], [1, 0, 1, 0, 0], [0, 1, 0, 0, 0],
                      [0, 0, 0, 0, 1], [1, 0, 0, 1, 0]], bool)


def test_depth_first_search_with_a_declared_stack_list():
    for start in range(5):
        check(depth_first, ADJACENCY, start)
    lonely = ADJACENCY.copy()
    lonely[3, 4] = lonely[4, 3] = False
    check(depth_first, lonely, 3)


# -- traced slices of static width ---------------------------------------------------


def window_sums(xs):
    s = jnp.zeros(3)
    for i in range(xs.shape[0] - 2):
        s = s + xs[i:i + 3]
    return s


def row_sums(m):
    s = jnp.zeros(m.shape[1])
    for i in range(m.shape[0]):
        s = s + m[i, :]
    return s


def column_windows(m, k):
    s = jnp.zeros((m.shape[0], k))
    for i in range(m.shape[1] - k + 1):
        s = s + m[:, i:i + k] * i
    return s


def window_writes(xs):
    out = np.zeros(xs.shape[0] + 2, np.float32)
    for i in range(xs.shape[0]):
        out[i:i + 3] += xs[i]
    return out


def clipped_windows(xs):
    total = 0.0
    for i in range(xs.shape[0]):
        total = total + jnp.sum(xs[i:i + 3]) * (i + 1)
    return total


XS = np.arange(8.0, dtype=np.float32)
M = np.arange(12.0, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("fn, args, kwargs", [
    (window_sums, (XS,), {}),
    (row_sums, (M,), {}),
    (column_windows, (M, 2), {"static_argnums": 1}),
    (window_writes, (XS,), {}),   # the original fails under jit: a NumPy buffer
])
def test_a_slice_of_static_width_at_the_staged_index_stays_staged(fn, args, kwargs):
    check(fn, *args, compiled=not kwargs)
    if fn is not window_writes:
        like_jit(fn, *args, **kwargs)
    seen = decisions(fn, *args, **kwargs)
    assert seen.counts == {"staged": 1}
    assert "dynamic_slice" in primitives(fn, *args, **kwargs)


def test_a_window_that_may_leave_the_array_runs_unrolled_with_python_s_clipping():
    check(clipped_windows, XS)
    like_jit(clipped_windows, XS)
    assert decisions(clipped_windows, XS).counts == {"unrolled": 1}


def test_the_slice_converter_passes_static_widths():
    code = autograph.to_code(column_windows)
    assert "ag__.getitem(m, ag__.index[:, i:i + k], (None, k))" in code


# -- triangular loops under grad ----------------------------------------------------


def forward_substitution(lower, b):
    n = b.shape[0]
    x = jnp.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(i):
            s = s + lower[i, j] * x[j]
        x = x.at[i].set((b[i] - s) / lower[i, i])
    return x


def back_substitution(upper, b):
    n = b.shape[0]
    x = jnp.zeros(n)
    for i in reversed(range(n)):
        s = 0.0
        for j in range(i + 1, n):
            s = s + upper[i, j] * x[j]
        x = x.at[i].set((b[i] - s) / upper[i, i])
    return x


def gram_schmidt(a):
    n = a.shape[1]
    q = jnp.zeros_like(a)
    for j in range(n):
        v = a[:, j]
        for i in range(j):
            v = v - jnp.dot(q[:, i], a[:, j]) * q[:, i]
        q = q.at[:, j].set(v / jnp.linalg.norm(v))
    return q


LOWER = np.tril(np.ones((4, 4), np.float32)) + 3 * np.eye(4, dtype=np.float32)
B = np.arange(1.0, 5.0, dtype=np.float32)
A = np.random.RandomState(0).randn(5, 3).astype(np.float32)


@pytest.mark.parametrize("fn, args", [
    (forward_substitution, (LOWER, B)),
    (back_substitution, (LOWER.T.copy(), B)),
    (gram_schmidt, (A,)),
])
def test_triangular_loops_are_staged_and_reverse_differentiable(fn, args):
    check(fn, *args, rtol=1e-4, atol=1e-5)
    like_jit(fn, *args)

    def loss(f):
        return lambda *a: jnp.sum(f(*a) ** 2)

    expected = jax.grad(loss(fn), argnums=(0,))(*args)
    assert_close(expected, jax.grad(loss(autograph.convert(fn)), argnums=(0,))(*args),
                 rtol=1e-4, atol=1e-5)
    assert_close(expected, jax.jit(jax.grad(loss(autograph.convert(fn)), argnums=(0,)))(
        *args), rtol=1e-4, atol=1e-5)
    # The inner loop is a bounded loop (autograph/runtime/bounded_loops.py): a while_loop that
    # stops where the triangle does, under a custom_jvp that replays it for grad.
    assert "custom_jvp_call[" in primitives(fn, *args)
    assert "bound=ag__.loop_bound(lambda" in autograph.to_code(fn)


# -- reversed ranges ------------------------------------------------------------------


def reversed_traced_range(x, n):
    s = x
    for t in reversed(range(n)):
        s = s * 2 + t
    return s


def discounted_returns(rewards):
    g = 0.0
    out = jnp.zeros_like(rewards)
    for t in reversed(range(len(rewards))):
        g = rewards[t] + 0.9 * g
        out = out.at[t].set(g)
    return out


def test_reversed_range_with_a_traced_bound():
    for n in (0, 1, 5):
        check(reversed_traced_range, np.float32(1.0), n)


def test_reversed_range_over_a_static_length_is_staged():
    rewards = np.array([1.0, 0.0, 2.0, 1.0], np.float32)
    check(discounted_returns, rewards)
    like_jit(discounted_returns, rewards)
    assert primitives(discounted_returns, rewards).count("scan[") == 1


def reversed_iterator_consumed(x):
    it = reversed(range(3))
    for t in it:
        x = x + t
    return x, list(it)


def test_a_range_iterator_is_left_exhausted_as_python_leaves_it():
    check(reversed_iterator_consumed, np.float32(1.0))


# -- NumPy buffers and tuple-target swaps -----------------------------------------------


def numpy_buffer(x, i):
    b = np.zeros(3, np.float32)
    b[1] = x
    b[i] = x * 2
    return b


def bubble_sort(xs):
    xs = xs + 0   # a copy: the caller's array stays as it is
    n = xs.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
    return xs


def swap_mixed(xs, k):
    xs = xs + 0
    first, xs[0], xs[k] = xs[k], xs[k] * 2, xs[0]
    return first, xs


def test_a_numpy_buffer_takes_a_traced_value_as_a_traced_index_would():
    check(numpy_buffer, np.float32(2.0), 2)
    assert autograph.to_graph(numpy_buffer)(2.0, 0).tolist() == [4.0, 2.0, 0.0]


def test_tuple_target_swaps_read_both_values_first():
    data = np.array([3.0, 1.0, 4.0, 1.5, 0.5], np.float32)
    check(bubble_sort, data)
    assert autograph.to_graph(bubble_sort)(data).tolist() == sorted(data.tolist())
    assert decisions(bubble_sort, data).counts == {"staged": 2}
    check(swap_mixed, np.arange(4.0, dtype=np.float32), 2)
    assert "value_0, value_1 = (xs[j + 1], xs[j])" in autograph.to_code(bubble_sort)


# -- stateful library objects: a Flax NNX training loop ---------------------------------


def fit(model, optimizer, x, y):
    from flax import nnx

    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    losses = []
    for _ in range(3):
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        losses.append(loss)
    return jnp.stack(losses)


def test_a_flax_nnx_training_loop_runs_under_nnx_jit():
    # The model and optimizer the loop reaches are carried through the staged loop as
    # state (autograph/runtime/carried_state.py), so it stages; before that it ran unrolled, as
    # nnx.jit of the original does. Either way, the same training.
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")

    def make():
        model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
        return model, nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

    x, y = jnp.ones((4, 2)), jnp.ones((4, 1))
    model, optimizer = make()
    expected = nnx.jit(fit)(model, optimizer, x, y)
    model2, optimizer2 = make()
    with unrolling.count_decisions() as seen:
        actual = nnx.jit(autograph.convert(fit))(model2, optimizer2, x, y)
    assert_close(expected, actual)
    assert_close(model.kernel[...], model2.kernel[...])
    assert int(optimizer2.step[...]) == 3
    assert seen.counts == {"staged": 1}


# -- the unroll fallback is taken only where needed ---------------------------------

STAGED_ONLY = {"unrolled": 0}
# (program, arguments, jax.jit keywords, the decisions it takes): a loop is unrolled
# only where its body needs Python iteration. benchmarks/unrolling.py reports it.
CORPUS = [
    (grow_concatenate, (np.ones(1, np.float32),), {}, {"staged": 0, "unrolled": 1}),
    (grow_kron, (np.ones((2, 2), np.float32),), {}, {"staged": 0, "unrolled": 1}),
    (pad_each_step, (np.ones((2, 2), np.float32),), {}, {"staged": 0, "unrolled": 1}),
    (nested_lists, (np.float32(1.5),), {}, {"staged": 3, "unrolled": 1}),
    (scan_growth, (np.arange(3.0, dtype=np.float32),), {}, {"staged": 0, "unrolled": 1}),
    (clipped_windows, (XS,), {}, {"staged": 0, "unrolled": 1}),
    (fib, (10,), {"static_argnums": 0}, {"staged": 1, **STAGED_ONLY}),
    (fib_list, (np.float32(1.0),), {}, {"staged": 1, **STAGED_ONLY}),
    (used_as_a_list, (np.float32(2.0),), {}, {"staged": 1, **STAGED_ONLY}),
    (grown_from_an_array, (XS,), {}, {"staged": 1, **STAGED_ONLY}),
    (bump_first, (np.float32(1.0),), {}, {"staged": 1, **STAGED_ONLY}),
    (stacked_by_autograph, (XS,), {}, {"staged": 1, **STAGED_ONLY}),
    (depth_first, (ADJACENCY, 0), {}, {"staged": 3, **STAGED_ONLY}),
    (window_sums, (XS,), {}, {"staged": 1, **STAGED_ONLY}),
    (row_sums, (M,), {}, {"staged": 1, **STAGED_ONLY}),
    (column_windows, (M, 2), {"static_argnums": 1}, {"staged": 1, **STAGED_ONLY}),
    (window_writes, (XS,), {}, {"staged": 1, **STAGED_ONLY}),
    (forward_substitution, (LOWER, B), {}, {"staged": 2, **STAGED_ONLY}),
    (back_substitution, (LOWER, B), {}, {"staged": 2, **STAGED_ONLY}),
    (gram_schmidt, (A,), {}, {"staged": 2, **STAGED_ONLY}),
    (reversed_traced_range, (np.float32(1.0), 5), {}, {"staged": 1, **STAGED_ONLY}),
    (discounted_returns, (XS,), {}, {"staged": 1, **STAGED_ONLY}),
    (reversed_iterator_consumed, (np.float32(1.0),), {}, {"staged": 1, **STAGED_ONLY}),
    (bubble_sort, (XS,), {}, {"staged": 2, **STAGED_ONLY}),
]


@pytest.mark.parametrize("fn, args, jit_kwargs, expected", CORPUS,
                         ids=[case[0].__name__ for case in CORPUS])
def test_each_loop_is_unrolled_only_where_it_must_be(fn, args, jit_kwargs, expected):
    seen = decisions(fn, *args, **jit_kwargs)
    assert {k: seen.counts[k] for k in expected} == expected
