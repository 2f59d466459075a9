"""Liveness annotations on if/while/for."""

import textwrap

import gast

from autograph.analysis import annos, annotate_liveness


def _function(source):
    fn = gast.parse(textwrap.dedent(source)).body[0]
    annotate_liveness(fn)
    return fn


def _stmt(fn, kind, index=0):
    return [n for n in gast.walk(fn) if isinstance(n, kind)][index]


def test_if_live_out_and_branch_live_in():
    fn = _function("""
        def f(x, a):
            if x > 0:
                y = a
            else:
                y = x
            return y
    """)
    node = _stmt(fn, gast.If)
    assert annos.get(node, annos.LIVE_OUT) == {"y"}
    assert annos.get(node, annos.LIVE_IN_BODY) == {"a"}
    assert annos.get(node, annos.LIVE_IN_ORELSE) == {"x"}


def test_loop_carried_names_are_live_at_head():
    fn = _function("""
        def f(n):
            i, s, t = 0, 0, 0
            while i < n:
                t = i * 2
                s = s + t
                i += 1
            return s
    """)
    node = _stmt(fn, gast.While)
    assert annos.get(node, annos.LIVE_AT_HEAD) == {"i", "n", "s"}
    assert annos.get(node, annos.LIVE_OUT) == {"s"}


def test_for_target_is_not_live_at_head():
    fn = _function("""
        def f(x):
            z = 0
            for i in range(3):
                z += x[i]
            return z
    """)
    node = _stmt(fn, gast.For)
    assert "i" not in annos.get(node, annos.LIVE_AT_HEAD)
    assert "i" in annos.get(node, annos.LIVE_IN_BODY)


def test_item_assignment_reads_its_base():
    fn = _function("""
        def f(x, d):
            if x:
                d['k'] = 1
            return 0
    """)
    assert "d" in annos.get(_stmt(fn, gast.If), annos.LIVE_IN_BODY)


def test_closures_read_where_they_are_defined():
    # What a closure shares with the function is kept in its cell (closures.py);
    # liveness counts its reads where it is defined.
    fn = _function("""
        def f(x):
            w = 1
            if x:
                w = 2
            g = lambda: w
            return g()
    """)
    assert "w" in annos.get(_stmt(fn, gast.If), annos.LIVE_OUT)
    fn = _function("""
        def f(x):
            g = lambda: w
            w = 1
            if x:
                w = 2
            return g()
    """)
    assert "w" not in annos.get(_stmt(fn, gast.If), annos.LIVE_OUT)


def test_an_except_name_is_dead_after_its_clause():
    fn = _function("""
        def f(n):
            out = []
            for i in range(n):
                try:
                    raise ValueError(i)
                except ValueError as e:
                    out.append(str(e))
            return out
    """)
    assert "e" not in annos.get(_stmt(fn, gast.For), annos.LIVE_AT_HEAD)


def test_break_jumps_to_after_the_loop():
    fn = _function("""
        def f(n):
            r = 0
            while n > 0:
                if n == 3:
                    r = 1
                    break
                n -= 1
            return r
    """)
    inner_if = _stmt(fn, gast.If)
    # `r = 1; break`: r is rebound before the jump, nothing else is read.
    assert annos.get(inner_if, annos.LIVE_IN_BODY) == set()
    assert annos.get(inner_if, annos.LIVE_OUT) == {"n", "r"}
