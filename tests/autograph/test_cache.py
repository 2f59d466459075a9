"""The conversion cache: per code object, rebound per function, thread-safe, weak."""

import gc
import importlib.util
import itertools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp

import autograph
from autograph.call_policy import AS_IS
from autograph.context import ConversionOptions
from autograph.transpiler import IdentityWeakMap, Transpiler
from tests.differential import check

_MODULES = itertools.count()

HELPERS_SOURCE = """
def helper_a(x):
    if x > 0:
        x = x * {k}
    return x

def helper_b(x):
    while x < 10:
        x = x + {k}
    return x

def helper_c(x):
    for i in range(3):
        x = x + i
    return x

def main(x):
    return helper_a(x) + helper_b(x) + helper_c(x)
"""


def load_module(tmp_path, source, name=None):
    """A fresh module (fresh code objects) from ``source`` written to a file."""
    name = name or f"ag_cache_test_{next(_MODULES)}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- closures --------------------------------------------------------------------------


def make_scaler(k):
    def scale(x):
        if x > 0:
            x = x * k
        return x
    return scale


def made_in_loop():
    fns = []
    for k in range(3):
        def late(x):
            if x > 0:
                x = x + k  # noqa: B023  (late binding on purpose)
            return x
        fns.append(late)
    return fns


def make_counter():
    n = 0

    def bump(x):
        nonlocal n
        n += 1
        if x > 0:
            x = x + n
        return x

    def peek():
        return n
    return bump, peek


def test_closures_made_in_a_loop_share_one_conversion_and_keep_their_cells():
    t = Transpiler()
    scalers = [make_scaler(k) for k in (1, 2, 3)]
    programs = {id(t.program(f)) for f in scalers}
    assert len(programs) == 1
    assert [t.convert(f)(5) for f in scalers] == [5, 10, 15]
    late = made_in_loop()
    assert len({id(t.program(f)) for f in late}) == 1
    assert [t.convert(f)(1) for f in late] == [f(1) for f in late] == [3, 3, 3]
    for f in scalers + late:
        check(f, 2.0)


def test_converted_closure_shares_the_live_cell():
    bump, peek = make_counter()
    converted = autograph.convert(bump)
    assert converted(1) == 2
    assert bump(1) == 3
    assert converted(1) == 4
    assert peek() == 3


OFFSET = 1


def uses_global(x):
    if x > 0:
        x = x + OFFSET
    return x


def test_converted_function_reads_live_globals(monkeypatch):
    converted = autograph.convert(uses_global)
    assert converted(1) == 2
    monkeypatch.setattr(f"{__name__}.OFFSET", 10)
    assert converted(1) == 11


def test_equal_code_in_two_files_is_converted_separately(tmp_path):
    t = Transpiler()
    source = HELPERS_SOURCE.format(k=2)
    one, two = load_module(tmp_path, source), load_module(tmp_path, source)
    assert one.main.__code__ == two.main.__code__       # equal, yet not the same code
    assert t.program(one.main) is not t.program(two.main)
    assert t.program(one.main).filename != t.program(two.main).filename


# -- threads ---------------------------------------------------------------------------


def test_many_threads_convert_and_call_the_same_and_different_functions(tmp_path):
    t = Transpiler()
    modules = [load_module(tmp_path, HELPERS_SOURCE.format(k=k)) for k in range(1, 5)]
    scalers = [make_scaler(k) for k in range(1, 5)]
    targets = [m.main for m in modules] + [m.helper_b for m in modules] + scalers
    threads = 16
    barrier = threading.Barrier(threads)

    def work(i):
        barrier.wait()
        results = []
        for j in range(40):
            fn = targets[(i * 7 + j) % len(targets)]
            for x in (-3, 0, 2):
                results.append(t.convert(fn)(x) == fn(x))
        return all(results)

    with ThreadPoolExecutor(threads) as pool:
        assert all(pool.map(work, range(threads)))
    for fn in targets:
        assert t.program(fn) is t.program(fn)
    # The callees were converted once each, whichever thread got there first.
    options = ConversionOptions()
    for m in modules:
        assert t.callee(m.helper_a, options) is t.program(m.helper_a)


def test_threads_share_one_lazily_converted_function(tmp_path):
    module = load_module(tmp_path, HELPERS_SOURCE.format(k=3))
    converted = autograph.convert(module.main)
    barrier = threading.Barrier(8)

    def work(x):
        barrier.wait()
        return converted(x) == module.main(x)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, range(8)))
    assert jax.jit(converted)(jnp.int32(2)) == module.main(2)


# -- weak references -------------------------------------------------------------------


def make_recursive():
    def fact(n):
        r = 1
        if n > 1:
            r = n * fact(n - 1)
        return r
    return fact


def test_cache_lets_go_of_dropped_closures():
    fn = make_scaler(3)
    converted = autograph.convert(fn)
    assert converted(2) == 6
    fn_ref, converted_ref = weakref.ref(fn), weakref.ref(converted)
    del fn, converted
    gc.collect()
    assert fn_ref() is None and converted_ref() is None


def test_cache_lets_go_of_self_referencing_closures():
    fact = make_recursive()
    assert autograph.convert(fact)(5) == 120
    ref = weakref.ref(fact)
    del fact
    gc.collect()
    assert ref() is None


def test_cache_lets_go_of_dropped_modules(tmp_path):
    t = Transpiler()
    options = ConversionOptions()
    module = load_module(tmp_path, HELPERS_SOURCE.format(k=2))
    assert t.convert(module.main)(1) == module.main(1)
    assert len(t._callee_map(options)) == 3          # the three helpers
    refs = [weakref.ref(f) for f in (module.main, module.helper_a)]
    code_ref = weakref.ref(module.main.__code__)
    del module
    gc.collect()
    assert all(r() is None for r in refs)
    assert code_ref() is None
    assert len(t._callee_map(options)) == 0
    assert len(t._programs) == 0


def test_identity_map_forgets_a_dead_key_before_its_id_is_reused():
    # Objects allocated after others die reuse their memory, so their ids: the map
    # must answer for the live object only, never with a dead one's value.
    decisions = IdentityWeakMap()
    for round_ in range(50):
        keys = [compile(f"x + {round_}", "<test>", "eval") for _ in range(20)]
        for key in keys:
            assert decisions.get(key) is None
            assert decisions.setdefault(key, (round_, id(key))) == (round_, id(key))
        assert all(decisions.get(k) == (round_, id(k)) for k in keys)
        assert len(decisions) == len(keys)
        del keys, key
        assert len(decisions) == 0


def test_the_fast_lookups_see_the_decisions_and_their_clearing():
    t = Transpiler()
    options = ConversionOptions()
    known = t.known_callees(options)
    assert known(id(clip_twice.__code__)) is None
    program = t.callee(clip_twice, options)
    assert known(id(clip_twice.__code__)) is program
    t.policy.never_convert(__name__)        # the policy changed: decisions dropped
    assert known(id(clip_twice.__code__)) is None
    assert t.callee(clip_twice, options) is AS_IS
    assert known(id(clip_twice.__code__)) is AS_IS


def clip_twice(x):
    if x > 0:
        x = x * 2
    return x
