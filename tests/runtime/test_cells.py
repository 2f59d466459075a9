"""Closure cells of staged and unrolled regions (autograph/runtime/cells.py): each traced run
of a branch starts from the cells as they were before the ``if``, and a loop that
falls back to unrolling leaves its cells as Python's iterations left them, for a
closure that escapes the loop to read."""

# ruff: noqa: B023, E731 - closures made in loops are what is tested
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph


def escapes_as_state(a, b):
    i = 0
    for i in range(3):
        g = lambda: i + b
        b = b + 1
    return g()


def escapes_unbound_before(a, b):
    for i in range(3):
        g = lambda: i + b
        b = b + 1
    return g()


def escapes_in_a_list(a, b):
    fs = []
    for i in range(3):
        fs.append(lambda: i * 10 + b)
        b = b + 1
    return fs[0]() + fs[2]()


def escapes_from_array_loop(a, b):
    k = 0
    for k in jnp.arange(3):
        g = lambda: k + b
        b = b + a
    return g()


def branch_binds_a_scoped_cell(a, b, c):
    t = a
    if b > 0:
        t = 5
        g = lambda: t  # noqa: F841
    else:
        c = t
    return c


def branch_updates_a_scoped_cell(a, b, c):
    t = a
    if b > 0:
        t = t + 1
        g = lambda: t  # noqa: F841
    else:
        c = t
    return c


def branch_reads_a_cell_the_other_deletes(a, b, c):
    t = a
    if b > 0:
        t = t * 2
        g = lambda: t
        c = g()
    else:
        c = t + c
    return c


CASES = [
    (escapes_as_state, (1, 2)),
    (escapes_unbound_before, (1, 2)),
    (escapes_in_a_list, (1, 2)),
    (escapes_from_array_loop, (2, 3)),
    (branch_binds_a_scoped_cell, (13, -15, 0)),
    (branch_binds_a_scoped_cell, (13, 15, 0)),
    (branch_updates_a_scoped_cell, (13, -15, 0)),
    (branch_updates_a_scoped_cell, (13, 15, 4)),
    (branch_reads_a_cell_the_other_deletes, (3, -1, 4)),
    (branch_reads_a_cell_the_other_deletes, (3, 1, 4)),
]
IDS = [f"{fn.__name__}{args}" for fn, args in CASES]


def python_value(fn, args):
    if fn is escapes_from_array_loop:   # iterating a NumPy-like array in Python
        return fn(args[0], args[1])
    return fn(*args)


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_converted_with_python_inputs_is_the_original(fn, args):
    assert autograph.convert(fn)(*args) == python_value(fn, args)


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_compiled_is_the_original(fn, args):
    traced = [jnp.int32(a) for a in args]
    expected = python_value(fn, args)
    assert int(autograph.to_graph(fn)(*traced)) == expected
    assert int(jax.jit(autograph.convert(fn))(*traced)) == expected


@pytest.mark.parametrize(("fn", "args"), [c for c in CASES if c[0].__name__.startswith(
    "escapes")], ids=[i for i in IDS if i.startswith("escapes")])
def test_unrolled_closures_agree_with_jit_of_the_original(fn, args):
    traced = [jnp.int32(a) for a in args]
    assert int(autograph.to_graph(fn)(*traced)) == int(jax.jit(fn)(*traced))


def test_fuzzed_cell_programs_agree_with_python():
    from tests.fuzz import cell_programs

    ran, found = cell_programs.check(24, seed=3)
    assert set(ran) == set(cell_programs.KINDS)
    assert not found, found[0]


def closures_escaping_through_a_list(n):
    x = 1
    fs = []
    for i in range(3):
        fs.append(lambda: i * 2 + x)
        x = x + 3
    z = 0
    for h in fs:
        z = x + h()
    return z, x, n


@pytest.mark.xfail(strict=True, reason=(
    "issue 26.1, open: a loop that carries cells and runs as Python under a trace "
    "(the abstract probe of its first iteration found nothing to stage) restores its "
    "scoped cell `i` afterwards, so the escaping lambdas read 0, not 2 (found by the "
    "closure_escape fuzz kind; its probe keeps that kind out of the default fuzzing "
    "until this passes)"))
def test_closures_escaping_a_python_run_loop_through_a_list():
    expected = closures_escaping_through_a_list(0)
    assert autograph.convert(closures_escaping_through_a_list)(0) == expected
    got = autograph.to_graph(closures_escaping_through_a_list)(jnp.int32(0))
    assert tuple(int(v) for v in got) == expected
