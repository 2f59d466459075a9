"""``name += value`` that may extend a shared list or dict: rewritten into
``ag__.augmented_assign`` only where it can meet one; the rest stays as written."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.converters import augmented_assignments
from tests.converters.harness import convert_with


@pytest.mark.parametrize("code", [
    # no if, loop or conditional expression before it: no region made the object doubtful
    "def f(a):\n    b = a\n    b += [3]\n    return b",
    # a fresh local, never held by anything else
    "def f(x):\n    t = [x]\n    if x > 0:\n        t = [1]\n    t += [3]\n    return t",
    # a number added: a list += 1 is a TypeError either way
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a += 1\n    return a",
    # an operator that never extends a list or dict in place
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a -= x\n    return a",
])
def test_what_cannot_meet_a_shared_object_stays_as_written(code):
    assert "augmented_assign" not in convert_with([augmented_assignments], code)


@pytest.mark.parametrize("code", [
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a *= 2\n    return a",
    "def f(a, x):\n    for i in range(x):\n        a += [i]\n    return a",
    "def f(d, x):\n    e = d if x > 0 else {}\n    e |= {'k': x}\n    return e",
])
def test_what_may_extend_a_shared_object_is_checked(code):
    assert "ag__.augmented_assign(" in convert_with([augmented_assignments], code)


_STAYS = [
    "def f(a):\n    b = a\n    b += [3]\n    return b",
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a += 1\n    return a",
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a -= x\n    return a",
    "def f(a, x):\n    if x > 0:\n        a.b = [x]\n    a.b += [x]\n    return a",
]
_CHECKED = [
    "def f(a, x):\n    if x > 0:\n        a = [x]\n    a *= 2\n    return a",
    "def f(a, x):\n    for i in range(x):\n        a += [i]\n    return a",
    "def f(d, x):\n    e = d if x > 0 else {}\n    e |= {'k': x}\n    return e",
    # the gate says yes, the pass finds the name held by nothing else
    "def f(x):\n    t = [x]\n    if x > 0:\n        t = [1]\n    t += [3]\n    return t",
]


@pytest.mark.parametrize("code", _STAYS + _CHECKED)
def test_the_gate_says_yes_wherever_the_pass_rewrites(code):
    """``needed`` (the transpiler's skip check, no sharing analysis) is asked of the
    walk: it says no only where ``transform`` leaves every statement as written."""
    import textwrap

    import gast

    from autograph.walk import walk_list

    node = gast.parse(textwrap.dedent(code)).body[0]
    gate = augmented_assignments.needed(walk_list(node))
    assert gate == (code in _CHECKED)
    if not gate:
        assert "augmented_assign" not in convert_with([augmented_assignments], code)


def extend(xs, ys):
    for y in ys:
        xs += [y]
    xs *= 2
    return xs


def test_python_values_and_compiled_give_pythons_result():
    """The runtime call does what ``+=`` does: the caller's list is extended in place."""
    for run in (extend, autograph.convert(extend)):
        caller = [0]
        assert run(caller, [1, 2]) is caller
        assert caller == [0, 1, 2, 0, 1, 2]
    got = autograph.to_graph(extend)([jnp.float32(0)], jnp.arange(1.0, 3.0))
    assert [float(v) for v in got] == [0, 1, 2, 0, 1, 2]
    got = jax.jit(autograph.convert(extend))([jnp.float32(0)], jnp.arange(1.0, 3.0))
    assert [float(v) for v in got] == [0, 1, 2, 0, 1, 2]


# The refusal where a staged region made the list doubtful, at the user's line:
# tests/runtime/test_carried_state.py (split_extended_by_augmented_assignment and its kin).
