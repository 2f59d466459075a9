"""Converted functions under sharded ``jit`` and ``shard_map`` on 8 host devices.

The devices exist only in a subprocess (``--xla_force_host_platform_device_count=8``
must be set before JAX starts), so this test runs tests/sharding_script.py there and
reads its report.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def report():
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=8")
    # as a module from the repository root: run as a file, its folder (tests/, which
    # has an autograph/ test package) would shadow the real package
    done = subprocess.run([sys.executable, "-m", "tests.sharding_script"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_eight_devices(report):
    assert report["devices"] == 8


@pytest.mark.parametrize("entry", ["jit_shardings_collatz", "shard_map_collatz",
                                   "shard_map_newton", "shard_map_psum",
                                   "jit_shardings_grad", "shard_map_explicit_mesh",
                                   "shard_map_grad_bounded_while", "shard_map_ranges"])
def test_sharded_result_equals_one_device(report, entry):
    assert report[entry] is True


def test_output_stays_sharded(report):
    assert report["jit_shardings_out_devices"] == 8
