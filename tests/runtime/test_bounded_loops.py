"""autograph/runtime/bounded_loops.py: a bounded while loop that costs the iterations it takes.

Every converted loop here is differentiated three ways and compared: against the
masked-scan form the runtime used before (``tests/bounded_reference.py``), against
finite differences, and across transformations (``grad``, ``jacfwd``, ``jacrev``,
``hessian``, ``vmap``, ``jit``). Cost is checked by structure: no part of the
program grows with the bound (the largest ``scan`` is a block, not the bound; the
reverse pass's memory stays flat).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.test_util import check_grads

import autograph
from autograph import set_loop_options, stack
from autograph.runtime import bounded_loops
from tests.bounded_reference import masked_scan_reference
from tests.differential import assert_close

# -- the loops -------------------------------------------------------------------------


def grow(x, w):
    """Stops when ``x`` passes 10: the trip count depends on the inputs."""
    while x < 10.0:
        set_loop_options(maximum_iterations=16)
        x = x * 1.3 + jnp.sin(w * x) * 0.5 + 0.2
    return x * w


def grow_checkpointed(x, w):
    while x < 10.0:
        set_loop_options(maximum_iterations=16, checkpoint=True)
        x = x * 1.3 + jnp.sin(w * x) * 0.5 + 0.2
    return x * w


def counted(x, n):
    """``n`` iterations (traced) of a vector update, at most 12."""
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=12)
        x = jnp.tanh(x) * 1.1 + 0.05 * i
        i += 1
    return jnp.sum(x * x)


def traced_range(x, n):
    for i in range(n):
        set_loop_options(maximum_iterations=9)
        x = jnp.sin(x) * 0.9 + x * 0.5 + i * 0.01
    return x


def nested(x, w):
    """A bounded loop inside a bounded loop, both stopping on their own."""
    outer = 0
    while outer < 4:
        set_loop_options(maximum_iterations=6)
        y = x
        while y < 3.0 + outer:
            set_loop_options(maximum_iterations=25)
            y = y * 1.25 + w
        x = x + jnp.sin(y) * 0.3
        outer += 1
    return x


def breaks(x, n):
    """A traced range with ``break``: the loop stops at the bound, the break, or ``n``."""
    total = 0.0
    for i in range(n):
        set_loop_options(maximum_iterations=15)
        total = total + jnp.sin(x * i)
        if total > 1.5:
            break
    return total


def returns(x):
    """A ``return`` inside a bounded while."""
    k = 0
    while k < 30:
        set_loop_options(maximum_iterations=30)
        x = x * 1.4 + 0.1
        if x > 5.0:
            return x * x
        k += 1
    return -x


def appends(x, n):
    """A list grown in a bounded while: its buffer is sized from the bound."""
    values = [x]
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=10)
        values.append(jnp.sin(values[-1]) + x * 0.5)
        i += 1
    return values[-1] * 2.0 + jnp.sum(stack(values))


def prints(x):
    k = 0
    while x < 5.0:
        set_loop_options(maximum_iterations=20)
        x = x * 2.0
        print("step", k)
        assert x > 0, "x stays positive"
        k += 1
    return x


def at_bound(x):
    """The condition never fails: the loop stops at its bound, 7 iterations."""
    while x > -1.0:
        set_loop_options(maximum_iterations=7)
        x = x * 0.9 + 0.1
    return x


def from_python_float(w, n):
    """A weak-typed start (a Python float) the body makes float32."""
    total = 0.0
    i = 0
    while i < n:
        set_loop_options(maximum_iterations=8)
        total = total * 0.5 + jnp.sin(w * (i + 1))
        i += 1
    return total


def inner_scan(x, xs):
    """A bounded while in the body of a loop over an array (one ``scan``)."""
    for v in xs:
        while x < v:
            set_loop_options(maximum_iterations=20)
            x = x * 1.5 + 0.25
        x = x - 0.5 * v
    return x


def hand_grow(x, w, trips):
    """``grow`` with its trip count known: a scan, the hand-written reference."""
    return lax.fori_loop(0, trips, lambda _, x: x * 1.3 + jnp.sin(w * x) * 0.5 + 0.2, x) * w


def reference(fn, transform, *args):
    """``transform(convert(fn))(*args)`` with bounded loops as masked scans."""
    with masked_scan_reference():
        return transform(autograph.convert(fn))(*args)


CASES = {
    "grow": (grow, (jnp.float32(0.7), jnp.float32(1.1))),
    "grow_zero_trips": (grow, (jnp.float32(12.0), jnp.float32(0.9))),
    "grow_checkpointed": (grow_checkpointed, (jnp.float32(0.7), jnp.float32(1.1))),
    "counted": (counted, (jnp.linspace(-1.0, 1.0, 5), jnp.int32(7))),
    "counted_to_the_bound": (counted, (jnp.linspace(-1.0, 1.0, 5), jnp.int32(12))),
    "counted_past_the_bound": (counted, (jnp.linspace(-1.0, 1.0, 5), jnp.int32(40))),
    "counted_zero_trips": (counted, (jnp.linspace(-1.0, 1.0, 5), jnp.int32(0))),
    "traced_range": (traced_range, (jnp.float32(0.3), jnp.int32(5))),
    "traced_range_past_the_bound": (traced_range, (jnp.float32(0.3), jnp.int32(20))),
    "nested": (nested, (jnp.float32(0.5), jnp.float32(0.4))),
    "breaks": (breaks, (jnp.float32(0.3), jnp.int32(12))),
    "breaks_early": (breaks, (jnp.float32(0.05), jnp.int32(12))),
    "returns": (returns, (jnp.float32(0.5),)),
    "returns_never": (returns, (jnp.float32(-0.9),)),
    "appends": (appends, (jnp.float32(0.3), jnp.int32(6))),
    "at_bound": (at_bound, (jnp.float32(0.5),)),
    "from_python_float": (from_python_float, (jnp.float32(0.8), jnp.int32(5))),
    "inner_scan": (inner_scan, (jnp.float32(0.3), jnp.array([1.0, 3.0, 2.0, 6.0]))),
}


def cases(*names):
    """Parameters for the named ``CASES`` (all of them when none is named)."""
    names = names or tuple(CASES)
    return pytest.mark.parametrize(("fn", "args"), [CASES[n] for n in names], ids=names)


def _float_args(args):
    return tuple(i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.floating))


# -- values ---------------------------------------------------------------------------


def _agree(fn, args, transform, rtol=2e-5, atol=1e-6):
    """``transform(convert(fn))`` equals the same with bounded loops as masked scans."""
    expected = reference(fn, transform, *args)
    assert_close(expected, transform(autograph.convert(fn))(*args), rtol=rtol, atol=atol)


@cases()
def test_values_equal_masked_scan(fn, args):
    _agree(fn, args, jax.jit)


@cases("grow", "counted_past_the_bound", "breaks", "appends")
def test_python_values_run_the_python_loop(fn, args):
    """Concrete arguments: the loop runs in Python and ignores the bound, as the
    original does."""
    _agree(fn, args, lambda f: f)


def test_stops_at_bound_and_at_zero_iterations():
    x = 0.5
    for _ in range(7):
        x = x * 0.9 + 0.1
    np.testing.assert_allclose(autograph.to_graph(at_bound)(jnp.float32(0.5)), x, rtol=1e-6)
    assert float(autograph.to_graph(grow)(jnp.float32(12.0), jnp.float32(2.0))) == 24.0


# -- gradients ------------------------------------------------------------------------


@cases()
def test_grad_equals_masked_scan(fn, args):
    argnums = _float_args(args)
    _agree(fn, args, lambda f: jax.jit(jax.grad(f, argnums)))


@cases("grow", "counted_past_the_bound")
def test_grad_without_jit(fn, args):
    _agree(fn, args, lambda f: jax.grad(f, _float_args(args)))


@cases("grow", "counted", "nested", "breaks", "appends", "inner_scan")
def test_forward_mode_equals_reverse_mode(fn, args):
    argnums = _float_args(args)
    expected = reference(fn, lambda f: jax.jit(jax.jacrev(f, argnums)), *args)
    assert_close(expected, jax.jit(jax.jacfwd(autograph.convert(fn), argnums))(*args),
                 rtol=2e-5, atol=1e-6)
    assert_close(expected, jax.jit(jax.jacrev(autograph.convert(fn), argnums))(*args),
                 rtol=2e-5, atol=1e-6)


@cases("grow", "counted", "breaks", "appends")
def test_grad_against_finite_differences(fn, args):
    argnums = _float_args(args)

    def of_floats(*floats):
        full = list(args)
        for i, value in zip(argnums, floats, strict=True):
            full[i] = value
        return autograph.convert(fn)(*full)

    check_grads(jax.jit(of_floats), [args[i] for i in argnums], order=1, modes=("rev", "fwd"),
                eps=1e-2, atol=2e-2, rtol=2e-2)


def test_grad_equals_hand_written_scan_of_the_trip_count():
    x, w = jnp.float32(0.7), jnp.float32(1.1)
    trips = 0
    value = 0.7
    while value < 10.0:
        value = value * 1.3 + np.sin(1.1 * value) * 0.5 + 0.2
        trips += 1
    expected = jax.grad(hand_grow, (0, 1))(x, w, trips)
    assert_close(expected, jax.grad(autograph.convert(grow), (0, 1))(x, w), rtol=1e-5)


SECOND_ORDER = {
    "hessian": jax.hessian,
    "reverse_over_reverse": lambda f: jax.jacrev(jax.jacrev(f)),
    "reverse_over_forward": lambda f: jax.jacrev(jax.jacfwd(f)),
    "forward_over_forward": lambda f: jax.jacfwd(jax.jacfwd(f)),
}


def _second_derivative(fn, args, second):
    x, rest = args[0], args[1:]

    def scalar(f):
        return lambda x: f(x, *rest)

    expected = reference(fn, lambda f: jax.jit(jax.hessian(scalar(f))), x)
    got = jax.jit(second(scalar(autograph.convert(fn))))(x)
    assert_close(expected, got, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("second", ["hessian", "reverse_over_reverse"])
def test_second_derivatives(second):
    _second_derivative(*CASES["grow"], SECOND_ORDER[second])


@pytest.mark.slow
@pytest.mark.parametrize("second", list(SECOND_ORDER))
@cases("nested", "traced_range", "counted")
def test_second_derivatives_slow(fn, args, second, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("second derivatives of every loop form run with -m slow")
    _second_derivative(fn, args, SECOND_ORDER[second])


def test_weights_closed_over_by_the_body():
    """The body reads traced weights of the enclosing function: their gradient
    accumulates over the iterations taken."""
    def loss(w):
        return autograph.convert(grow)(jnp.float32(0.7), w)

    with masked_scan_reference():
        expected = jax.grad(loss)(jnp.float32(1.1))
    assert_close(expected, jax.grad(loss)(jnp.float32(1.1)), rtol=1e-5)


# -- vmap: each example its own trip count ------------------------------------------


def test_vmap_keeps_per_example_trip_counts():
    xs = jnp.array([0.5, 3.0, 9.5, 11.0, -0.5])
    ws = jnp.array([1.0, 0.3, 2.0, 1.0, 0.7])
    converted = autograph.convert(grow)
    alone = jax.jit(converted)
    per_example = jnp.stack([alone(x, w) for x, w in zip(xs, ws, strict=True)])
    assert_close(per_example, jax.jit(jax.vmap(converted))(xs, ws), rtol=1e-5)
    with masked_scan_reference():
        expected = jax.vmap(jax.grad(autograph.convert(grow), (0, 1)))(xs, ws)
    assert_close(expected, jax.jit(jax.vmap(jax.grad(converted, (0, 1))))(xs, ws),
                 rtol=2e-5, atol=1e-6)
    summed = jax.grad(lambda xs, ws: jnp.sum(jax.vmap(converted)(xs, ws)), (0, 1))
    assert_close(expected, jax.jit(summed)(xs, ws), rtol=2e-5, atol=1e-6)
    jac = jax.jit(jax.jacfwd(jax.vmap(converted)))(xs, ws)
    assert_close(jnp.diag(expected[0]), jac, rtol=2e-5, atol=1e-6)


def test_vmap_of_traced_counts_and_nested_loops():
    ns = jnp.array([0, 3, 12, 7])
    x = jnp.linspace(-1.0, 1.0, 5)
    converted = autograph.convert(counted)
    with masked_scan_reference():
        expected = jax.vmap(jax.grad(autograph.convert(counted)), (None, 0))(x, ns)
    assert_close(expected, jax.jit(jax.vmap(jax.grad(converted), (None, 0)))(x, ns),
                 rtol=2e-5, atol=1e-6)
    xs = jnp.array([0.1, 0.5, 2.5])
    with masked_scan_reference():
        expected = jax.vmap(jax.grad(autograph.convert(nested)), (0, None))(xs, 0.4)
    got = jax.jit(jax.vmap(jax.grad(autograph.convert(nested)), (0, None)))(xs, 0.4)
    assert_close(expected, got, rtol=2e-5, atol=1e-6)


# -- the replayed form: stages and blocks -----------------------------------------------


def _replay_step(values):
    x, count = values
    return jnp.sin(x) * 1.1 + 0.3, count + 1


@pytest.mark.parametrize("bound", [1, 16, 17, 300])
def test_replay_runs_exactly_its_trips(bound):
    """Each step runs once for ``t < trips``, across stage and block boundaries;
    its gradient is that of the masked scan."""
    replayed = jax.jit(lambda x, trips: bounded_loops.replay(
        _replay_step, (x, jnp.int32(0)), trips, bound))

    def masked(x, trips):
        def step(carry, t):
            return lax.cond(t < trips, _replay_step, lambda v: v, carry), None
        return lax.scan(step, (x, jnp.int32(0)), jnp.arange(bound))[0]

    grad = jax.jit(jax.grad(lambda x, trips: replayed(x, trips)[0]))
    masked_grad = jax.jit(jax.grad(lambda x, trips: masked(x, trips)[0]))
    for trips in sorted({0, 1, bound // 2, max(bound - 1, 0), bound}):
        x, count = replayed(jnp.float32(0.5), jnp.int32(trips))
        assert int(count) == trips
        assert_close(masked(jnp.float32(0.5), trips)[0], x, rtol=1e-5)
        assert_close(masked_grad(jnp.float32(0.5), trips), grad(jnp.float32(0.5), trips),
                     rtol=1e-5)


def test_branching_factor_keeps_four_stages():
    for bound in (1, 10, 16 ** 4, 16 ** 4 + 1, 10 ** 7):
        base = bounded_loops.branching_factor(bound)
        assert base ** bounded_loops.STAGES >= bound
        assert base == bounded_loops.BASE or (base - 1) ** bounded_loops.STAGES < bound


# -- what it costs: nothing grows with the bound --------------------------------------


def bounded_by(bound):
    def iterate(x, n):
        i = 0
        while i < n:
            set_loop_options(maximum_iterations=bound)
            x = jnp.tanh(x) * 1.01 + 0.1
            i += 1
        return x
    return iterate


def _scan_lengths(jaxpr):
    lengths = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "scan":
            lengths.append(eqn.params["length"])
        for param in eqn.params.values():
            for inner in param if isinstance(param, (tuple, list)) else (param,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    lengths.extend(_scan_lengths(inner))
    return lengths


def test_forward_is_a_while_loop():
    x, n = jnp.ones(4), jnp.int32(3)
    jaxpr = jax.make_jaxpr(autograph.convert(bounded_by(10 ** 6)))(x, n).jaxpr
    assert _scan_lengths(jaxpr) == []
    assert "while" in str(jaxpr)


@pytest.mark.parametrize("bound", [10 ** 3, 10 ** 7])
def test_reverse_mode_scans_blocks_not_the_bound(bound):
    x, n = jnp.ones(4), jnp.int32(3)
    grad = jax.grad(lambda x, n: jnp.sum(autograph.convert(bounded_by(bound))(x, n)))
    lengths = _scan_lengths(jax.make_jaxpr(grad)(x, n).jaxpr)
    assert lengths and max(lengths) <= bounded_loops.branching_factor(bound) < bound ** 0.5


def _reverse_memory(bound, checkpoint=False):
    def iterate(x, n):
        i = 0
        while i < n:
            set_loop_options(maximum_iterations=bound, checkpoint=checkpoint)
            h = jnp.tanh(x)
            x = x + 0.1 * h * jnp.cos(h)
            i += 1
        return x

    grad = jax.jit(jax.grad(lambda x, n: jnp.sum(autograph.convert(iterate)(x, n))))
    compiled = grad.lower(jnp.ones(256), jnp.int32(5)).compile()
    return compiled.memory_analysis().temp_size_in_bytes


def test_reverse_pass_memory_does_not_follow_the_bound():
    small, large = _reverse_memory(10 ** 3), _reverse_memory(10 ** 6)
    # a masked scan of 10^6 steps stores 10^6 states of 1 KiB: a gigabyte
    assert large < 4 * small < 2 ** 22
    assert _reverse_memory(10 ** 6, checkpoint=True) < large


# -- composition -------------------------------------------------------------------


def test_prints_and_asserts_act_once_per_iteration_under_derivatives(capsys):
    converted = autograph.convert(prints)
    for fn in (jax.grad(converted), jax.jit(jax.grad(converted)),
               lambda x: jax.jvp(converted, (x,), (1.0,))):
        jax.block_until_ready(fn(jnp.float32(0.7)))
        jax.effects_barrier()
        assert capsys.readouterr().out == "step 0\nstep 1\nstep 2\n"


def test_jax_checkpoint_around_the_function():
    args = (jnp.float32(0.7), jnp.float32(1.1))
    expected = reference(grow, lambda f: jax.grad(f, (0, 1)), *args)
    got = jax.jit(jax.grad(jax.checkpoint(autograph.convert(grow)), (0, 1)))(*args)
    assert_close(expected, got, rtol=2e-5, atol=1e-6)


def test_body_that_changes_type_is_refused_at_the_loop():
    def bad(x):
        k = 0
        while x < 3.0:
            set_loop_options(maximum_iterations=5)
            x = jnp.stack([x, x])
            k += 1
        return x

    with pytest.raises(Exception, match="changes type|identical types|shape"):
        jax.jit(autograph.convert(bad))(jnp.float32(1.0))


# -- loops over integers only: a plain while_loop ------------------------------------


def steps_until(x, limit):
    """An integer loop whose trip count depends on a float it closes over."""
    k, total = 0, 0
    while k * 0.5 < x:
        set_loop_options(maximum_iterations=limit)
        total = total + k * k
        k += 1
    return k, total


def _primitives(jaxpr):
    names, todo = set(), [jaxpr]
    while todo:
        for eqn in todo.pop().eqns:
            names.add(eqn.primitive.name)
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        todo.append(inner)
    return names


@pytest.mark.parametrize("x", [0.0, 2.2, 100.0])
def test_integer_loop_is_a_plain_while_with_the_bound(x):
    converted = autograph.convert(steps_until)
    jaxpr = jax.make_jaxpr(lambda x: converted(x, 7))(jnp.float32(x)).jaxpr
    assert "while" in _primitives(jaxpr) and "custom_jvp_call" not in _primitives(jaxpr)
    expected = steps_until(x, 7) if x < 10 else (7, sum(k * k for k in range(7)))
    got = jax.jit(converted, static_argnums=1)(jnp.float32(x), 7)
    assert tuple(map(int, got)) == tuple(expected)


def test_integer_loop_differentiates_to_zero_and_batches():
    converted = autograph.convert(steps_until)

    def scaled(x):
        k, total = converted(x, 7)
        return x * k + total

    xs = jnp.array([0.0, 1.2, 2.6, 50.0], jnp.float32)
    # The loop's integer outputs carry no tangent: d/dx (x * k + total) is k.
    assert_close(jax.vmap(jax.grad(scaled))(xs), jnp.array([0, 3, 6, 7], jnp.float32))
    assert_close(jax.jit(jax.vmap(jax.grad(scaled)))(xs), jnp.array([0, 3, 6, 7], jnp.float32))
    assert_close(jax.jvp(scaled, (jnp.float32(1.2),), (jnp.float32(1.0),))[1], 3.0)
    ks, totals = jax.vmap(lambda x: converted(x, 7))(xs)
    assert ks.tolist() == [0, 3, 6, 7] and totals.tolist() == [0, 5, 55, 91]


def test_weak_integer_start_that_becomes_a_float_keeps_the_differentiable_form():
    def run(x):
        return bounded_loops.bounded_while(
            lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] + x), (0, 0), 10)[1]

    jaxpr = jax.make_jaxpr(run)(jnp.float32(1.5)).jaxpr
    assert "custom_jvp_call" in _primitives(jaxpr)
    assert_close(run(jnp.float32(1.5)), 4.5)
    assert_close(jax.grad(run)(jnp.float32(1.5)), 3.0)
