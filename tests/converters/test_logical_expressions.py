"""`and`, `or`, `not` and chained comparisons: Python semantics, or jnp.logical_* when traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from tests.differential import check

CALLS = []


def both_positive(x, y):
    return x > 0 and y > 0


def either_positive(x, y):
    return x > 0 or y > 0


def negate(x):
    return not x > 0


def in_range(x):
    return 0 <= x < 10


def three_way(x, y, z):
    return x < y and y < z or z == 0


def first_truthy(a, b):
    return a or b


def first_falsy(a, b, c):
    return a and b and c


def guarded(xs, i):
    return i < len(xs) and xs[i] > 0


def count_positive_prefix(x, n):
    i = 0
    while i < n and x[i] > 0:
        i += 1
    return i


def recorded(x):
    CALLS.append(x)
    return x


def chain_with_call(x):
    return 0 < recorded(x) < 10


def chain_short_circuit(x):
    return 5 < x < recorded(x)


def branch_on_and(x, y):
    if x > 0 and not y > 0:
        z = x - y
    else:
        z = x + y
    return z


def default_is_none(x, y=None):
    if y is None:
        y = x
    return x * y


def and_with_effect(x):
    return x > 0 and print("checked", x) is None


def test_and_or_not_differential():
    for x, y in [(1.0, 2.0), (-1.0, 2.0), (1.0, -2.0), (-1.0, -2.0)]:
        check(both_positive, x, y, vmap=[1.0, -1.0, 0.0])
        check(either_positive, x, y, vmap=[1.0, -1.0, 0.0])
    check(negate, 3.0, vmap=[1.0, -1.0])
    check(negate, -3.0)
    check(branch_on_and, 2.0, -1.0, vmap=[2.0, -2.0, 0.0])
    check(branch_on_and, 2.0, 1.0)


def test_chained_comparisons_differential():
    for x in [-1, 0, 5, 10, 11]:
        check(in_range, x, vmap=[-1, 0, 5, 10, 11])
    check(three_way, 1, 2, 3)
    check(three_way, 3, 2, 0)
    check(three_way, 3, 2, 1)


def test_python_operands_keep_python_semantics():
    convert = autograph.convert
    assert convert(first_truthy)(0, "x") == "x"
    assert convert(first_truthy)([], None) is None
    assert convert(first_truthy)(3, "x") == 3
    assert convert(first_falsy)(1, "", 3) == ""
    assert convert(first_falsy)(1, 2, 3) == 3
    assert convert(negate)(0) is True
    # The right operand is not evaluated when the left decides: no IndexError.
    assert convert(guarded)([1, 2], 2) is False
    assert convert(guarded)([1, 2], 1) is True


def test_traced_boolean_arrays_combine_elementwise():
    out = jax.jit(autograph.convert(both_positive))(jnp.array([1.0, -1.0, 2.0]),
                                                    jnp.array([1.0, 1.0, -2.0]))
    np.testing.assert_array_equal(out, [True, False, False])


def scaled(scale, x):
    return x * (scale or 1.0)


def default_count(n, k):
    return (n and k) + (n or k)


def mixed_chain(a, b, c):
    return a or b and c or 0.5


def falsy_python_then_traced(flag, x):
    return flag or x or -1


def test_traced_operand_gives_pythons_value():
    # Issue 16.1: `x * (scale or 1.0)` with a traced scale gave x * True.
    for scale in [2.0, 0.0, -1.5]:
        check(scaled, scale, 3.0, vmap=[0.0, 2.0, -1.0])
    for n, k in [(0, 3), (2, 0), (2, 3), (0, 0)]:
        check(default_count, n, k, vmap=[0, 1, 4])
    for a, b, c in [(0, 1.5, 0), (0, 1.5, 2), (3, 0.0, 1), (0, 0.0, 0), (True, 0, 2)]:
        check(mixed_chain, a, b, c, vmap=[0, 2, -1])
    out = jax.jit(autograph.convert(first_truthy))(jnp.float32(0.0), jnp.float32(2.0))
    assert out.dtype == jnp.float32 and float(out) == 2.0


def test_python_operand_before_traced_short_circuits():
    f = jax.jit(autograph.convert(falsy_python_then_traced), static_argnums=0)
    assert int(f(5, jnp.int32(0))) == 5             # Python's 5 decides
    assert int(f(0, jnp.int32(0))) == -1
    assert int(f(0, jnp.int32(7))) == 7
    assert f(0, jnp.int32(0)).dtype == jnp.int32


def or_none(x):
    return x or None


def or_longer(x):
    return x or jnp.ones(3)


def test_operand_that_cannot_be_selected_is_refused_at_the_line():
    line = or_none.__code__.co_firstlineno + 1
    with pytest.raises(autograph.ConversionError, match="NoneType|None") as info:
        autograph.to_graph(or_none)(jnp.float32(1.0))
    assert f"{__file__}:{line}" in str(info.value)
    assert autograph.convert(or_none)(0.0) is None
    with pytest.raises(autograph.ConversionError, match="shape") as info:
        autograph.to_graph(or_longer)(jnp.float32(1.0))
    assert f"{__file__}:{or_longer.__code__.co_firstlineno + 1}" in str(info.value)


def test_mixed_python_and_traced_operands():
    f = jax.jit(autograph.convert(first_falsy), static_argnums=0)
    assert f(0, jnp.float32(1.0), jnp.float32(1.0)) == 0   # Python 0 decides
    assert bool(f(1, jnp.float32(1.0), jnp.float32(2.0)))
    assert not bool(f(1, jnp.float32(0.0), jnp.float32(2.0)))


def test_while_condition_with_and_short_circuits_the_index():
    check(count_positive_prefix, jnp.array([1.0, 2.0, -1.0, 3.0]), 4)
    # i == n: Python never evaluates x[i]; staged, JAX clamps the index and the
    # `and` discards it.
    check(count_positive_prefix, jnp.array([1.0, 2.0, 3.0]), 3)
    assert autograph.convert(count_positive_prefix)([1.0, 2.0, 3.0], 3) == 3


def test_chain_evaluates_middle_operand_once():
    CALLS.clear()
    assert autograph.convert(chain_with_call)(5) is True
    assert CALLS == [5]
    CALLS.clear()
    assert autograph.convert(chain_short_circuit)(3) is False
    assert CALLS == []        # 5 < 3 is False: the last operand is never evaluated
    CALLS.clear()
    out = autograph.to_graph(chain_with_call)(jnp.int32(12))
    assert not bool(out) and len(CALLS) == 1
    check(chain_with_call, 5, vmap=[-1, 5, 12])


def test_is_none_is_not_staged():
    assert "y is None" in autograph.to_code(default_is_none)
    check(default_is_none, 3.0)
    assert float(autograph.to_graph(default_is_none)(3.0, 2.0)) == 6.0


def test_right_operand_with_effects_runs_only_when_needed(capfd):
    f = autograph.to_graph(and_with_effect)
    assert not bool(f(jnp.float32(-1.0)))
    jax.effects_barrier()
    assert "checked" not in capfd.readouterr().out
    assert bool(f(jnp.float32(2.0)))
    jax.effects_barrier()
    assert capfd.readouterr().out == "checked 2.0\n"


def test_generated_code():
    assert autograph.to_code(three_way) == (
        "def three_way(x, y, z):\n"
        "    return ag__.or_(lambda: ag__.and_(lambda: x < y, lambda: y < z), "
        "lambda: z == 0)\n")
    assert autograph.to_code(chain_with_call) == (
        "def chain_with_call(x):\n"
        "    return ag__.compare_chain(0, '<', lambda: ag__.converted_call(recorded)(x), '<', "
        "lambda: 10)\n")
    assert autograph.to_code(negate) == "def negate(x):\n    return ag__.not_(x > 0)\n"


def test_right_operand_with_effects_under_vmap(capfd):
    # Batched, both sides are computed, but the print acts only for the example whose
    # left operand does not decide, as Python's short-circuit has it.
    for batched in (jax.vmap(autograph.convert(and_with_effect)),
                    jax.vmap(jax.jit(autograph.convert(and_with_effect)))):
        out = batched(jnp.array([-1.0, 2.0]))
        jax.effects_barrier()
        np.testing.assert_array_equal(out, [False, True])
        assert capfd.readouterr().out.count("checked") == 1


def and_pair(x):
    return x > 0 and (x, x + 1)


def test_grad_through_branch_on_and():
    g = jax.grad(autograph.convert(branch_on_and))(2.0, -1.0)
    assert float(g) == 1.0
    g = jax.jit(jax.grad(autograph.convert(branch_on_and), argnums=1))(2.0, -1.0)
    assert float(g) == -1.0


def test_right_operand_pytree():
    assert autograph.convert(and_pair)(2) == (2, 3)
    # Traced, `and` is a select between arrays: a tuple operand is refused at the
    # user's line (and no tracer leaks from tracing the operand).
    with pytest.raises(autograph.ConversionError, match="tuple") as info:
        autograph.to_graph(and_pair)(jnp.float32(2.0))
    assert f"{__file__}:{and_pair.__code__.co_firstlineno + 1}" in str(info.value)
