"""runtime/joined_numbers.py: arithmetic on a Python number whose type a staged
`if` (its condition traced) decided (`m = 3` on one path, `m = 1.5` on the other)
computes what Python computes, or is refused at the user's line."""

import contextlib
import io

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError


def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)
        jax.effects_barrier()
    return out.getvalue(), result


def assert_as_python(fn, *inputs):
    """Printed text and result of `fn` agree with the original: converted (Python
    values), to_graph, and inside the user's jax.jit."""
    for args in inputs:
        text, result = printed(fn, *args)
        for converted in (autograph.convert(fn), autograph.to_graph(fn),
                          jax.jit(autograph.convert(fn))):
            got_text, got = printed(converted, *args)
            assert got_text == text, (fn.__name__, args)
            assert jnp.asarray(got).dtype == jnp.asarray(result).dtype
            assert jnp.allclose(got, result)


def derived_values(x):
    if x > 0:
        m = 3
    else:
        m = 1.5
    print(m * 2, m, m + 1, -m, m // 2, abs(m), m / 2, m % 2, m ** 2)
    print(f"{m * 2}|{m - 1!r}|{m * 10:>6}", "%s %r" % (m * 2, m + 1), str(m * 2))  # noqa: UP031
    return x


def test_derived_values_print_as_python():
    # Python: `6 3 4 -3 1 3 1.5 1 9` where x > 0, `3.0 1.5 2.5 ...` where not.
    assert_as_python(derived_values, (1.0,), (-1.0,))


def stepped_and_chained(x):
    if x > 0:
        m = 2
    else:
        m = 0.5
    k = m * 3 + 1
    k += 1
    k *= m
    total = 0
    total += k
    print(k, total, (k - 1) // 2, -(+k))
    return x * k


def test_names_bound_from_such_a_number_and_augmented_assignments():
    assert_as_python(stepped_and_chained, (1.0,), (-1.0,))


def scaled(x):
    if x[0] > 0:
        scale = 1
    else:
        scale = 0.5
    y = x * scale
    z = scale * x + 1.0
    print(y.dtype, z.dtype)
    return y + z


def test_a_float_array_times_a_scale_stays_staged_and_equal():
    x = jnp.array([1.0, 2.0])
    assert_as_python(scaled, (x,), (-x,))
    jaxpr = str(jax.make_jaxpr(autograph.to_graph(scaled))(x))
    assert "cond" in jaxpr


def joined_twice(x):
    if x > 0:
        m = 2
    else:
        m = 0.5
    if x > 1:
        m = m + 1
    n = 4 if x > 2 else 0.25
    if x > 3:
        n = 7
    print(m, m * 2, m * n)
    return x


def test_a_later_staged_if_keeps_and_combines_the_types():
    assert_as_python(joined_twice, (0.0,), (1.5,), (2.5,), (4.0,))


def times_int_array(x, a):
    if x > 0:
        m = 3
    else:
        m = 1.5
    return m * a


def shifted(x):
    if x > 0:
        m = 3
    else:
        m = 1.5
    return m << 1


def powered(x):
    k = 0
    if x > 2:
        k = k - 2
    if x > 0:
        m = 3
    else:
        m = 1.5
    return m ** k


def large_int(x):
    if x > 0:
        m = 2**25 + 1
    else:
        m = 1.5
    return m


@pytest.mark.parametrize(("fn", "args", "line", "words"), [
    (times_int_array, (1.0, jnp.arange(3, dtype=jnp.int32)), 5, "int32 or float32"),
    (shifted, (1.0,), 5, "TypeError"),
    (large_int, (1.0,), 1, "cannot hold that int exactly"),
    (powered, (1.0,), 8, "exponent's sign"),
])
def test_refused_at_the_users_line(fn, args, line, words):
    # Python: `m * a` is int32 where x > 0 and float32 where not; `1.5 << 1` raises;
    # float32 would round 2**25 + 1 (the `if`'s line); `3 ** k` is an int or a float
    # by the sign of k.
    with pytest.raises(ConversionError, match=words) as caught:
        autograph.to_graph(fn)(*args)
    first = fn.__code__.co_firstlineno
    assert f"{__file__}:{first + line}" in str(caught.value)
    assert "one type on every path" in str(caught.value)


def test_an_int_array_is_still_refused_inside_the_users_jit():
    with pytest.raises(ConversionError, match="int32 or float32"):
        jax.jit(autograph.convert(times_int_array))(1.0, jnp.arange(3, dtype=jnp.int32))


def test_python_values_run_the_original():
    a = jnp.arange(3, dtype=jnp.int32)
    for x in (1.0, -1.0):
        assert autograph.convert(times_int_array)(x, a).dtype == times_int_array(x, a).dtype
    assert autograph.convert(large_int)(1.0) == 2**25 + 1


def helper(v):
    return v * 2


def handed_on(x, form):
    if x > 0:
        m = 3
    else:
        m = 1.5
    if form == 0:
        return helper(m)
    if form == 1:
        return jnp.full(2, m)
    return [m, 1]


@pytest.mark.parametrize("form", [0, 1, 2])
def test_handed_on_where_its_type_is_not_carried_is_refused(form):
    # Python: helper(3) is the int 6 (6.0 staged), jnp.full(2, 3) int32 (float32
    # staged), [3, 1] prints `[3, 1]` ([3.0, 1] staged).
    with pytest.raises(ConversionError, match="hands on a Python number") as caught:
        autograph.to_graph(handed_on, static_argnums=1)(1.0, form)
    line = handed_on.__code__.co_firstlineno + (6 if form == 0 else 8 if form == 1 else 9)
    assert f"{__file__}:{line}" in str(caught.value)


def read_in_a_nested_function(x):
    if x > 0:
        m = 3
    else:
        m = 1.5

    def show():
        print(m * 2, -m)

    show()
    print(round(m), float(m), m > 2)
    return helper(x * 2)


def test_nested_functions_and_readers_keep_pythons_types():
    assert_as_python(read_in_a_nested_function, (1.0,), (-1.0,))


def returns_it(x):
    if x > 0:
        m = 3
    else:
        m = 1.5
    return m * 2


def calls_it(x):
    return returns_it(x) + 1


def test_a_helper_returning_it_to_converted_code_is_refused():
    # Python: calls_it(1.0) is the int 7; the caller's `+` would give 7.0.
    with pytest.raises(ConversionError, match="hands on a Python number") as caught:
        autograph.to_graph(calls_it)(1.0)
    assert f"{__file__}:{returns_it.__code__.co_firstlineno + 5}" in str(caught.value)
    assert autograph.to_graph(returns_it)(1.0) == 6


def carried_by_a_loop(x, n):
    if x > 0:
        m = 3
    else:
        m = 1.5
    for _ in range(n):
        m = m * 2
    print(m)
    return x


def test_carried_on_by_a_staged_loop_it_is_refused_where_read():
    # Python prints `12` where x > 0; the staged loop's body saw a float32.
    with pytest.raises(ConversionError, match="carried on") as caught:
        autograph.to_graph(carried_by_a_loop)(1.0, 2)
    assert f"{__file__}:{carried_by_a_loop.__code__.co_firstlineno + 7}" in str(caught.value)
