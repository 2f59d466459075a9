"""Recursion (issue 16.4): converted, a recursive function reaches the depth the
original reaches (the runtime's own frames are lent to the recursion limit), and a
recursion whose stopping test is traced is a ConversionError, not a RecursionError."""

import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import pytest

import autograph


def count(n):
    if n == 0:
        return 0
    return 1 + count(n - 1)


@autograph.convert
def count_decorated(n):
    if n == 0:
        return 0
    return 1 + count_decorated(n - 1)


def count_ternary(n):
    return 0 if n == 0 else 1 + count_ternary(n - 1)


def count_and(n):
    return n and 1 + count_and(n - 1)


def count_in_loop(n):
    total = 0
    for _ in range(1 if n else 0):
        total = 1 + count_in_loop(n - 1)
    return total


def count_in_while(n):
    if n == 0:
        return 0
    out, i = 0, 0
    while i < 1:
        out = 1 + count_in_while(n - 1)
        i += 1
    return out


class Walker:
    def down(self, n):
        if n == 0:
            return 0
        return 1 + self.down(n - 1)


def deepest(fn, high=6000):
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        try:
            fn(mid)
            low = mid
        except RecursionError:
            high = mid - 1
    return low


FORMS = [(count, autograph.convert(count)), (count, count_decorated),
         (count_ternary, autograph.convert(count_ternary)),
         (count_and, autograph.convert(count_and)),
         (count_in_loop, autograph.convert(count_in_loop)),
         (count_in_while, autograph.convert(count_in_while)),
         (Walker().down, autograph.convert(Walker().down))]


@pytest.mark.parametrize("original, converted", FORMS,
                         ids=["if", "decorated", "ternary", "and", "for", "while", "method"])
def test_converted_recursion_reaches_the_original_depth(original, converted):
    limit = sys.getrecursionlimit()
    expected = deepest(original)
    reached = deepest(converted)
    assert reached >= 0.9 * expected, (reached, expected)
    assert reached <= expected            # a RecursionError where Python gives one
    assert converted(reached) == original(reached)
    assert sys.getrecursionlimit() == limit


def test_runaway_recursion_still_raises_and_the_limit_comes_back():
    limit = sys.getrecursionlimit()

    def forever(n):
        if n < 0:
            return 0
        return forever(n + 1)

    with pytest.raises(RecursionError):
        autograph.convert(forever)(0)
    assert sys.getrecursionlimit() == limit


def depth_probe(n, found):
    if n == 0:
        try:
            return count(10 ** 6)
        except RecursionError:
            found.append(sys.getrecursionlimit())
            return -1
    return depth_probe(n - 1, found)


def test_code_catching_recursion_error_never_gets_more_room_than_in_python():
    # Unconverted recursion below converted code: the room Python gives it at the
    # top; below a deep converted recursion, never more (what was lent covers the
    # runtime's frames counted at the last lending, see autograph/runtime/recursion.py).
    from autograph.runtime.recursion import PROBE_DEPTH

    calls = []

    @autograph.do_not_convert
    def plain(n):
        calls.append(n)
        return 0 if n == 0 else plain(n - 1)

    def deepest_plain():
        calls.clear()
        try:
            plain(10 ** 6)
        except RecursionError:
            pass
        return len(calls)

    def descend(n):
        if n == 0:
            return deepest_plain()
        return descend(n - 1)

    expected, got = descend(0), autograph.convert(descend)(0)
    assert abs(got - expected) <= 10, (got, expected)
    for levels in (100, 300, 500):
        expected, got = descend(levels), autograph.convert(descend)(levels)
        assert 0 < got <= expected + 2 * PROBE_DEPTH, (levels, got, expected)


def test_threads_lend_their_own_frames():
    limit = sys.getrecursionlimit()
    results = []

    def work():
        results.append(deepest(autograph.convert(count)))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = deepest(count)
    assert len(results) == 3 and all(r >= 0.85 * expected for r in results), results
    assert sys.getrecursionlimit() == limit


def add_static(x, depth):
    if depth == 0:
        return x
    return add_static(x, depth - 1) + 1.0


def test_static_depth_under_jit():
    jitted = jax.jit(autograph.convert(add_static), static_argnums=1)
    assert float(jitted(jnp.float32(1.0), 300)) == 301.0
    original = deepest(lambda n: jax.jit(add_static, static_argnums=1)(1.0, n), 3000)
    reached = deepest(lambda n: jitted(1.0, n), 3000)
    assert reached >= 0.9 * original


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


@pytest.mark.parametrize("fn, line", [(fact, 1), (fib, 1)])
def test_recursion_stopping_on_a_traced_value_is_a_conversion_error(fn, line):
    assert autograph.convert(fn)(5) == fn(5)
    with pytest.raises(autograph.ConversionError,
                       match="recursion whose stopping test is traced") as info:
        jax.jit(autograph.convert(fn))(5)
    assert f"{__file__}:{fn.__code__.co_firstlineno + line}" in str(info.value)
    assert "loop" in str(info.value)
    assert info.value.__suppress_context__
    import traceback
    assert len(traceback.format_exception(info.value)) < 40


def test_deep_recursion_at_a_raised_limit_runs_in_a_fresh_interpreter(tmp_path):
    path = tmp_path / "deep.py"
    path.write_text(textwrap.dedent("""
        import sys
        import autograph

        def count(n):
            if n == 0:
                return 0
            return 1 + count(n - 1)

        sys.setrecursionlimit(8000)
        print(autograph.convert(count)(7500), sys.getrecursionlimit())
    """))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["7500", "8000"]
