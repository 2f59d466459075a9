"""if/elif/else, while and for: original vs converted (Python) vs compiled vs vmap."""

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph import ConversionError
from autograph.runtime import unrolling
from tests.differential import check

# --- the corpus: plain eager-style functions -------------------------------------------


def if_else(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y


def if_elif_else(x):
    if x > 2:
        y = x - 2
    elif x > 0:
        y = x * 10
    else:
        y = x + 100
    return y


def if_without_else(x):
    y = x
    if x > 1:
        y = y * 3
    return y


def if_python_scalars_join(x):
    if x > 0:
        y = 1
    else:
        y = 2.5
    return y


def nested_if(x, z):
    if x > 0:
        if z > 0:
            r = x + z
        else:
            r = x - z
    else:
        r = z * 2
    return r


def if_dead_one_sided(x):
    if x > 0:
        t = x + 1
        y = t * 2
    else:
        y = x
    return y


def if_modifies_several(x):
    a, b, c = x, x + 1, 0
    if x > 0:
        a = a * 2
        c = 1
    else:
        b = b * 3
    return a, b, c


def if_no_state(x):
    if x > 0:
        pass
    return x


def huber_loss(a, delta=1.0):
    if abs(a) <= delta:
        loss = a * a / 2
    else:
        loss = delta * (abs(a) - delta / 2)
    return loss


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def nested_if_while(n):
    if n >= 0:
        while n < 5:
            n += 1
    return n


def while_sum(n):
    i = 0
    total = 0
    while i < n:
        total += i * i
        i += 1
    return total


def while_else(n):
    i = 0
    while i < n:
        i += 2
    else:
        i = i * 10
    return i


def while_weak_promotion(n):
    x = 0
    i = 0
    while i < n:
        x = x + 0.5
        i += 1
    return x


def for_static_range(x):
    s = 0.0
    for i in range(10):
        s = s + x * i
    return s


def for_static_negative_step(x):
    s = x
    for i in range(10, 0, -3):
        s = s * 2 + i
    return s


def for_static_empty(x):
    s = x
    for i in range(5, 0):
        s = s + i
    return s


def for_traced_bound(n):
    s = 0
    for i in range(n):
        s += i
    return s


def for_traced_start_stop(n):
    s = 0
    for i in range(n, 2 * n + 3):
        s += i
    return s


def for_traced_step(n):
    s = 0
    for i in range(0, 20, n):
        s += i
    return s


def for_traced_negative_step(n):
    s = 0
    for i in range(n, -7, -2):
        s = s * 2 + i
    return s


def for_array(xs):
    total = 0.0
    for x in xs:
        total = total + x * x
    return total


def for_matrix_rows(m):
    acc = jnp.zeros(m.shape[1])
    for row in m:
        acc = acc + row
    return acc


def for_python_list(x):
    for c in [1, 2, 3]:
        x = x * c + 1
    return x


def for_tuple_target(x):
    for a, b in [(1, 2), (3, 4)]:
        x = x * a + b
    return x


def for_target_used_after(x):
    s = x
    for i in range(4):
        s = s + i
    return s, i


def for_first_defined_inside(x):
    for i in range(3):
        t = x * i
    return t


def row_sum(x):
    z = jnp.zeros(x.shape[1])
    for i in range(x.shape[0]):
        z += x[i]
    return z


def nested_loops(n):
    total = 0
    for i in range(4):
        j = 0
        while j < n:
            if (i + j) % 2 == 0:
                total += i * j
            j += 1
    return total


def loops_in_branches(x, n):
    if x > 0:
        for i in range(n):
            x = x + i
    else:
        while x < 10:
            x = x + 3
    return x


def ternary(x):
    return x if x > 0 else -x


def index_as_python_int(x):
    weights = [1.0, 2.0, 3.0]
    s = x
    for i in range(3):
        s = s * weights[i]
    return s


class Pair(NamedTuple):
    a: jax.Array
    b: jax.Array


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Accumulator:
    total: jax.Array
    count: jax.Array


def pytree_state(x):
    pair = Pair(x, x * 2)
    stats = {"hi": x, "lo": x}
    acc = Accumulator(total=x * 0, count=x * 0)
    i = 0
    while i < 3:
        pair = Pair(pair.b, pair.a + pair.b)
        stats = {"hi": stats["hi"] + 1, "lo": stats["lo"] - 1}
        acc = Accumulator(total=acc.total + pair.a, count=acc.count + 1)
        i += 1
    if x > 1:
        pair = Pair(pair.a * 10, pair.b)
    return pair, stats, acc


def dict_item_update(x):
    d = {"v": x}
    for i in range(3):
        d["v"] = d["v"] + i
    return d


# --- the differential tests -----------------------------------------------------------

SCALAR_CASES = [
    (if_else, [3.0, -2.0]),
    (if_elif_else, [3.0, 1.0, -1.0]),
    (if_without_else, [2.0, 0.5]),
    (if_python_scalars_join, [1.0, -1.0]),
    (if_dead_one_sided, [1.0, -1.0]),
    (if_modifies_several, [1.0, -1.0]),
    (if_no_state, [1.0, -1.0]),
    (huber_loss, [0.5, 3.0, -3.0]),
    (nested_if_while, [0, 3, 7, -2]),
    (while_sum, [0, 1, 10]),
    (while_else, [0, 5]),
    (while_weak_promotion, [0, 3]),
    (for_static_range, [1.5, -2.0]),
    (for_static_negative_step, [1.0]),
    (for_static_empty, [1.0]),
    (for_traced_bound, [0, 1, 9, -3]),
    (for_traced_start_stop, [0, 4, -5]),
    (for_traced_step, [1, 3, 7]),
    (for_traced_negative_step, [5, -10, 0]),
    (for_python_list, [2.0]),
    (for_tuple_target, [2.0]),
    (for_target_used_after, [1.0]),
    (for_first_defined_inside, [2.0]),
    (nested_loops, [0, 3]),
    (ternary, [2.0, -2.0]),
    (index_as_python_int, [2.0]),
    (pytree_state, [0.5, 2.0]),
    (dict_item_update, [1.0]),
]


@pytest.mark.parametrize(
    "fn,arg", [(fn, a) for fn, args in SCALAR_CASES for a in args],
    ids=lambda v: getattr(v, "__name__", repr(v)))
def test_scalar_corpus(fn, arg):
    check(fn, arg)


@pytest.mark.parametrize("fn,args", [(fn, args) for fn, args in SCALAR_CASES],
                         ids=lambda v: getattr(v, "__name__", None))
def test_scalar_corpus_under_vmap(fn, args):
    check(fn, args[0], vmap=args)


def test_collatz():
    for n in [1, 6, 27]:
        assert check(collatz, n, vmap=[1, 6, 27, 97]) == {1: 0, 6: 8, 27: 111}[n]


def test_nested_if_two_args():
    for x, z in [(1.0, 2.0), (1.0, -2.0), (-1.0, 5.0)]:
        check(nested_if, x, z)


def test_loops_in_branches():
    for x, n in [(1, 4), (-5, 4)]:
        check(loops_in_branches, x, n)


def test_for_over_arrays():
    xs = jnp.arange(5.0)
    check(for_array, xs)
    check(for_matrix_rows, jnp.arange(12.0).reshape(4, 3))
    check(row_sum, jnp.arange(50.0).reshape(10, 5))


def test_for_over_numpy_array_is_python_iteration():
    xs = np.arange(4.0)
    assert autograph.convert(for_array)(xs) == for_array(xs)


# --- semantics --------------------------------------------------------------------------


def test_python_inputs_keep_python_types():
    assert type(autograph.convert(collatz)(27)) is int
    assert type(autograph.convert(if_python_scalars_join)(-1)) is float
    assert autograph.convert(for_target_used_after)(1) == (7, 3)


def test_python_exceptions_are_the_originals():
    with pytest.raises(TypeError) as original:
        if_else("a")
    with pytest.raises(TypeError) as converted:
        autograph.convert(if_else)("a")
    assert str(converted.value) == str(original.value)


def test_weak_type_promotion_gives_float():
    out = autograph.to_graph(while_weak_promotion)(3)
    assert out.dtype == jnp.float32 and float(out) == 1.5
    out = autograph.to_graph(if_python_scalars_join)(-1.0)
    assert out.dtype == jnp.float32 and float(out) == 2.5


def _count_loops(jaxpr):
    return sum(e.primitive.name in ("scan", "while") for e in jaxpr.eqns)


@pytest.mark.parametrize("n", [10, 1000])
def test_static_range_compiles_to_one_loop(n):
    def accumulate(x):
        s = x
        for i in range(n):
            s = s * 0.5 + i
        return s

    import types

    # The function is a closure over n: define it from this file's source.
    fn = types.FunctionType(accumulate.__code__, globals(), "accumulate", None,
                            accumulate.__closure__)
    jaxpr = jax.make_jaxpr(autograph.convert(fn))(1.0).jaxpr
    assert _count_loops(jaxpr) == 1
    assert len(jaxpr.eqns) == 1


def test_while_on_traced_condition_is_one_while_loop():
    jaxpr = jax.make_jaxpr(autograph.convert(collatz))(27).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["while"]


def test_if_on_traced_condition_is_one_cond():
    jaxpr = jax.make_jaxpr(autograph.convert(if_else))(1.0).jaxpr
    # A cond, wrapped so that vmap batches it as a select (autograph/runtime/batched_select.py).
    assert [e.primitive.name for e in jaxpr.eqns][-1] == "custom_jvp_call"
    assert str(jaxpr).count("cond[") == 1


def test_python_condition_is_not_staged():
    def pick(x, flag):
        if flag:
            y = x + 1
        else:
            y = x - 1
        return y

    import types
    fn = types.FunctionType(pick.__code__, globals(), "pick")
    jaxpr = jax.make_jaxpr(autograph.convert(fn), static_argnums=1)(1.0, True).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["add"]


def test_grad_through_static_range_loop():
    grad = jax.grad(autograph.convert(for_static_range))(2.0)
    assert float(grad) == pytest.approx(45.0)


# --- errors -----------------------------------------------------------------------------


def branch_type_mismatch(x):
    if x > 0:
        y = jnp.zeros(3)
    else:
        y = jnp.zeros(2)
    return y


def branch_dtype_mismatch(x):
    if x > 0:
        y = jnp.int32(1)
    else:
        y = jnp.float32(1)
    return y


def one_branch_only(x):
    if x > 0:
        y = x
    return y


def loop_shape_change(n):
    v = jnp.zeros(1)
    i = 0
    while i < n:
        v = jnp.concatenate([v, v])
        i += 1
    return v


def first_defined_in_while(n):
    i = 0
    while i < n:
        t = i * 2
        i += 1
    return t


def string_in_staged_branch(x):
    if x > 0:
        mode = "up"
    else:
        mode = "down"
    return mode


def array_condition(x):
    if x > 0:
        x = x + 1
    return x


def _line(fn, offset):
    return f"{__file__}:{fn.__code__.co_firstlineno + offset}"


def test_branch_shape_mismatch_names_variable_line_and_types():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(branch_type_mismatch)(1.0)
    message = str(info.value)
    assert _line(branch_type_mismatch, 1) in message
    assert "'y'" in message and "float32[3]" in message and "float32[2]" in message
    assert isinstance(info.value, TypeError)


def test_branch_strong_dtype_mismatch_is_an_error():
    with pytest.raises(ConversionError, match="int32.*float32"):
        autograph.to_graph(branch_dtype_mismatch)(1.0)


def test_variable_defined_in_one_branch_only():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(one_branch_only)(1.0)
    assert "'y'" in str(info.value) and "one branch" in str(info.value)
    assert _line(one_branch_only, 1) in str(info.value)
    # Python semantics are unchanged: an unbound local raises as in the original.
    assert autograph.convert(one_branch_only)(1.0) == 1.0
    with pytest.raises(UnboundLocalError, match="'y'"):
        autograph.convert(one_branch_only)(-1.0)


def test_loop_carry_shape_change_names_variable_and_types():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(loop_shape_change)(3)
    message = str(info.value)
    assert "'v'" in message and "float32[1]" in message and "float32[2]" in message
    assert _line(loop_shape_change, 3) in message
    assert autograph.convert(loop_shape_change)(3).shape == (8,)


def test_variable_first_defined_in_staged_loop():
    with pytest.raises(ConversionError) as info:
        autograph.to_graph(first_defined_in_while)(3)
    assert "'t'" in str(info.value) and _line(first_defined_in_while, 2) in str(info.value)
    assert autograph.convert(first_defined_in_while)(3) == 4
    with pytest.raises(UnboundLocalError):
        autograph.convert(first_defined_in_while)(0)


def test_non_array_in_staged_branch():
    with pytest.raises(ConversionError, match="'mode' holds a str"):
        autograph.to_graph(string_in_staged_branch)(1.0)
    assert autograph.convert(string_in_staged_branch)(1.0) == "up"


def test_array_condition_is_a_clear_error():
    with pytest.raises(ConversionError, match=r"shape \(3,\).*jnp.all"):
        autograph.to_graph(array_condition)(jnp.ones(3))


def test_errors_inside_user_jit_too():
    with pytest.raises(ConversionError, match="'y'"):
        jax.jit(autograph.convert(branch_type_mismatch))(1.0)


def for_shape_change(x):
    v = x
    for _ in range(3):
        v = jnp.concatenate([v, v])
    return v


def for_array_dtype_change(xs):
    acc = jnp.int32(0)
    for x in xs:
        acc = acc + x
    return acc


def test_static_loops_whose_carry_changes_type_run_unrolled_as_under_jit():
    # Staging is an optimisation: jax.jit of the original unrolls these loops, and
    # so does the converted function, naming the variable in the loops log.
    with unrolling.count_decisions() as seen:
        check(for_shape_change, np.ones(1, np.float32))
        check(for_array_dtype_change, np.ones(3, np.float32))
    assert seen.counts["unrolled"] >= 2 and not seen.counts["staged"]
    assert any("'v' changes from float32[1] to float32[2]" in r for r in seen.reasons)
    assert any("'acc' changes from int32[] to float32[]" in r for r in seen.reasons)


def nested_function_declares_global(n):
    x = 0

    def reset():
        global x
        x = 5

    for i in range(n):
        x += i
    return x


def nested_function_declares_nonlocal(n):
    total = 0

    def outer():
        count = 0

        def bump():
            nonlocal count
            count += 1
        return bump

    for i in range(n):
        total += i
    return total + (outer() is None)


def test_a_nested_functions_declarations_stay_its_own():
    # `global x` in a nested function is not the enclosing function's: its loop
    # keeps carrying its own local `x`.
    check(nested_function_declares_global, 4)
    check(nested_function_declares_nonlocal, 4)


def class_in_a_loop_reads_the_loop_variable(a, n):
    x = a
    for i in range(n):
        class Step:
            size = i + 1
        x = x + Step.size
    return x


def test_a_class_body_reads_where_the_class_is_defined():
    # Unlike a function's, a class body runs at once: `i` is read there, not later,
    # so the staged loop needs no value of `i` before it.
    check(class_in_a_loop_reads_the_loop_variable, 1, 3)
