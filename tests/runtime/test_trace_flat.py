"""trace_context.trace_flat, the tracing a staged if's branches and a while loop's
test probe go through: JAX's own tracing where the installed JAX has the internals
it uses, ``jax.make_jaxpr`` where not (forced here). Both ways: the same jaxpr as
``jax.make_jaxpr``, and the same loops and conditionals decided and staged."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.runtime import trace_context
from benchmarks.first_call import primitive_counts
from tests.differential import assert_close
from tests.runtime.test_vmap import collatz


@pytest.fixture(params=["internals", "make_jaxpr"])
def tracing(request, monkeypatch):
    if request.param == "make_jaxpr":
        monkeypatch.setattr(trace_context, "TRACING", None)
    else:
        internals = trace_context._checked_internals()
        if internals is None:   # jax 0.11 hoists constants into the jaxpr's inputs
            pytest.skip("the installed JAX's tracing internals differ: make_jaxpr is used")
        monkeypatch.setattr(trace_context, "TRACING", internals)
    return request.param


def test_internals_that_hoist_constants_into_inputs_are_not_used(monkeypatch):
    """Where tracing makes a closed-over array an input of the jaxpr (jax 0.11), the
    check on first use chooses jax.make_jaxpr, which keeps it a constant."""
    wrap, _, debug = trace_context._tracing_internals()

    def hoisting(fun, in_avals):
        closed = jax.make_jaxpr(lambda c, a: [a * c])(jnp.ones(2), jnp.ones(2))
        return closed.jaxpr, closed.out_avals, []

    monkeypatch.setattr(trace_context, "_tracing_internals", lambda: (wrap, hoisting, debug))
    assert trace_context._checked_internals() is None


def python_test_traced_state(x, n):
    # the test reads Python ints only: a Python loop (unrolled) over traced x
    i = 0
    while i < 3:
        x = x * 2.0 + n
        i += 1
    return x


def closure_test(x, limit):
    # the test reads a traced value from the enclosing function only
    def run(x):
        steps = 0
        while steps < limit:
            steps += 1
        return x * steps
    return autograph.convert(run)(x)


def weak_branch(x, n):
    if n > 0:
        y = 0.5
        z = [x, x + 1]
    else:
        y = x.sum()
        z = [x - 1, x]
    return y, z


def test_trace_flat_is_make_jaxpr(tracing):
    w = jnp.arange(3.0)

    def outer(x):
        jaxpr, consts, avals = trace_context.trace_flat(
            lambda a, b: [jnp.sin(a) * w + b, a > 0], [jax.typeof(x), jax.typeof(1.0)])
        expected = jax.make_jaxpr(lambda a, b: [jnp.sin(a) * w + b, a > 0])(x, 1.0)
        assert [str(v.aval) for v in jaxpr.invars] == [str(a) for a in expected.in_avals]
        assert [str(a) for a in avals] == [str(a) for a in expected.out_avals]
        assert [e.primitive.name for e in jaxpr.eqns] == [
            e.primitive.name for e in expected.jaxpr.eqns]
        assert len(consts) == len(jaxpr.constvars)
        return jax.core.eval_jaxpr(jaxpr, consts, x, 1.0)[0]

    x = jnp.array([0.5, -1.0, 2.0])
    assert_close(jnp.sin(x) * w + 1.0, jax.jit(outer)(x))


def test_loops_and_conditionals_both_ways(tracing):
    converted = autograph.convert(collatz)
    assert int(jax.jit(converted)(jnp.int32(27))) == collatz(27)
    ns = jnp.arange(1, 12, dtype=jnp.int32)
    np.testing.assert_array_equal(jax.vmap(converted)(ns), [collatz(int(n)) for n in ns])
    counts = primitive_counts(jax.make_jaxpr(converted)(jnp.int32(27)))
    assert counts["while"] == 1 and counts["cond"] == 1

    converted = autograph.convert(python_test_traced_state)
    x = jnp.arange(3.0)
    assert_close(python_test_traced_state(x, 1.0), jax.jit(converted)(x, 1.0))
    assert "while" not in primitive_counts(jax.make_jaxpr(converted)(x, 1.0))

    assert_close(np.arange(3.0) * 4, jax.jit(closure_test)(jnp.arange(3.0), 4))
    assert "while" in primitive_counts(jax.make_jaxpr(closure_test)(x, 4))

    converted = autograph.convert(weak_branch)
    for n in (-1, 2):
        y, z = jax.jit(converted)(x, n)
        y_, z_ = weak_branch(x, n)
        assert_close(y_, y)
        assert_close(np.stack(z_), np.stack(z))
        assert isinstance(z, list)
    assert jax.jit(converted)(x, 2)[0].dtype == jnp.float32


def grown_bounded(x, n):
    values = [x]
    i = 0
    while i < n:
        autograph.set_loop_options(maximum_iterations=6)
        values.append(jnp.sin(values[-1]) + x * 0.5)
        i += 1
    return values[-1] * 2.0 + jnp.sum(autograph.stack(values))


def counted_list(first, n):
    out = [first]
    i = 0
    while i < n:
        autograph.set_loop_options(maximum_iterations=9)
        out.append(out[-1] * 2 + i)
        i += 1
    return out[-1], len(out)


def test_bounded_loops_and_their_list_probe_both_ways(tracing):
    # The list probe (lists.stage_lists) and a bounded loop's jaxprs go through
    # trace_flat; an integer bounded loop is lax.while_loop of the body itself.
    converted = autograph.convert(grown_bounded)
    x = jnp.float32(0.3)
    for n in (0, 2, 5):
        assert_close(grown_bounded(x, n), jax.jit(converted)(x, jnp.int32(n)))
        assert_close(jax.grad(grown_bounded)(x, n), jax.grad(converted)(x, jnp.int32(n)))
    counts = primitive_counts(jax.make_jaxpr(converted)(x, jnp.int32(2)))
    assert counts["custom_jvp_call"] == 1 and counts["while"] == 1
    converted = autograph.convert(counted_list)
    for n in (0, 1, 6):
        last, length = jax.jit(converted)(jnp.int32(3), jnp.int32(n))
        assert (int(last), int(length)) == counted_list(3, n)
    counts = primitive_counts(jax.make_jaxpr(converted)(jnp.int32(3), jnp.int32(2)))
    assert counts["while"] == 1 and "custom_jvp_call" not in counts
