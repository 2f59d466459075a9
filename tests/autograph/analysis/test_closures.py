"""Which names nested scopes share with a function (closures.py)."""

import textwrap

import gast

from autograph import templates
from autograph.analysis.closures import closure_uses


def _uses(source):
    # Generated code: templates mark each `ag__.name` as the runtime's.
    fn = _parsed(source)
    return closure_uses(fn)


def test_lambdas_and_defs_read_from_the_function():
    uses = _uses("""
        def f(n):
            read = lambda: x + n
            def get():
                return y
            return read, get
    """)
    assert uses.reads == {"x", "n", "y"}
    assert uses.writes == set()


def test_nonlocal_assignments_are_writes():
    uses = _uses("""
        def f():
            x = 0
            def inc():
                nonlocal x
                x += 1
            return inc
    """)
    assert uses.writes == {"x"}
    assert "x" in uses.reads


def test_names_bound_inside_the_scope_are_its_own():
    uses = _uses("""
        def f(xs):
            def g(a):
                b = a + 1
                return [c * b for c in xs]
            return g
    """)
    assert uses.reads == {"xs"}


def test_comprehensions_and_class_bodies_run_on_the_spot():
    uses = _uses("""
        def f(xs, w):
            ys = [x * w for x in xs]
            s = sum(x * w for x in xs)
            class K:
                v = w
            return ys, s, K
    """)
    assert uses.captures == ()


def test_what_runs_later_inside_what_runs_on_the_spot_is_captured():
    uses = _uses("""
        def f(xs, w):
            fs = [lambda: x * w for x in xs]
            class K:
                def get(self):
                    return w
            gen = (x * w for x in xs)
            return fs, K, gen
    """)
    assert uses.reads == {"w"}
    assert len(uses.captures) == 3


def test_runtime_operands_run_on_the_spot():
    uses = _uses("""
        def f(a, b):
            return ag__.and_(lambda: a, lambda: b), ag__.converted_call(g, lambda: a)
    """)
    (capture,) = uses.captures
    assert capture.reads == {"a"}


def test_reads_outside_a_block():
    fn = gast.parse(textwrap.dedent("""
        def f(n):
            read = lambda: x
            for i in range(n):
                def get():
                    return i
    """)).body[0]
    uses = closure_uses(fn)
    loop = fn.body[1]
    inside = {id(node) for node in gast.walk(loop)}
    assert uses.reads_outside(inside) == {"x"}
    assert uses.reads == {"x", "i"}


def _parsed(source):
    source = textwrap.dedent(source)
    if "ag__" not in source:
        return gast.parse(source).body[0]
    return templates.replace(source, ag__="ag__")[0]
