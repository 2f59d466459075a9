"""Loops run as Python (issue 21.1): what decides each iteration never walks the state.

A converted loop called with Python values is Python's loop; under a JAX trace, a
loop that stays Python looks into its state once, on entry. A state whose pytree
flattening is counted shows it: the count does not grow with the iterations.
"""

import jax
import jax.numpy as jnp
import pytest
from jax import tree_util

import autograph
from tests.differential import assert_same_python, check


@tree_util.register_pytree_node_class
class Counted:
    """A pytree node that counts how often JAX flattens it."""

    flattened = 0

    def __init__(self, items):
        self.items = items

    def tree_flatten(self):
        Counted.flattened += 1
        return (self.items,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Counted and self.items == other.items


def fill_for(box, n):
    for i in range(n):
        box.items.append(i)
        box = box
    return box


def fill_while(box, n):
    i = 0
    while i < n:
        box.items.append(i)
        box = box
        i += 1
    return box


def sum_to(n):
    total = 0
    for i in range(n):
        total += i
    k = 0
    while k < n:
        total -= k
        k += 1
    return total


@pytest.mark.parametrize("fn", [fill_for, fill_while])
def test_python_mode_never_flattens_the_state(fn):
    Counted.flattened = 0
    out = autograph.convert(fn)(Counted([]), 50)
    assert out == fn(Counted([]), 50)
    assert Counted.flattened == 0


@pytest.mark.parametrize("fn", [fill_for, fill_while])
def test_a_python_loop_under_a_trace_looks_into_its_state_a_constant_number_of_times(fn):
    def traced(x, n):
        return autograph.convert(fn)(Counted([]), n), x + 1

    counts = []
    for n in (5, 50):
        Counted.flattened = 0
        jax.jit(traced, static_argnums=1)(1.0, n)
        counts.append(Counted.flattened)
    assert counts[0] == counts[1]


def complex_keys(n):
    d = {}
    for i in range(n):
        d[complex(i, 1)] = i
    k = 0
    while k < n:
        d[complex(k, 2)] = k
        k += 1
    return d


def nested_deeply(n):
    x = []
    for _ in range(n):
        x = [x]
    k = 0
    while k < n:
        x = [x]
        k += 1
    return x


def _depth(x):
    depth = 0
    while x:
        x, depth = x[0], depth + 1
    return depth


def test_dict_keys_that_do_not_sort_are_fine_in_a_python_loop():
    out = autograph.convert(complex_keys)(20)
    assert type(out) is dict and out == complex_keys(20)


def test_dict_keys_that_do_not_sort_under_jit():
    def f(x, n):
        return x * len(autograph.convert(complex_keys)(n))

    assert float(jax.jit(f, static_argnums=1)(1.0, 7)) == 14.0


def test_deeply_nested_lists_are_fine_in_a_python_loop():
    assert _depth(autograph.convert(nested_deeply)(3000)) == 6000


def test_deeply_nested_lists_under_jit():
    def f(x, n):
        return x + _depth(autograph.convert(nested_deeply)(n))

    assert float(jax.jit(f, static_argnums=1)(1.0, 3000)) == 6001.0


def test_python_loops_still_give_python_values():
    check(sum_to, 10, compiled=False)
    assert type(autograph.convert(sum_to)(10)) is int


def concrete_arrays(x):
    while x < 10:
        x = x * 2
    for i in range(3):
        x = x + i
    return x


def test_concrete_jax_arrays_outside_a_trace_run_as_python():
    assert_same_python(concrete_arrays(jnp.float32(1.5)),
                       autograph.convert(concrete_arrays)(jnp.float32(1.5)))
    check(concrete_arrays, 1.5)


def _deepest() -> int:
    reached = [0]

    def down(k):
        reached[0] = k
        down(k + 1)

    try:
        down(0)
    except RecursionError:
        pass
    return reached[0]


def test_unsortable_state_under_a_trace_costs_no_recursion_depth():
    # jaxlib's flattening, failing on a nested dict whose keys do not sort, left the
    # thread's recursion count a level higher each time: a long-running process lost
    # its usable depth (the fuzzer's 10,000-program run failed after ~6,000 programs).
    from autograph.runtime import loops

    state = ({complex(k, 1): k for k in range(3)}, [[[]]])
    before = _deepest()
    for _ in range(20):
        assert not loops._holds_tracer(state)
    assert _deepest() == before
