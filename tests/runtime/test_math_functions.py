"""math.* on traced values: the jnp counterpart with math's result kind; Python values
keep math's exact results and exceptions."""

import math
from math import floor, hypot, sqrt

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.converters import builtin_functions
from autograph.errors import ConversionError
from autograph.runtime import math_functions
from tests.differential import check

# (name, arguments) where math gives a value
VALID = [
    ("sqrt", (2.0,)), ("exp", (0.5,)), ("expm1", (0.1,)), ("log", (3.0,)), ("log", (8.0, 2.0)),
    ("log2", (10.0,)), ("log10", (1000.0,)), ("log1p", (0.5,)), ("sin", (1.0,)),
    ("cos", (1.0,)), ("tan", (0.5,)), ("asin", (0.5,)), ("acos", (0.5,)), ("atan", (2.0,)),
    ("sinh", (1.0,)), ("cosh", (1.0,)), ("tanh", (1.0,)), ("asinh", (1.0,)),
    ("acosh", (2.0,)), ("atanh", (0.5,)), ("erf", (0.5,)), ("erfc", (0.5,)),
    ("lgamma", (4.5,)), ("gamma", (4.5,)), ("degrees", (1.0,)), ("radians", (90.0,)),
    ("fabs", (-2.5,)), ("floor", (2.7,)), ("floor", (-2.5,)), ("ceil", (2.1,)),
    ("trunc", (-2.7,)), ("isnan", (1.0,)), ("isinf", (1.0,)), ("isfinite", (1.0,)),
    ("isqrt", (99,)), ("isqrt", (100,)), ("isqrt", (2_147_395_599,)), ("pow", (2.0, 0.5)),
    ("pow", (-2.0, 3.0)), ("hypot", (3.0, 4.0)), ("hypot", (1.0, 2.0, 2.0)),
    ("dist", ((0.0, 0.0), (3.0, 4.0))), ("isclose", (1.0, 1.0 + 1e-10)),
    ("gcd", (12, 18)), ("lcm", (4, 6)), ("copysign", (2.0, -1.0)), ("fmod", (7.0, 3.0)),
    ("atan2", (1.0, -1.0)), ("ldexp", (0.75, 3)), ("sqrt", (4,)), ("log", (1,)),
]
# (name, arguments) where math raises ValueError
INVALID = [
    ("sqrt", (-1.0,)), ("log", (0.0,)), ("log", (-1.0,)), ("log2", (-2.0,)),
    ("log10", (0.0,)), ("log1p", (-1.0,)), ("asin", (2.0,)), ("acos", (-1.5,)),
    ("acosh", (0.5,)), ("atanh", (1.0,)), ("isqrt", (-4,)), ("pow", (-8.0, 1 / 3)),
    ("pow", (0.0, -1.0)), ("fmod", (1.0, 0.0)), ("lgamma", (-2.0,)),
]


def call_math(name, args):
    return getattr(math, name)(*args)


def test_the_converter_and_the_runtime_share_one_table():
    assert set(builtin_functions.MATH) >= set(math_functions.NAMES)
    assert {n for n in builtin_functions.MATH if hasattr(math, n)} == set(math_functions.NAMES)


@pytest.mark.parametrize("name, args", VALID + INVALID, ids=lambda v: str(v))
def test_python_values_are_maths_exact_results_and_exceptions(name, args):
    operator = getattr(math_functions, f"math_{name}")
    try:
        expected = call_math(name, args)
    except ValueError as error:
        with pytest.raises(ValueError) as raised:
            operator(*args)
        assert str(raised.value) == str(error)
        return
    got = operator(*args)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("name, args", VALID, ids=lambda v: str(v))
def test_traced_values_give_the_jnp_counterpart(name, args):
    operator = getattr(math_functions, f"math_{name}")
    expected = call_math(name, args)
    traced = [jnp.asarray(a) for a in args]
    got = jax.jit(operator)(*traced)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-6)
    kind = type(expected)
    dtype = np.asarray(got).dtype
    assert {bool: np.bool_, int: np.integer, float: np.floating}[kind] in dtype.type.__mro__


@pytest.mark.parametrize("name, args", INVALID, ids=lambda v: str(v))
def test_traced_values_outside_the_domain_raise_maths_error(name, args):
    operator = getattr(math_functions, f"math_{name}")
    traced = [jnp.asarray(a) for a in args]
    with pytest.raises(ValueError) as raised:
        autograph.to_graph(lambda *a: operator(*a))(*traced)
    with pytest.raises(ValueError) as python:
        call_math(name, args)
    assert str(raised.value) == str(python.value)


def is_prime(n):
    if n < 2:
        return False
    if n < 4:
        return True
    if n % 2 == 0 or n % 3 == 0:
        return False
    for i in range(5, int(math.sqrt(n) + 1), 6):
        if n % i == 0 or n % (i + 2) == 0:
            return False
    return True


def physics(x, y):
    return sqrt(x * x + y * y) + hypot(x, y) + floor(x) + math.log(y, 2) + math.radians(x)


def domain_checked(x):
    return math.sqrt(x - 1.0)


def factorial_of(n):
    return math.factorial(n)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 25, 29, 91, 97, 7919])
def test_a_prime_test_over_sqrt_compiles(n):
    check(is_prime, n)


def test_math_functions_imported_by_name_convert_too():
    check(physics, 3.0, 4.0)
    code = autograph.to_code(physics)
    assert "ag__.math_sqrt(" in code and "ag__.math_hypot(" in code
    assert "ag__.math_floor(" in code and "ag__.math_log(" in code


def test_a_domain_error_names_the_users_line():
    with pytest.raises(ValueError, match="math domain error") as raised:
        autograph.to_graph(domain_checked)(jnp.float32(0.5))
    assert f"{__file__}:{domain_checked.__code__.co_firstlineno + 1}" in "".join(
        raised.value.__notes__)
    assert float(autograph.to_graph(domain_checked)(jnp.float32(5.0))) == 2.0
    dropped = autograph.to_graph(autograph.convert(domain_checked, asserts="drop"))
    assert np.isnan(float(dropped(jnp.float32(0.5))))


def test_factorial_of_a_traced_value_is_refused_at_the_users_line():
    assert autograph.convert(factorial_of)(5) == 120
    with pytest.raises(ConversionError) as raised:
        autograph.to_graph(factorial_of)(jnp.int32(5))
    assert raised.value.lineno == factorial_of.__code__.co_firstlineno + 1


def test_a_local_named_like_a_math_function_is_left_alone():
    def local_sqrt(sqrt, x):
        return sqrt(x)
    assert "math_sqrt" not in autograph.to_code(local_sqrt)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_nan_or_infinity_made_an_int_raises_maths_error(name, value):
    """(out13: the cast alone gave 0 or the integer's limit, with no error.)"""
    operator = getattr(math_functions, f"math_{name}")
    with pytest.raises((ValueError, OverflowError)) as python:
        call_math(name, (value,))
    with pytest.raises(type(python.value)) as raised:
        autograph.to_graph(lambda a: operator(a))(jnp.float32(value))
    assert str(raised.value) == str(python.value)


def scaled_by_python_numbers(x, half, small):
    # Python's float(), int(), round() and math give Python numbers, which take an
    # array's dtype: float16 and int8 stay so
    return (float(x) * half, math.sqrt(x) * half, sqrt(x) * half, int(x) * small,
            round(x) * small, floor(x) * small, math.isqrt(int(x)) * small)


@pytest.mark.parametrize("x", [2, 7.5])
def test_results_meet_arrays_as_python_numbers(x):
    half, small = jnp.ones(3, jnp.float16), jnp.ones(3, jnp.int8)
    expected = scaled_by_python_numbers(x, half, small)
    for run in (autograph.to_graph(scaled_by_python_numbers),
                jax.jit(autograph.convert(scaled_by_python_numbers))):
        got = run(x, half, small)
        assert [a.dtype for a in got] == [a.dtype for a in expected]
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-3)


def rounded(x):
    return round(x), round(x, 1)


def test_round_of_an_array_gives_an_array_of_a_python_number_a_python_number():
    got = autograph.to_graph(rounded)(jnp.float32(2.75))
    assert [(a.dtype, a.weak_type) for a in got] == [(jnp.int32, False), (jnp.float32, False)]
    got = autograph.to_graph(rounded)(2.75)
    assert [(a.dtype, a.weak_type) for a in got] == [(jnp.int32, True), (jnp.float32, True)]
    np.testing.assert_allclose([float(a) for a in got], rounded(2.75), rtol=1e-6)


def log_or_floor(x):
    try:
        y = math.log(x)
    except ValueError:
        y = -math.inf
    return y


def int_or_minus_one(x):
    try:
        n = int(x)
    except (TypeError, ValueError):
        n = -1
    return n


def log_with_another_except(x):
    try:
        y = math.log(x)
    except KeyError:
        y = 0.0
    return y


@pytest.mark.parametrize("fn, bad, line", [(log_or_floor, -1.0, 2),
                                           (int_or_minus_one, math.nan, 2)])
def test_a_checked_call_inside_a_try_that_catches_its_error_is_refused(fn, bad, line):
    """Python's ``except ValueError`` catches ``math.log(-1)``'s (``int(nan)``'s)
    error; traced, the error would be a check of the compiled program, which no
    ``except`` sees: a ConversionError at the call, not an error where Python
    gives a value."""
    assert autograph.convert(fn)(bad) == fn(bad)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(ConversionError, match="no `except` sees") as raised:
            compiled(jnp.float32(2.0))
        assert raised.value.filename == __file__
        assert raised.value.lineno == fn.__code__.co_firstlineno + line


def test_a_checked_call_inside_a_try_that_cannot_catch_its_error_stays_a_check():
    assert float(autograph.to_graph(log_with_another_except)(jnp.float32(2.0))) == \
        pytest.approx(math.log(2.0))
    with pytest.raises(ValueError, match="math domain error"):
        log_with_another_except(-1.0)
    with pytest.raises(ValueError, match="math domain error"):
        autograph.to_graph(log_with_another_except)(jnp.float32(-1.0))
