"""A staged loop never wraps a Python int around 32 bits: where a counter the loop
steps from its index and itself alone leaves int32, the loop runs unrolled, as
``jax.jit`` of the original does (runtime/int_overflow.py).

Staged, ``fact *= i`` was carried as a weak int32 and wrapped silently: ``x * fact``
gave a wrong number where Python (and ``jax.jit`` of the original) raise JAX's
OverflowError, and a hash kept below 2**31 by ``%`` came out different.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.errors import StagingTypeError
from autograph.runtime import unrolling
from tests.differential import assert_close, assert_same_python


def hash_below_a_prime(x, n):
    h = 7
    for i in range(n):
        h = (h * 1000003 + i) % 2147483647
        x = x + h % 3
    return x, h


def binomial(x, n):
    c = 1
    for k in range(n):
        c = c * (n - k) // (k + 1)
        x = x + 0.5
    return x, c


def rows_times_a_growing_factor(xs):
    f = 1
    total = jnp.zeros(xs.shape[1:])
    for i, row in enumerate(xs, start=1):
        f = f * i * 100
        total = total + row % 7 + f % 5
    return total


CASES = [
    (hash_below_a_prime, (jnp.float32(0.0), 40)),
    (binomial, (jnp.float32(1.0), 34)),
    (rows_times_a_growing_factor, (jnp.arange(12.0).reshape(6, 2),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_compiled_it_gives_what_jit_of_the_original_gives(fn, args):
    static = tuple(k for k, a in enumerate(args) if isinstance(a, int))
    expected = jax.jit(fn, static_argnums=static)(*args)
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(fn, static_argnums=static)(*args)
    assert_close(expected, got)
    assert_close(expected, jax.jit(autograph.convert(fn), static_argnums=static)(*args))
    assert seen.counts["unrolled"] == 1
    assert any("outside 32-bit integers" in reason for reason in seen.reasons)


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_with_python_values_it_is_the_original(fn, args):
    args = tuple(np.asarray(a) if not isinstance(a, int) else a for a in args)
    assert_same_python(fn(*args), autograph.convert(fn)(*args))


def factorial_times(x, n):
    fact = 1
    for i in range(1, n + 1):
        fact *= i
        x = x + 1.0
    return x * fact


def test_a_python_int_too_large_for_jax_raises_what_jit_of_the_original_raises():
    with pytest.raises(OverflowError):
        jax.jit(factorial_times, static_argnums=1)(jnp.float32(1.0), 20)
    with pytest.raises(OverflowError):
        autograph.to_graph(factorial_times, static_argnums=1)(jnp.float32(1.0), 20)
    # Small enough, it stays staged and equals the original.
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(factorial_times, static_argnums=1)(jnp.float32(1.0), 10)
    assert seen.counts == {"staged": 1}
    assert got == factorial_times(jnp.float32(1.0), 10)


def counter_and_sum(x, n):
    count = 0
    total = 0
    for i in range(n):
        count += 1
        total += i * i
        x = x * 0.5 + total
    return x, count, total


def test_counters_inside_int32_stay_staged():
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(counter_and_sum, static_argnums=1)(jnp.float32(1.0), 1000)
    assert seen.counts == {"staged": 1}
    assert_close(jax.jit(counter_and_sum, static_argnums=1)(jnp.float32(1.0), 1000), got)


def grows_past_int32_in_an_inner_loop(x):
    h = 1
    for _ in range(3):
        for j in range(12):
            h = h * 7 + j
        x = x + h % 11
    return x


def test_a_nested_loop_unrolls_where_its_counter_leaves_int32():
    x = jnp.float32(0.0)
    assert_close(jax.jit(grows_past_int32_in_an_inner_loop)(x),
                 autograph.to_graph(grows_past_int32_in_an_inner_loop)(x))


def test_under_vmap_and_grad_it_is_the_original():
    xs = jnp.arange(3.0)
    np.testing.assert_allclose(
        jax.vmap(lambda x: autograph.convert(hash_below_a_prime)(x, 30)[0])(xs),
        jax.vmap(lambda x: hash_below_a_prime(x, 30)[0])(xs))
    np.testing.assert_allclose(
        jax.grad(lambda x: autograph.convert(binomial)(x, 34)[0])(jnp.float32(2.0)),
        jax.grad(lambda x: binomial(x, 34)[0])(jnp.float32(2.0)))


def test_a_traced_trip_count_is_checked_where_the_int_would_leave_int32():
    # Python's h is exact for any n; staged, the loop cannot unroll (n is traced):
    # it runs while h stays in range and raises Python's OverflowError past that,
    # naming the loop's line.
    run = autograph.to_graph(hash_below_a_prime)
    x = jnp.float32(0.0)
    assert_close(hash_below_a_prime(x, 1), run(x, 1))
    with pytest.raises(OverflowError, match=r"test_int_overflow.py:\d+: .*iteration 1"):
        run(x, 40)
    with pytest.raises(Exception, match="outside 32-bit integers"):
        jax.jit(autograph.convert(hash_below_a_prime))(x, 5)
    # Counters that stay in range need no check.
    assert_close(counter_and_sum(x, 100), autograph.to_graph(counter_and_sum)(x, 100))


def pick_by_count(x, layers):
    count = 0
    for i in range(6):
        x = jnp.tanh(x) * 0.5
        if i % 2 == 0:
            count += 1
    return layers[count] * x, count


def test_a_counter_leaves_a_staged_loop_as_a_python_int():
    # Under jax.jit of the original the loop runs as Python and count is a Python
    # int: it can index a Python list. Staged, the counter's values are known while
    # tracing, and it leaves the loop as that Python int.
    layers = [jnp.float32(k) for k in range(5)]
    x = jnp.float32(0.3)
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(pick_by_count)(x, layers)
    assert seen.counts == {"staged": 1}
    assert_close(jax.jit(pick_by_count)(x, layers), got)
    value, count = autograph.convert(pick_by_count)(np.float32(0.3), layers)
    assert type(count) is int and count == 3


def uint8_after_a_python_start(x, n):
    y = -1
    for i in range(n):
        y = x + i
    return y


def test_a_python_start_a_traced_trip_count_could_keep_must_fit_the_loop_dtype():
    # n = 0: Python's y is -1; the staged loop's start would be uint8(-1) = 255.
    with pytest.raises(StagingTypeError, match=r"test_int_overflow.py:\d+: .y. "
                       r".*may run no iteration"):
        autograph.to_graph(uint8_after_a_python_start)(jnp.uint8(5), jnp.int32(0))
    # A static trip count runs as Python does.
    assert autograph.to_graph(uint8_after_a_python_start, static_argnums=1)(
        jnp.uint8(5), 0) == -1


def factorial_with_a_first_binding(x, n):
    fact = 1
    for i in range(1, n + 1):
        y = x * i          # first bound in the loop: the loop's probe runs
        fact = fact * i % 1000000007
    return y + fact % 7, fact


def test_a_probed_loop_is_judged_from_its_probe():
    x = jnp.float32(1.5)
    expected = jax.jit(factorial_with_a_first_binding, static_argnums=1)(x, 30)
    with unrolling.count_decisions() as seen:
        got = autograph.to_graph(factorial_with_a_first_binding, static_argnums=1)(x, 30)
    assert_close(expected, got)
    assert seen.counts["unrolled"] == 1
    # In range, it stays staged and fact leaves the loop as a Python int.
    value, fact = autograph.convert(factorial_with_a_first_binding)(np.float32(1.5), 5)
    assert type(fact) is int and fact == 120


LOG = []


def set_first(ws, value):
    ws[0] = value


def counted_with_helpers(x):
    window = [0, 1]
    c = 0
    for i in range(3):
        set_first(window, (window[0] + i + x) % 97)   # changes a list the loop carries
        LOG.append(i)                                 # and one it only reaches
        c += 1
    return window[0] + window[1], c


def test_a_loop_whose_body_changes_python_objects_is_not_probed_for_counters():
    # A probe of the body (for its counters) would leave its tracers in the list a
    # helper changes and in the global list: such a loop is not probed for them.
    LOG.clear()
    x = jnp.int32(5)
    got = jax.jit(autograph.convert(counted_with_helpers))(x)
    LOG.clear()
    assert_close(counted_with_helpers(5), got)
    LOG.clear()
    autograph.convert(counted_with_helpers)(5)
    assert LOG == [0, 1, 2]


def two_hashes(x):
    a, b, acc = 0, 0, x
    for i in range(60):
        a = (a * 31 + i) % 1000003   # the same jitted remainder's jaxpr, called twice
        b = (b * 17 + i) % 65521
        acc = acc + x * i            # (a traced value: the loop is staged)
    return acc + a, b


def test_counters_through_a_shared_call_jaxpr_keep_python_values():
    # The counters' steps run as one generated function (int_overflow._compiled):
    # two calls of one jaxpr give each call's variables their own values.
    got = jax.jit(autograph.convert(two_hashes))(jnp.int32(1))
    assert_close(two_hashes(1), got)
    out = autograph.convert(two_hashes)(1)
    assert out == two_hashes(1) and type(out[1]) is int


def test_a_counter_leaving_int32_is_found_past_the_fast_path():
    def grows(x):
        p, acc = 1, x
        for _ in range(40):
            p = p * 3   # 3**20 > 2**31: found by the steps one by one
            acc = acc + x
        return acc + p % 7

    got = jax.jit(autograph.convert(grows))(jnp.int32(2))
    assert int(got) == grows(2)


def quartering_until_small(x):
    n = 1
    while x > 0.001:
        x = x / 2
        n = n * 4
    return x, n % 7


def test_a_traced_while_checks_the_iteration_its_counters_would_leave_int32_in():
    # The counters alone name the iteration (n = 4**k): the staged body checks for
    # the one whose n * 4 leaves int32, and raises OverflowError when it is reached.
    run = autograph.to_graph(quartering_until_small)
    assert_close(quartering_until_small(1.0), run(jnp.float32(1.0)))   # 10 iterations
    with pytest.raises(OverflowError, match=r"test_int_overflow.py:\d+: .*iteration 15"):
        run(jnp.float32(1e30))


def counting_from_near_the_top(x):
    n = 2 ** 31 - 5
    while x < 10:
        n += 1   # only stepped by a literal, but from a start it leaves int32 from
        x += 1
    return n % 7


def test_a_traced_while_stepping_a_counter_by_a_literal_past_int32_raises():
    run = autograph.to_graph(counting_from_near_the_top)
    assert int(run(jnp.int32(8))) == counting_from_near_the_top(8)   # two iterations
    with pytest.raises(OverflowError, match=r"test_int_overflow.py:\d+: .*iteration 4"):
        run(jnp.int32(0))


def stepped_counters(x):
    count, k = 0, 2 ** 31 - 3
    for i in range(5):
        x = x + i
        count += 2   # ends as 10 with no probe (analysis/literal_steps.py)
        k += 1       # leaves int32: judged on the probe, the loop runs unrolled
    return x * count, k


def test_a_static_loop_hands_on_counters_stepped_by_literals_as_python_ints():
    out = autograph.convert(stepped_counters)(1)
    assert out == stepped_counters(1)
    got = jax.jit(lambda x: autograph.convert(stepped_counters)(x)[1] - 2 ** 31)(
        jnp.int32(1))
    assert int(got) == stepped_counters(1)[1] - 2 ** 31

    def steps_only(x):
        count, k = 0, 2 ** 31 - 3
        for i in range(5):
            x = x + i
            count += 2
        return x, count, k
    traced = jax.jit(autograph.convert(lambda x: steps_only(x)[1] * 1.5))
    assert float(traced(jnp.float32(1.0))) == 15.0


def counting_events_from_near_the_top(x):
    n = 2 ** 31 - 3
    while x < 10:
        if x > 3:   # a traced condition: n reads traced data, no value is worked out
            n += 1
        x += 1
    return n % 7


def counting_positives_from_near_the_top(xs):
    n = 2 ** 31 - 3
    for i in range(6):
        if xs[i] > 0:
            n += 1
    return n % 7


def counting_positives_in_a_scan(xs):
    n = 2 ** 31 - 3
    for v in xs:
        if v > 0:
            n += 1
    return n % 7


@pytest.mark.parametrize("fn, few, many", [
    (counting_events_from_near_the_top, 8, 0),
    (counting_positives_from_near_the_top, [1, 1, 0, 0, 0, 0], [1] * 6),
    (counting_positives_in_a_scan, [1, 1, 0, 0, 0, 0], [1] * 6),
])
def test_an_int_stepped_under_a_traced_condition_never_wraps(fn, few, many):
    # Staged, n is an int32 (it reads traced data): the body checks after each
    # iteration that its literal steps did not wrap it (loops._checked_steps).
    run = autograph.to_graph(fn)
    assert int(run(jnp.asarray(few))) == fn(few if isinstance(few, int) else np.array(few))
    with pytest.raises(OverflowError, match=r"test_int_overflow.py:\d+: the Python int 'n'"):
        run(jnp.asarray(many))
    jitted = jax.jit(autograph.convert(fn))   # (the user's jit: JAX's runtime error)
    with pytest.raises(jax.errors.JaxRuntimeError, match="'n' this loop steps goes outside"):
        jitted(jnp.asarray(many))


def test_a_small_counter_takes_no_wrap_check():
    # From 0 by 1 it cannot leave int32 in the iterations judged: no extra equations.
    def count_events(x):
        n = 0
        while x < 10:
            if x > 3:
                n += 1
            x += 1
        return n
    text = str(jax.make_jaxpr(autograph.convert(count_events))(jnp.int32(0)))
    assert "callback" not in text and "check" not in text
    assert int(autograph.to_graph(count_events)(jnp.int32(0))) == count_events(0)


def counting_across_epochs(xs):
    k = 2 ** 31 - 8
    for _epoch in range(2):
        for i in range(4):
            if xs[i] > 0:
                k += 1   # entering the inner loop k is traced: its value is unknown there
    return k % 7


def test_an_int_an_outer_loop_made_traced_is_checked_in_the_inner_loop():
    run = autograph.to_graph(counting_across_epochs)
    few = [1, 1, 1, 0]   # 6 steps: 2**31 - 2
    assert int(run(jnp.asarray(few))) == counting_across_epochs(np.array(few))
    with pytest.raises(OverflowError, match=r"test_int_overflow.py:\d+: the Python int 'k'"):
        run(jnp.asarray([1, 1, 1, 1]))   # 8 steps: 2**31


def counted_and_indexed(x):
    count = 0
    total = jnp.zeros((), x.dtype)
    for i in range(30):
        total = total + x[i] * count   # (the index normalised: a select on i < 0)
        count += 1
    return total, count


@pytest.mark.parametrize("fn, args", [
    (two_hashes, (jnp.int32(1),)),
    (counted_and_indexed, (jnp.arange(30.0),)),
    (pick_by_count, (jnp.float32(1.0), jnp.arange(6.0).reshape(3, 2))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_all_iterations_at_once_judge_as_one_at_a_time(monkeypatch, fn, args):
    # int_overflow._compiled_loop runs every iteration in one generated function;
    # what it finds is what the steps run one iteration at a time find.
    from autograph.runtime import int_overflow

    calls, real = [], int_overflow.count

    def both(traced, given, items, trips):
        at_once = real(traced, given, items, trips)
        with monkeypatch.context() as m:
            m.setattr(int_overflow._Program, "run_loop", lambda *a: None)
            one_by_one = real(traced, given, items, trips)
        calls.append((at_once.final, one_by_one.final, at_once.overflow, one_by_one.overflow))
        return at_once

    ran = []
    real_loop = int_overflow._Program.run_loop

    def counted_loop(*a):
        out = real_loop(*a)
        ran.append(out is not None)
        return out

    monkeypatch.setattr(int_overflow, "count", both)
    monkeypatch.setattr(int_overflow._Program, "run_loop", counted_loop)
    got = jax.jit(autograph.convert(fn))(*args)
    assert_close(jax.jit(fn)(*args), got)
    assert calls and ran and all(ran)
    for final, final_one, overflow, overflow_one in calls:
        assert final == final_one and final is not None
        assert overflow is None and overflow_one is None
