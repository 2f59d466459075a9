"""Load: many functions converted in one process, many threads at once.

- functions the user drops are let go by the conversion caches (weak references
  die after ``gc.collect()``), whether closures sharing one code object or distinct
  functions from a module that is dropped;
- threads converting and calling at once all get correct results;
- ``measure_closures(10_000)`` (slow test, or ``python -m tests.test_load``) reports
  the peak memory of converting and calling 10,000 closures.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import threading
import tracemalloc
import weakref

import jax
import pytest

import autograph
from autograph.api import _TRANSPILER


def make_closure(k):
    def scaled(x):
        if x > k:
            x = x - k
        else:
            x = x * 2 + k
        return x

    return scaled


def _expected(k, x):
    return x - k if x > k else x * 2 + k


def _cache_sizes():
    """Live entries of the transpiler's caches (code objects it holds conversions of,
    and code objects it compiled)."""
    return len(_TRANSPILER._programs), len(_TRANSPILER._converted_codes)


def test_dropped_closures_are_released():
    gc.collect()
    before = _cache_sizes()
    originals, converted = [], []
    for k in range(300):
        fn = make_closure(k)
        conv = autograph.convert(fn)
        assert conv(k + 5) == _expected(k, k + 5)
        originals.append(weakref.ref(fn))
        converted.append(weakref.ref(conv))
        del fn, conv
    gc.collect()
    assert all(r() is None for r in originals), "converted closures keep originals alive"
    assert all(r() is None for r in converted)
    # The closures share one code object (a constant of make_closure, alive): one
    # conversion, however many closures.
    assert _cache_sizes()[0] <= before[0] + 1


def _module_of_distinct_functions(tmp_path, count, name):
    lines = []
    for k in range(count):
        lines += [f"def f{k}(x):", f"    while x > {k % 7 + 1}:", f"        x = x - {k % 3 + 1}",
                  f"    return x + {k}", ""]
    path = tmp_path / f"{name}.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_dropped_distinct_functions_are_released(tmp_path):
    gc.collect()
    programs_before, _ = _cache_sizes()
    module = _module_of_distinct_functions(tmp_path, 200, "load_distinct")
    refs = []
    for k in range(200):
        fn = getattr(module, f"f{k}")
        assert autograph.convert(fn)(20) == fn(20)
        refs.append(weakref.ref(fn))
    assert _cache_sizes()[0] >= programs_before + 200
    del sys.modules["load_distinct"], module, fn
    gc.collect()
    assert all(r() is None for r in refs)
    assert _cache_sizes()[0] <= programs_before, "conversions of dropped functions kept"


def test_threads_convert_and_call_at_once():
    closures = [make_closure(k) for k in range(64)]
    errors, results = [], {}
    start = threading.Barrier(8)

    def work(t):
        try:
            start.wait()
            for i in range(t, len(closures), 8):
                conv = autograph.convert(closures[i])
                results[i, "py"] = conv(i + 3)
                results[i, "neg"] = conv(i - 3)
            if t < 2:   # two threads also trace and compile at the same time
                results[t, "jit"] = int(autograph.to_graph(closures[t])(t + 3))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors
    for i in range(len(closures)):
        assert results[i, "py"] == _expected(i, i + 3)
        assert results[i, "neg"] == _expected(i, i - 3)
    for t in range(2):
        assert results[t, "jit"] == _expected(t, t + 3)


def test_threads_share_one_conversion_per_code():
    fn = make_closure(1)
    got = []

    def work():
        got.append(_TRANSPILER.program(fn))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert len({id(p) for p in got}) == 1


def measure_closures(count=10_000):
    """Peak and retained traced-allocation bytes for converting and calling
    ``count`` closures (kept alive during the run, then dropped)."""
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    keep = []
    for k in range(count):
        conv = autograph.convert(make_closure(k))
        assert conv(k + 1) == 1
        keep.append(conv)
    _, peak = tracemalloc.get_traced_memory()
    alive, _ = tracemalloc.get_traced_memory()
    del keep, conv
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"count": count, "peak_bytes": peak - base, "alive_bytes": alive - base,
            "after_drop_bytes": after - base}


def test_small_closure_memory_is_released():
    figures = measure_closures(500)
    assert figures["after_drop_bytes"] < figures["alive_bytes"] / 4, figures


@pytest.mark.slow
def test_ten_thousand_closures_memory(request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("runs with -m slow (or python -m tests.test_load)")
    figures = measure_closures(10_000)
    print(figures)
    assert figures["after_drop_bytes"] < figures["alive_bytes"] / 4, figures


if __name__ == "__main__":
    jax.config.update("jax_platforms", "cpu")
    print(measure_closures(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
