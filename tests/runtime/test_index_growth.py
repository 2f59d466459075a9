"""A loop over a Python range that grows a list under a condition of its index alone
runs unrolled, as ``jax.jit`` of the original does (runtime/index_growth.py).

Staged, the index is traced and the list became a buffer of traced length, which
``jnp.stack`` and ``return`` refused where ``jax.jit`` of the original gives a
Python list. A list grown under a data-dependent condition stays a staged buffer.
"""

from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import autograph
from autograph.runtime import unrolling
from autograph.runtime.index_growth import output_dependence
from tests.differential import assert_close, assert_same_python


def history_every_five_steps(w, x):
    history = []
    for step in range(20):
        w = w - 0.1 * jnp.sum(w * x)
        if step % 5 == 0:
            history.append(w)
    return w, history


def stacked_history(w, x):
    history = []
    for step in range(12):
        w = w * 0.9 + x
        if step % 4 == 3:
            history.append(w)
    return jnp.stack(history)


def moving_average(xs):
    out = []
    acc = 0.0
    for i in range(xs.shape[0]):
        acc += xs[i]
        if i >= 2:
            acc -= xs[i - 2]
        if i >= 1:
            out.append(acc / 2)
    return jnp.stack(out)


def every_other_by_a_counter(xs):
    out = []
    c = 0
    for i in range(xs.shape[0]):
        c = c + 1
        if c % 2 == 0:
            out.append(xs[i])
    return out


CASES = [
    (history_every_five_steps, (jnp.ones(3), jnp.full(3, 0.1))),
    (stacked_history, (jnp.ones(2), jnp.full(2, 0.5))),
    (moving_average, (jnp.arange(6.0),)),
    (every_other_by_a_counter, (jnp.arange(5.0),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_compiled_it_gives_what_jit_of_the_original_gives(fn, args):
    expected = jax.jit(fn)(*args)
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(fn)(*args)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(expected)
    assert_close(expected, got)
    assert_close(expected, jax.jit(autograph.convert(fn))(*args))
    assert seen.counts["unrolled"] == 1
    assert any("loop index alone" in reason for reason in seen.reasons)


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_with_python_values_it_is_the_original(fn, args):
    args = tuple(np.asarray(a) for a in args)
    assert_same_python(fn(*args), autograph.convert(fn)(*args))


def positives(xs):
    out = []
    for i in range(xs.shape[0]):
        if xs[i] > 0:
            out.append(xs[i])
    return autograph.stack(out)


def positives_at_even_indices(xs):
    out = []
    for i in range(xs.shape[0]):
        if i % 2 == 0 and xs[i] > 0:
            out.append(xs[i])
    return autograph.stack(out)


@pytest.mark.parametrize("fn", [positives, positives_at_even_indices],
                         ids=lambda f: f.__name__)
def test_a_list_grown_on_data_stays_a_staged_buffer(fn):
    xs = jnp.array([1.0, -1.0, 2.0, 3.0])
    with unrolling.count_decisions() as seen:
        got = jax.jit(autograph.convert(fn))(xs)
    assert seen.counts["unrolled"] == 0
    kept = [x for i, x in enumerate(xs.tolist()) if x > 0
            and (fn is positives or i % 2 == 0)]
    np.testing.assert_array_equal(got[:len(kept)], kept)


def test_the_dependence_of_an_output_follows_cond_branches_and_calls():
    def step(i, n, x):
        n = jax.lax.cond(i % 2 == 0, lambda m: m + 1, lambda m: m, n)
        y = jax.jit(lambda a: a * 2)(x)
        return n, y, n + y.astype(jnp.int32).sum()

    closed = jax.make_jaxpr(step)(0, 0, jnp.ones(2))
    assert output_dependence(closed, 0) == {0, 1}
    assert output_dependence(closed, 1) == {2}
    assert output_dependence(closed, 2) == {0, 1, 2}


def every_other_row(xs):
    out = []
    for i, x in enumerate(xs):
        if i % 2 == 0:
            out.append(x * 2)
    return out


def rows_past_the_first(xs):
    out = []
    for i, x in enumerate(xs, start=1):
        if i > 1:
            out.append(x)
    return jnp.stack(out)


@pytest.mark.parametrize("fn", [every_other_row, rows_past_the_first],
                         ids=lambda f: f.__name__)
def test_enumerate_of_an_array_with_a_condition_on_its_index(fn):
    _compiled_as_jit_of_the_original(fn, jnp.arange(10.0).reshape(5, 2))


def positives_of_enumerate(xs):
    out = []
    for i, x in enumerate(xs):
        if x > i:
            out.append(x)
    return autograph.stack(out)


def test_enumerate_with_a_condition_on_the_data_stays_staged():
    xs = jnp.array([1.0, 0.0, 3.0])
    with unrolling.count_decisions() as seen:
        got = jax.jit(autograph.convert(positives_of_enumerate))(xs)
    assert seen.counts["unrolled"] == 0
    np.testing.assert_array_equal(got[:2], [1.0, 3.0])


def test_under_grad_and_vmap_the_history_is_a_python_list_too():
    def loss(w):
        return jnp.sum(stacked_history(w, jnp.full(2, 0.5)) ** 2)

    w = jnp.ones(2)
    np.testing.assert_allclose(jax.grad(autograph.convert(loss))(w), jax.grad(loss)(w),
                               rtol=1e-6)
    ws = jnp.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(
        jax.vmap(autograph.convert(stacked_history), (0, None))(ws, jnp.full(2, 0.5)),
        jax.vmap(stacked_history, (0, None))(ws, jnp.full(2, 0.5)), rtol=1e-6)


def history_with_a_report(w, x):
    history = []
    for step in range(6):
        w = w * 0.5 + x
        if step % 3 == 0:
            print("step", step)
            history.append(w)
    return jnp.stack(history)


def test_the_staged_attempt_leaves_no_print_behind():
    # Decided before the loop is staged: a scan traced and dropped would keep its
    # effects (its print) in the trace, and the text would come twice.
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = autograph.to_graph(history_with_a_report)(jnp.ones(2), jnp.full(2, 0.5))
        jax.effects_barrier()
    assert out.getvalue() == "step 0\nstep 3\n"
    assert_close(history_with_a_report(jnp.ones(2), jnp.full(2, 0.5)), got)


def history_at_each_epoch_end(w):
    history = []
    for _epoch in range(3):
        for step in range(4):
            w = w * 0.9
            if step == 3:
                history.append(w)
    return jnp.stack(history)


def history_by_a_global_step(w):
    history = []
    global_step = 0
    for _epoch in range(3):
        for _step in range(4):
            w = w * 0.9 + 0.1
            global_step += 1
            if global_step % 5 == 0:
                history.append(w)
    return history


def positives_in_nested_loops(w):
    out = []
    for _epoch in range(3):
        for _step in range(2):
            w = w - 0.5
            if w > 0:
                out.append(w)
    return autograph.stack(out)


@pytest.mark.parametrize("fn", [history_at_each_epoch_end, history_by_a_global_step],
                         ids=lambda f: f.__name__)
def test_nested_loops_keep_a_history_as_jit_of_the_original(fn):
    _compiled_as_jit_of_the_original(fn, jnp.ones(2))


def _compiled_as_jit_of_the_original(fn, *args):
    expected = jax.jit(fn)(*args)
    got = autograph.to_graph(fn)(*args)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(expected)
    assert_close(expected, got)


def test_nested_loops_growing_a_list_on_data_stay_staged():
    with unrolling.count_decisions() as seen:
        got = jax.jit(autograph.convert(positives_in_nested_loops))(jnp.float32(1.75))
    assert seen.counts["unrolled"] == 0
    np.testing.assert_allclose(got[:3], [1.25, 0.75, 0.25])


def test_the_dependence_through_loops_is_their_fixed_point():
    def scanned(w, n):
        def body(i, c):
            w, k = c
            return w * 0.9, lax.cond(i == 3, lambda k: k + 1, lambda k: k, k)
        return lax.fori_loop(0, 4, body, (w, n))

    closed = jax.make_jaxpr(scanned)(1.0, 0)
    assert output_dependence(closed, 1) == {1}   # the count: its start and the index
    assert output_dependence(closed, 0) == {0}

    def looped(w, n):
        return lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] * 2, c[1] + 1), (w, n))

    closed = jax.make_jaxpr(looped)(1.0, 0)
    assert output_dependence(closed, 1) == {0, 1}   # the trip count reads w
