"""while_stmt, for_stmt and range_ called directly, as generated code calls them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autograph.runtime import TracedRange, for_stmt, range_, while_stmt


def test_python_while_is_python():
    seen = []

    def body(i):
        seen.append(i)
        return i + 1

    assert while_stmt(lambda i: i < 3, body, (0,)) == 3
    assert seen == [0, 1, 2]


def test_while_switches_to_staging_when_condition_becomes_traced():
    def f(n):
        return while_stmt(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0))

    i, s = jax.jit(f)(5)
    assert (int(i), int(s)) == (5, 10)
    assert [e.primitive.name for e in jax.make_jaxpr(f)(5).jaxpr.eqns] == ["while"]


def test_no_stray_condition_outside_the_staged_loop():
    def f(n):
        return while_stmt(lambda n: n > 1, lambda n: n // 2, (n,))

    assert [e.primitive.name for e in jax.make_jaxpr(f)(8).jaxpr.eqns] == ["while"]


def test_range_dispatch():
    assert range_(3) == range(3)
    assert isinstance(jax.jit(lambda n: (range_(n).__class__ is TracedRange, n)[1])(2),
                      jax.Array)
    with pytest.raises(ValueError, match="must not be zero"):
        range_(0, 5, 0)


@pytest.mark.parametrize("args", [(7,), (2, 9), (9, 2, -2), (0, 10, 3), (5, 1)])
def test_traced_range_trip_counts(args):
    def f(*bounds):
        return for_stmt(range_(*bounds), lambda i, s: s + i, (0,))

    assert int(jax.jit(f)(*args)) == sum(range(*args))


def test_static_range_reading_a_traced_variable_is_staged_whole():
    def f(x):
        return for_stmt(range(6), lambda i, s: s + x * i, (0,))

    assert float(jax.jit(f)(1.0)) == 0 + 1 + 2 + 3 + 4 + 5
    loops = [e for e in jax.make_jaxpr(f)(1.0).jaxpr.eqns if e.primitive.name == "scan"]
    # The state starts as the Python int 0, but the body reads the traced x: staged
    # from the first iteration, no iteration peeled off in Python.
    assert len(loops) == 1 and loops[0].params["length"] == 6


def test_static_range_runs_python_until_its_state_is_traced():
    def f(x):
        get = lambda: x   # noqa: E731 - a function's closure: its tracer is not seen up front
        return for_stmt(range(6), lambda i, s: s + get() * i, (0,))

    assert float(jax.jit(f)(1.0)) == 15.0
    loops = [e for e in jax.make_jaxpr(f)(1.0).jaxpr.eqns if e.primitive.name == "scan"]
    # Iteration 0 runs in Python and makes the state traced; the other 5 are staged.
    assert len(loops) == 1 and loops[0].params["length"] == 5


def test_static_range_body_needing_a_python_index_runs_unrolled():
    weights = [1.0, 2.0, 3.0]

    def f(x):
        return for_stmt(range(3), lambda i, s: s * weights[i], (x,))

    assert float(jax.jit(f)(1.0)) == 6.0
    assert not [e for e in jax.make_jaxpr(f)(1.0).jaxpr.eqns if e.primitive.name == "scan"]


def test_for_over_python_iterables_is_python_iteration():
    out = for_stmt((x for x in [1, 2, 3]), lambda x, acc: acc + [x], ([],))
    assert out == [1, 2, 3]


def test_scan_over_traced_array():
    f = jax.jit(lambda xs: for_stmt(xs, lambda x, s: s + x, (0.0,)))
    assert float(f(jnp.arange(4.0))) == 6.0
    np.testing.assert_array_equal(
        jax.jit(lambda m: for_stmt(m, lambda row, s: s + row, (jnp.zeros(2),)))(
            jnp.ones((3, 2))), [3.0, 3.0])


def test_bounded_while_stops_at_the_bound():
    def f(x):
        return while_stmt(lambda x: x < 100.0, lambda x: x * 2, (x,), maximum_iterations=3)

    assert float(jax.jit(f)(1.0)) == 8.0
    assert float(jax.jit(f)(60.0)) == 120.0
    assert float(jax.grad(f)(1.0)) == 8.0


def _counting():
    k = 0
    while True:
        yield k
        k += 1


def adds_a_generators_steps(x):
    steps = _counting()
    for _ in range(3):
        x = x + next(steps)   # one step per iteration: the loop runs unrolled
    return x, next(steps)


def test_a_static_loop_taking_steps_of_a_generator_runs_unrolled():
    import autograph

    assert adds_a_generators_steps(1.0) == (4.0, 3)
    assert autograph.convert(adds_a_generators_steps)(1.0) == (4.0, 3)
    for run in (autograph.to_graph(adds_a_generators_steps),
                jax.jit(autograph.convert(adds_a_generators_steps))):
        x, after = run(jnp.float32(1.0))
        assert (float(x), int(after)) == (4.0, 3)
    assert float(jax.jit(lambda x: adds_a_generators_steps(x)[0])(1.0)) == 4.0
