"""Cost of converting called functions: cold (new code objects) and cached (warm).

    python benchmarks/calls.py

Cold: a module with ``main`` calling three helpers (an ``if``, a ``while``, a
``for``) is written to a new file each time and imported, so every code object is
new; the first call of ``autograph.convert(main)`` converts ``main`` and, through
``converted_call``, the three helpers. Reported per function (the total / 4).

Warm: once converted, the cost of ``ag__.converted_call(helper)(x)`` over calling
``helper(x)`` directly, of a cached ``Transpiler.convert`` (the per-code lookup and
the binding to the function's globals and closure), and of a whole converted
``main`` call against the original.
"""

from __future__ import annotations

import gc
import importlib.util
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

import autograph
from autograph import api
from autograph.context import ConversionOptions

SOURCE = """
def helper_if(x):
    if x > 0:
        y = x * {k}
    else:
        y = -x
    return y

def helper_while(x):
    n = 0
    while x > 1:
        x = x // 2
        n += 1
    return n

def helper_for(x):
    s = 0
    for i in range(x):
        s += i * {k}
    return s

def main(x):
    return helper_if(x) + helper_while(x) + helper_for(x)
"""


def load(directory: Path, index: int):
    name = f"ag_bench_calls_{index}"
    path = directory / f"{name}.py"
    path.write_text(SOURCE.format(k=index + 2))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_call(stmt, number, repeat=7, **names) -> float:
    """Median seconds per call of ``stmt``."""
    timer = timeit.Timer(stmt, globals=names)
    return statistics.median(t / number for t in timer.repeat(repeat, number))


def main(reps: int = 40):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        autograph.convert(load(directory, 10_000).main)(5)     # imports, templates
        cold, cold_cpu = [], []
        for i in range(reps):
            module = load(directory, i)
            converted = autograph.convert(module.main)
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            converted(5)
            cold.append(time.perf_counter() - start)
            cold_cpu.append(time.process_time() - start_cpu)
        module = load(directory, 20_000)
        converted = autograph.convert(module.main)
        converted(5)

    transpiler = api._TRANSPILER
    runtime = transpiler._runtime_cell(ConversionOptions()).cell_contents
    helper = module.helper_if
    n = 200_000
    direct = per_call("helper(3)", n, helper=helper)
    converted_helper = transpiler.convert(helper)
    direct_converted = per_call("helper(3)", n, helper=converted_helper)
    through = per_call("cc(helper)(3)", n, cc=runtime.converted_call, helper=helper)
    convert_cached = per_call("convert(helper)", n, convert=transpiler.convert, helper=helper)
    main_original = per_call("f(5)", n // 4, f=module.main)
    main_converted = per_call("f(5)", n // 4, f=converted)

    us = 1e6
    print(f"python {sys.version.split()[0]}, {reps} cold reps")
    print(f"cold conversion, main + 3 helpers: median {statistics.median(cold) * 1e3:.2f} ms "
          f"total, {statistics.median(cold) / 4 * 1e3:.2f} ms per function (target <= 4 ms); "
          f"CPU time {statistics.median(cold_cpu) / 4 * 1e3:.2f} ms per function")
    print(f"converted_call(helper)(3), cached: {through * us:.2f} us; the converted helper "
          f"called directly {direct_converted * us:.2f} us, so the call path costs "
          f"{(through - direct_converted) * us:.2f} us (target <= 20 us); "
          f"the original helper(3) {direct * us:.2f} us")
    print(f"Transpiler.convert(helper), cached: {convert_cached * us:.2f} us")
    print(f"main(5): original {main_original * us:.2f} us, converted {main_converted * us:.2f} "
          "us (3 converted calls and 3 staged-or-Python constructs)")


if __name__ == "__main__":
    main()
