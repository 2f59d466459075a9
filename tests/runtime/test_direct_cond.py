"""A staged ``if`` binds ``cond_p`` on the branches it traced (batched_select._DirectCond),
and where that is off (another JAX's jaxpr layout, or forced here) goes through
``lax.cond``, which traces them again: both ways give Python's values, gradients
and batched values, and the same jaxpr primitives."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import autograph
from autograph.runtime import batched_select
from benchmarks.first_call import primitive_counts
from tests.differential import assert_close
from tests.runtime.test_vmap import collatz

W = jnp.asarray(np.random.default_rng(1).normal(size=(4, 4)), jnp.float32)


@pytest.fixture(params=[True, False], ids=["direct", "lax_cond"])
def direct(request, monkeypatch):
    """Each test once with the direct bind, once with ``lax.cond``; the way not
    chosen raises if it is reached."""
    monkeypatch.setattr(batched_select, "DIRECT_BIND", request.param)
    if request.param:
        def no_lax_cond(*args, **kwargs):
            raise AssertionError("lax.cond traced a branch that was already traced")
        monkeypatch.setattr(batched_select.lax, "cond", no_lax_cond)
    else:
        def no_direct(*args, **kwargs):
            raise AssertionError("cond_p bound directly where lax.cond was asked for")
        monkeypatch.setattr(batched_select._DirectCond, "__call__", no_direct)
    return request.param


def passes_through(x, y, n):
    # y and n leave the branches unchanged (outputs forwarded from the operands);
    # x only in one branch
    if x.sum() > n:
        x = jnp.tanh(W @ x)
        z = y * 2.0
    else:
        z = y - 1.0
    return x, y, z, n


def closes_over(x, scale):
    # scale is closed over by the branches: a constant the other branch takes unused
    def inner(x):
        if x[0] > 0:
            out = x * scale
        else:
            out = jnp.sin(x) + scale
        return out
    return autograph.convert(inner)(x)


def branch_with_loop(x, n):
    if n > 2:
        i = 0
        while i < n:
            x = x * 1.5
            i += 1
    else:
        x = x - 1.0
    return x


def literal_outputs(x):
    if x > 0:
        flag, y = 1, x + 1
    else:
        flag, y = 2, x - 1
    return flag, y


X = jnp.asarray(np.random.default_rng(2).normal(size=(5, 4)), jnp.float32)


def test_values_gradients_and_vmap_both_ways(direct):
    converted = autograph.convert(passes_through)
    for x in X[:3]:
        for n in (-1.0, 0.0, 1.0):
            expected = passes_through(x, 2.5, n)
            assert_close(expected, jax.jit(converted)(x, jnp.float32(2.5), jnp.float32(n)))
    loss = lambda f: lambda x, y: sum(jnp.sum(o) for o in f(x, y, 0.0)[:3])  # noqa: E731
    assert_close(jax.grad(loss(passes_through), argnums=(0, 1))(X[0], 2.5),
                 jax.jit(jax.grad(loss(converted), argnums=(0, 1)))(X[0], jnp.float32(2.5)))
    ys = jnp.linspace(-1.0, 1.0, 5)
    per = [passes_through(x, y, 0.0) for x, y in zip(X, ys, strict=True)]
    got = jax.vmap(converted, in_axes=(0, 0, None))(X, ys, 0.0)
    for i in range(4):
        assert_close(np.stack([np.asarray(p[i]) for p in per]), got[i], rtol=1e-5, atol=1e-6)
    got = jax.vmap(jax.jit(converted), in_axes=(0, 0, None))(X, ys, jnp.float32(0.0))
    assert_close(np.stack([np.asarray(p[2]) for p in per]), got[2], rtol=1e-5, atol=1e-6)


def test_closed_over_constants_and_outer_tracers(direct):
    scale = jnp.float32(3.0)
    for x in (X[0], -X[0]):
        expected = x * 3.0 if x[0] > 0 else jnp.sin(x) + 3.0
        assert_close(expected, jax.jit(closes_over)(x, scale))
        expected_grad = jnp.sum(x) if x[0] > 0 else jnp.float32(x.shape[0])
        assert_close(expected_grad, jax.grad(lambda s, x=x: jnp.sum(closes_over(x, s)))(scale))
    got = jax.vmap(closes_over, in_axes=(0, None))(X, scale)
    assert_close(np.stack([np.asarray(closes_over(x, scale)) for x in X]), got)


def test_a_branch_with_a_loop_and_literal_outputs(direct):
    converted = autograph.convert(branch_with_loop)
    for n in (1, 3, 5):
        assert_close(branch_with_loop(2.0, n), jax.jit(converted)(jnp.float32(2.0), n))
    ns = jnp.array([1, 3, 5])
    assert_close(np.array([branch_with_loop(2.0, int(n)) for n in ns]),
                 jax.vmap(converted, in_axes=(None, 0))(jnp.float32(2.0), ns))
    converted = autograph.convert(literal_outputs)
    for x in (-1.5, 2.0):
        flag, y = jax.jit(converted)(jnp.float32(x))
        assert (int(flag), float(y)) == literal_outputs(x)
        assert float(jax.grad(lambda v: converted(v)[1])(jnp.float32(x))) == 1.0


def test_collatz_both_ways_and_same_primitives(direct, monkeypatch):
    converted = autograph.convert(collatz)
    ns = jnp.arange(1, 20, dtype=jnp.int32)
    np.testing.assert_array_equal(jax.jit(jax.vmap(converted))(ns),
                                  [collatz(int(n)) for n in ns])
    assert int(jax.jit(converted)(jnp.int32(27))) == collatz(27)
    counts = primitive_counts(jax.make_jaxpr(converted)(jnp.int32(27)))
    assert counts["cond"] == 1 and counts["while"] == 1
    monkeypatch.undo()
    monkeypatch.setattr(batched_select, "DIRECT_BIND", not direct)
    assert primitive_counts(jax.make_jaxpr(autograph.convert(collatz))(jnp.int32(27))) == counts


def test_effects_go_through_lax_cond(monkeypatch, capsys):
    monkeypatch.setattr(batched_select._DirectCond, "__call__", lambda *a: 1 / 0)

    def noisy(x):
        if x > 0:
            jax.debug.print("positive {}", x)
            x = x + 1
        else:
            x = x - 1
        return x

    assert float(jax.jit(autograph.convert(noisy))(jnp.float32(2.0))) == 3.0
    assert "positive 2.0" in capsys.readouterr().out


def test_the_installed_jax_binds_directly_and_another_layout_does_not(monkeypatch):
    assert batched_select.DIRECT_BIND == batched_select._direct_bind_supported()
    assert batched_select._direct_bind_supported() == (jax.__version__.startswith("0.10."))
    # JAX 0.11's layout: ClosedJaxpr and Jaxpr one class
    monkeypatch.setattr(batched_select, "ClosedJaxpr", batched_select.Jaxpr)
    assert not batched_select._direct_bind_supported()


def test_lax_cond_is_what_the_direct_bind_stands_for():
    # The jaxpr lax.cond gives for the same two branches has the same primitives.
    def by_hand(x, y):
        return lax.cond(x.sum() > 0, lambda x, y: (jnp.tanh(W @ x), y),
                        lambda x, y: (x, y + 1.0), x, y)

    def drop_in(x, y):
        return batched_select.cond(x.sum() > 0, lambda x, y: (jnp.tanh(W @ x), y),
                                   lambda x, y: (x, y + 1.0), x, y)

    hand = primitive_counts(jax.make_jaxpr(by_hand)(X[0], 1.0))
    ours = primitive_counts(jax.make_jaxpr(drop_in)(X[0], 1.0))
    assert ours["cond"] == hand["cond"] == 1
    assert ours["tanh"] == hand["tanh"] and ours["dot_general"] == hand["dot_general"]
    for x in (X[0], -X[0]):
        assert_close(by_hand(x, 1.0), jax.jit(drop_in)(x, 1.0))
