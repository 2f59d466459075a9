"""Threads converting, tracing and calling at once, from one large source file.

Tracing a staged loop must not parse the user's source nor scan bytecode: CPython's
parser is not safe against garbage-collector finalizers running in other threads
(``SystemError: AST constructor recursion depth mismatch``), and conversion, the
only place that parses, turns the collector off while it does. This test runs
8 threads over 200 functions (each with a ``while``) of one ~2,000-line file, for
10 rounds, each round a new file: no error, and every result equal to Python's.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import threading

import jax
import jax.numpy as jnp
import pytest

import autograph

FUNCTIONS = 200
THREADS = 8
ROUNDS = 10


def _module_source(count: int) -> str:
    """``count`` functions of ten lines each, every one with a ``while`` on a traced
    condition and a padding of comments (about ``10 * count`` lines in all)."""
    parts = ["import jax.numpy as jnp\n"]
    for k in range(count):
        parts.append(
            f"def f{k}(x, n):\n"
            f"    i = 0\n"
            f"    while i < n:\n"
            f"        x = x * 0.5 + {k}\n"
            f"        i += 1\n"
            f"    if x > {k}:\n"
            f"        x = x - 1\n"
            f"    # padding so that the file is long: {k}\n"
            f"    return x\n\n")
    return "".join(parts)


def _import_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _garbage():
    """Cycles with finalizers, so that the collector runs code in every thread."""
    class Node:
        def __del__(self):
            pass
    for _ in range(200):
        a, b = Node(), Node()
        a.other, b.other = b, a


def run_rounds(tmp_path, rounds=ROUNDS, count=FUNCTIONS, threads=THREADS):
    """Errors and wrong results of ``rounds`` rounds of ``threads`` threads over the
    ``count`` functions of a new file each round."""
    failures = []
    for r in range(rounds):
        path = tmp_path / f"many_loops_{r}.py"
        path.write_text(_module_source(count))
        module = _import_module(path, f"_autograph_threads_{r}_{id(tmp_path)}")
        barrier = threading.Barrier(threads)

        def work(t, module=module, barrier=barrier):
            barrier.wait()
            for k in range(t, count, threads):
                fn = getattr(module, f"f{k}")
                try:
                    got = float(jax.jit(autograph.convert(fn))(jnp.float32(2.0),
                                                              jnp.int32(3)))
                    _garbage()
                    want = fn(2.0, 3)
                    if abs(got - want) > 1e-4 * max(1.0, abs(want)):
                        failures.append(f"f{k}: {got} != {want}")
                except Exception as error:  # noqa: BLE001 - every error is a failure
                    failures.append(f"f{k}: {type(error).__name__}: {error}")

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        sys.modules.pop(module.__name__, None)
        gc.collect()
    return failures


@pytest.mark.slow
def test_threads_convert_trace_and_call_a_large_file(request, tmp_path):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("runs with -m slow")
    failures = run_rounds(tmp_path)
    assert not failures, failures[:5]


def test_threads_on_a_small_file(tmp_path):
    """The same, small: one round of 16 functions."""
    assert not run_rounds(tmp_path, rounds=1, count=16, threads=4)
