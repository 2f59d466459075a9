"""Every implementation of every benchmark workload computes the same thing.

Tiny sizes only; timings are never asserted here.
"""

import functools

import jax
import pytest

from benchmarks.suite import compare
from benchmarks.workloads import EAGER, KINDS, all_workloads

WORKLOADS = {w.name: w for w in all_workloads()}
CASES = [(name, kind) for name, w in WORKLOADS.items() for kind in KINDS
         if kind in w.builders and kind != EAGER]


@functools.cache
def reference(name):
    """The eager original's output on the workload's tiny inputs."""
    w = WORKLOADS[name]
    return jax.block_until_ready(w.builders[EAGER]()(*w.make_args(True)))


def test_every_workload_has_eager_autograph_and_hand_lax():
    for w in WORKLOADS.values():
        assert {"eager", "autograph", "hand_lax"} <= set(w.builders), w.name


@pytest.mark.parametrize(("name", "kind"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_implementation_matches_eager_original(name, kind):
    w = WORKLOADS[name]
    out = jax.block_until_ready(w.builders[kind]()(*w.make_args(True)))
    mismatch = compare(reference(name), out, w.tolerance)
    assert mismatch is None, f"{name} {kind}: {mismatch}"
