"""A staged ``if`` under ``vmap`` with a batched condition: both branches on the batched
values, closed-over operands left unbatched, outputs selected (autograph/runtime/batched_select.py).

Each case is checked three ways: equal to the Python function run on each example,
equal to hand-written ``lax.cond`` under ``vmap`` (values and gradients), and by the
compiled program's shapes: no operand of shape (batch, n, n), which is what JAX's own
batching of ``lax.cond`` makes of the closed-over (n, n) weights.
"""

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

N, B, T = 16, 8, 5
_rng = np.random.default_rng(0)
W = jnp.asarray(_rng.normal(size=(N, N)) / np.sqrt(N), jnp.float32)
V = jnp.asarray(_rng.normal(size=(N, N)) / np.sqrt(N), jnp.float32)
U = jnp.asarray(_rng.normal(size=(N, N)) / np.sqrt(N), jnp.float32)
X = jnp.asarray(_rng.normal(size=(B, N)), jnp.float32)
SEQ = jnp.asarray(_rng.normal(size=(B, T, N)), jnp.float32)
COPIES = f"{B}x{N}x{N}"   # W or V copied per example, as StableHLO spells the shape


def step(h):
    if h.sum() > 0:
        h = jnp.tanh(W @ h)
    else:
        h = jnp.tanh(V @ h)
    return h


def step_lax(h):
    return lax.cond(h.sum() > 0, lambda h: jnp.tanh(W @ h), lambda h: jnp.tanh(V @ h), h)


def step_expression(h):
    return jnp.tanh(W @ h) if h.sum() > 0 else jnp.tanh(V @ h)


def step_with_weights(w, h):
    if h.sum() > 0:
        h = jnp.tanh(w @ h)
    else:
        h = jnp.sin(h)
    return h


def rnn(xs):
    h = jnp.zeros(N)
    for t in range(xs.shape[0]):
        x = xs[t]
        if x.sum() > 0:
            h = jnp.tanh(W @ h + U @ x)
        else:
            h = jnp.tanh(V @ h + x)
    return h


def rnn_lax(xs):
    def body(h, x):
        h = lax.cond(x.sum() > 0, lambda: jnp.tanh(W @ h + U @ x), lambda: jnp.tanh(V @ h + x))
        return h, None
    return lax.scan(body, jnp.zeros(N), xs)[0]


def safe_sqrt(x):
    if x > 0:
        y = jnp.sqrt(x)
    else:
        y = 0.0 * x
    return y


def noisy(h):
    if h.sum() > 0:
        print("took W for", h.sum())
        h = jnp.tanh(W @ h)
    else:
        h = jnp.tanh(V @ h)
    return h


def loss(fn):
    return lambda xs: (jax.vmap(fn)(xs) ** 2).sum()


def per_example(fn, xs):
    return np.stack([np.asarray(fn(x)) for x in xs])


def lowered(fn, *args):
    return jax.jit(fn).lower(*args).as_text()


def test_the_example_does_not_copy_the_weights_per_example():
    converted = autograph.convert(step)
    assert COPIES in lowered(jax.vmap(step_lax), X)   # what JAX's batching of cond does
    for form in (jax.vmap(converted), jax.vmap(jax.jit(converted))):
        assert COPIES not in lowered(form, X)
        assert COPIES not in lowered(jax.grad(lambda xs, f=form: (f(xs) ** 2).sum()), X)
    assert COPIES not in lowered(jax.vmap(jax.grad(lambda h: (converted(h) ** 2).sum())), X)


@pytest.mark.parametrize("fn", [step, step_expression], ids=["statement", "expression"])
@pytest.mark.parametrize("order", ["vmap", "jit_vmap", "vmap_jit", "jit_vmap_jit"])
def test_values_equal_python_and_lax_cond(fn, order):
    converted = autograph.convert(fn)
    forms = {"vmap": jax.vmap(converted), "jit_vmap": jax.jit(jax.vmap(converted)),
             "vmap_jit": jax.vmap(jax.jit(converted)),
             "jit_vmap_jit": jax.jit(jax.vmap(jax.jit(converted)))}
    got = forms[order](X)
    assert_close(per_example(fn, X), got, rtol=1e-5, atol=1e-6)
    assert_close(jax.vmap(step_lax)(X), got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("order", ["grad_vmap", "grad_vmap_jit", "vmap_grad",
                                   "vmap_grad_jit", "jit_grad_vmap_jit"])
def test_gradients_equal_lax_cond(order):
    converted = autograph.convert(step)
    per = lambda f: lambda h: (f(h) ** 2).sum()  # noqa: E731
    forms = {"grad_vmap": jax.grad(loss(converted)),
             "grad_vmap_jit": jax.grad(loss(jax.jit(converted))),
             "vmap_grad": jax.vmap(jax.grad(per(converted))),
             "vmap_grad_jit": jax.vmap(jax.grad(per(jax.jit(converted)))),
             "jit_grad_vmap_jit": jax.jit(jax.grad(loss(jax.jit(converted))))}
    expected = jax.grad(loss(step_lax))(X)
    assert_close(expected, forms[order](X), rtol=1e-5, atol=1e-6)
    assert_close(per_example(jax.grad(per(step)), X), forms[order](X), rtol=1e-5, atol=1e-6)


def test_gradient_of_closed_over_weights_is_not_copied():
    converted = autograph.convert(step_with_weights)
    def total(w, f):
        return (jax.vmap(lambda h: f(w, h))(X) ** 2).sum()
    reference = lambda w, h: lax.cond(  # noqa: E731
        h.sum() > 0, lambda h: jnp.tanh(w @ h), lambda h: jnp.sin(h), h)
    for f in (converted, jax.jit(converted)):
        assert_close(jax.grad(total)(W, reference), jax.grad(total)(W, f), rtol=1e-5,
                     atol=1e-6)
    text = jax.jit(jax.grad(lambda w: total(w, jax.jit(converted)))).lower(W).as_text()
    assert COPIES not in text


def test_forward_mode_and_second_order():
    converted = autograph.convert(step)
    tangent = jnp.ones_like(X)
    expected = jax.jvp(jax.vmap(step_lax), (X,), (tangent,))[1]
    assert_close(expected, jax.jvp(jax.vmap(jax.jit(converted)), (X,), (tangent,))[1],
                 rtol=1e-5, atol=1e-6)
    h = X[0]
    hess = jax.hessian(lambda h: (jax.jit(converted)(h) ** 2).sum())(h)
    assert_close(jax.hessian(lambda h: (step_lax(h) ** 2).sum())(h), hess, rtol=1e-4,
                 atol=1e-5)


def test_rnn_step_inside_a_staged_loop():
    converted = autograph.convert(rnn)
    got = jax.jit(jax.vmap(converted))(SEQ)
    assert_close(per_example(rnn, SEQ), got, rtol=1e-5, atol=1e-6)
    assert_close(jax.vmap(rnn_lax)(SEQ), got, rtol=1e-5, atol=1e-6)
    assert_close(jax.grad(loss(rnn_lax))(SEQ), jax.grad(loss(converted))(SEQ),
                 rtol=1e-5, atol=1e-6)
    assert COPIES in lowered(jax.vmap(rnn_lax), SEQ)
    assert COPIES not in lowered(jax.vmap(converted), SEQ)
    assert COPIES not in lowered(jax.grad(loss(converted)), SEQ)


def test_vmap_of_vmap():
    converted = autograph.convert(step)
    grid = jnp.reshape(jnp.concatenate([X, -X]), (2, B, N))
    both = jax.vmap(jax.vmap(converted))(grid)
    assert_close(jax.vmap(jax.vmap(step_lax))(grid), both, rtol=1e-5, atol=1e-6)
    # The condition batched by the outer vmap only: the inner one shares it.
    outer_only = jax.vmap(jax.vmap(lambda h, s: converted(h * s), in_axes=(0, None)),
                          in_axes=(None, 0))(X, jnp.array([1.0, -1.0]))
    expected = jax.vmap(jax.vmap(lambda h, s: step_lax(h * s), in_axes=(0, None)),
                        in_axes=(None, 0))(X, jnp.array([1.0, -1.0]))
    assert_close(expected, outer_only, rtol=1e-5, atol=1e-6)
    assert_close(expected, jax.vmap(jax.vmap(jax.jit(lambda h, s: converted(h * s)),
                                             in_axes=(0, None)), in_axes=(None, 0))(
        X, jnp.array([1.0, -1.0])), rtol=1e-5, atol=1e-6)


def test_a_condition_the_batch_shares_keeps_one_branch():
    converted = autograph.convert(step_with_weights)
    flag_batched = jax.make_jaxpr(jax.vmap(converted, in_axes=(None, 0)))(W, X)
    shared = jax.make_jaxpr(jax.vmap(lambda h, x: converted(W, h), in_axes=(None, 0)))(
        X[0], X)
    assert "cond[" in str(shared)
    assert "cond[" not in str(flag_batched)


def test_not_taken_branch_gives_no_nan_gradient():
    converted = autograph.convert(safe_sqrt)
    xs = jnp.array([-4.0, -1.0, 0.0, 1.0, 4.0])
    expected = [float(jax.grad(safe_sqrt)(x)) if x > 0 else 0.0 for x in xs.tolist()]
    for form in (converted, jax.jit(converted)):
        assert_close(np.array(expected), jax.vmap(jax.grad(form))(xs))
        assert_close(np.array(expected), jax.grad(lambda x, f=form: jax.vmap(f)(x).sum())(xs))


def test_shard_map_over_one_device():
    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        pytest.skip("no jax.shard_map")
    mesh = jax.make_mesh((1,), ("b",))
    spec = jax.sharding.PartitionSpec("b")
    xs = jax.device_put(X, jax.sharding.NamedSharding(mesh, spec))
    converted = autograph.convert(step)
    sharded = jax.jit(shard_map(jax.vmap(converted), mesh=mesh, in_specs=spec,
                                out_specs=spec))
    assert_close(jax.vmap(step_lax)(X), sharded(xs), rtol=1e-5, atol=1e-6)
    inner = jax.jit(shard_map(jax.vmap(jax.jit(converted)), mesh=mesh, in_specs=spec,
                              out_specs=spec))
    assert_close(jax.vmap(step_lax)(X), inner(xs), rtol=1e-5, atol=1e-6)
    assert_close(jax.grad(loss(step_lax))(X),
                 jax.grad(lambda x: (sharded(x) ** 2).sum())(xs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("order", ["vmap", "jit_vmap", "vmap_jit"])
def test_prints_in_a_branch_only_for_examples_taking_it(capsys, order):
    converted = autograph.convert(noisy)
    forms = {"vmap": jax.vmap(converted), "jit_vmap": jax.jit(jax.vmap(converted)),
             "vmap_jit": jax.vmap(jax.jit(converted))}
    xs = jnp.array([[1.0] * N, [-1.0] * N, [2.0] * N])
    capsys.readouterr()
    got = forms[order](xs)
    jax.effects_barrier()
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == ["took W for 16.0", "took W for 32.0"]
    assert_close(jax.vmap(step_lax)(xs), got, rtol=1e-5, atol=1e-6)


def test_drop_in_for_lax_cond_with_several_operands():
    def f(a, b):
        return batched_select.cond(a > b, lambda a, b: (a - b, a * W), lambda a, b: (b - a, b * V),
                                   a, b)
    a, b = X[:, 0], X[:, 1]
    expected = jax.vmap(lambda a, b: lax.cond(a > b, lambda a, b: (a - b, a * W),
                                              lambda a, b: (b - a, b * V), a, b))(a, b)
    assert_close(expected, jax.vmap(f)(a, b))
    assert_close(expected, jax.vmap(jax.jit(f))(a, b))
    with pytest.raises(TypeError):
        batched_select.cond(jnp.bool_(True), lambda: 1.0, lambda: jnp.int32(1))


def constant_in_one_branch(x, n):
    if n > 0:
        y = x * 2
    else:
        y = 3.0
    return y


def test_a_python_constant_in_one_branch_is_selected_too():
    converted = autograph.convert(constant_in_one_branch)
    xs, ns = jnp.array([-1.0, 2.0, 3.0]), jnp.array([1, 0, 5])
    expected = [constant_in_one_branch(float(x), int(n)) for x, n in zip(xs, ns, strict=True)]
    for form in (jax.vmap(converted), jax.vmap(jax.jit(converted))):
        assert_close(np.array(expected), form(xs, ns))
    assert "cond[" not in str(jax.make_jaxpr(jax.vmap(jax.jit(converted)))(xs, ns))
    # the branch not taken has no float input at all: its linear map is of nothing
    grads = jax.grad(lambda x: jax.vmap(jax.jit(converted))(x, ns).sum())(xs)
    assert_close(np.array([2.0, 0.0, 2.0]), grads)
    assert_close(np.array([2.0, 0.0, 2.0]), jax.vmap(jax.grad(jax.jit(converted)))(xs, ns))


def grow(h):
    steps = 0
    while jnp.abs(h).sum() < 100.0 and steps < 50:
        h = W @ h + 1.0
        steps += 1
    return h, steps


def test_a_while_with_a_batched_test_does_not_copy_its_constants():
    converted = autograph.convert(grow)
    assert COPIES not in lowered(jax.vmap(converted), X)
    got = jax.jit(jax.vmap(converted))(X)
    expected = [grow(x) for x in X]
    assert_close(np.stack([np.asarray(e[0]) for e in expected]), got[0], rtol=1e-4,
                 atol=1e-4)
    assert got[1].tolist() == [int(e[1]) for e in expected]


def test_an_integer_if_has_no_custom_jvp_and_keeps_its_values():
    converted = autograph.convert(collatz)
    primitives = primitive_counts(jax.make_jaxpr(converted)(jnp.int32(27)))
    # Integer scalars in and out: a plain cond, which JAX batches to the same select.
    assert "custom_jvp_call" not in primitives and "custom_vmap_call" not in primitives
    ns = jnp.arange(1, 40, dtype=jnp.int32)
    expected = [collatz(int(n)) for n in ns]
    assert [int(converted(n)) for n in ns[:5]] == expected[:5]
    assert jax.jit(converted)(jnp.int32(27)) == collatz(27)
    np.testing.assert_array_equal(jax.vmap(converted)(ns), expected)
    np.testing.assert_array_equal(jax.jit(jax.vmap(converted))(ns), expected)
    np.testing.assert_array_equal(jax.vmap(jax.jit(converted))(ns), expected)


TABLE = jnp.arange(1, 2 * N + 1, dtype=jnp.int32).reshape(2, N)


def pick_row(k):
    """An integer if reading a closed-over integer matrix (not a scalar)."""
    if k % 2 == 0:
        row = TABLE[0] * k
    else:
        row = TABLE[1] - k
    return row


def walk_rows(k):
    """:func:`pick_row`'s kind of if in a while loop, whose body a vmap batches later."""
    row = TABLE[0]
    while k > 0:
        if k % 2 == 0:
            row = row * 2
        else:
            row = row + TABLE[1]
        k -= 1
    return row


def test_an_integer_if_over_an_array_is_a_custom_vmap_without_custom_jvp():
    converted = autograph.convert(pick_row)
    primitives = primitive_counts(jax.make_jaxpr(converted)(jnp.int32(3)))
    assert "custom_jvp_call" not in primitives and "custom_vmap_call" in primitives
    ks = jnp.arange(0, 7, dtype=jnp.int32)
    expected = np.stack([np.asarray(pick_row(int(k))) for k in ks])
    np.testing.assert_array_equal(jax.vmap(converted)(ks), expected)
    np.testing.assert_array_equal(jax.jit(jax.vmap(converted))(ks), expected)
    np.testing.assert_array_equal(jax.vmap(jax.jit(converted))(ks), expected)
    assert f"{7}x2x{N}" not in jax.jit(jax.vmap(jax.jit(converted))).lower(ks).as_text()


def test_an_integer_if_inside_a_differentiated_function():
    converted = autograph.convert(collatz)

    def scaled(x, n):
        return x * converted(n) + jnp.sin(x) * converted(jnp.int32(x * 10) + 1)

    def scaled_by_hand(x, n):
        return x * collatz(int(n)) + jnp.sin(x) * collatz(int(x * 10) + 1)

    x, n = 1.7, jnp.int32(27)
    expected = jax.grad(scaled_by_hand)(x, n)
    assert_close(jax.grad(scaled)(x, n), expected)
    assert_close(jax.jit(jax.grad(scaled))(x, n), expected)
    primal, tangent = jax.jvp(scaled, (x, n), (1.0, np.zeros((), jax.dtypes.float0)))
    assert_close(tangent, expected)
    assert_close(primal, scaled_by_hand(x, n))
    _, pullback = jax.vjp(scaled, x, n)
    assert_close(pullback(1.0)[0], expected)
    xs = jnp.linspace(0.5, 2.0, 4)
    assert_close(jax.vmap(jax.grad(scaled), in_axes=(0, None))(xs, n),
                 jnp.stack([jax.grad(scaled_by_hand)(float(v), n) for v in xs]))
    assert_close(jax.jacrev(scaled)(x, n), expected)


def _lowered_both_ways(fn, args, monkeypatch):
    """``fn``'s StableHLO with a staged if's custom_vmap lowered from its jaxpr as it
    is, and by JAX's own rule (which traces the jaxpr again)."""
    seen = []
    is_staged_if = batched_select._is_staged_if
    monkeypatch.setattr(batched_select, "_is_staged_if",
                        lambda call: seen.append(is_staged_if(call)) or seen[-1])
    direct = jax.jit(fn).lower(*args).as_text()
    if "custom_vmap_call" in primitive_counts(jax.make_jaxpr(fn)(*args)):
        assert any(seen)   # lowered by the direct rule
    monkeypatch.setattr(batched_select, "DIRECT_LOWERING", False)
    by_jax = jax.jit(fn).lower(*args).as_text()
    monkeypatch.setattr(batched_select, "DIRECT_LOWERING", True)
    return direct, by_jax


def test_a_staged_if_lowered_from_its_jaxpr_is_what_jax_lowers(monkeypatch):
    if not batched_select._LOWERS_DIRECTLY:
        pytest.skip("the installed JAX lowers custom_vmap calls its own way only")
    converted, rnn_converted = autograph.convert(walk_rows), autograph.convert(rnn)
    ns = jnp.arange(1, 9, dtype=jnp.int32)
    cases = [(converted, (jnp.int32(27),)), (jax.vmap(converted), (ns,)),
             (jax.grad(loss(rnn_converted)), (SEQ,)), (rnn_converted, (SEQ[0],))]
    for fn, args in cases:
        direct, by_jax = _lowered_both_ways(fn, args, monkeypatch)
        assert direct == by_jax
    for fn, args in (cases[0], cases[3]):
        assert "custom_vmap_call" in primitive_counts(jax.make_jaxpr(fn)(*args))
    np.testing.assert_array_equal(jax.jit(converted)(jnp.int32(27)), walk_rows(27))
    np.testing.assert_array_equal(jax.jit(jax.vmap(converted))(ns),
                                  np.stack([np.asarray(walk_rows(int(n))) for n in ns]))
