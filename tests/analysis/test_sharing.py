"""analysis/sharing.py: which names may hold an object something else holds too."""

from __future__ import annotations

import textwrap

import gast

from autograph.analysis.sharing import Sharing, end_position, may_change
from autograph.walk import walk_list


def sharing_of(source):
    fn = gast.parse(textwrap.dedent(source)).body[0]
    return fn, Sharing(fn, "ag__")


def region(fn, index):
    """The start and end of the function's statement ``index``."""
    node = fn.body[index]
    return (node.lineno, node.col_offset), end_position(node)


def test_parameters_and_aliases_are_held_fresh_values_are_not():
    fn, sharing = sharing_of("""
        def f(xs, n):
            a = [1, 2]
            b = a
            c = {'k': 1}
            if n > 2:
                a = [5]
                c = {}
                xs = [3]
            ag__.setitem(a, 0, 9)
            return xs, c
        """)
    start, end = region(fn, 3)
    assert sharing.shared(["a", "c", "xs"], start, end) == ["a", "xs"]


def test_reads_keep_nothing_stores_and_calls_may():
    fn, sharing = sharing_of("""
        def f(n):
            a, b, c, d, e = [1], [2], [3], [4], [5]
            s = len(a) + a[0] + sum(b) + jnp.sum(jnp.array(b))
            a = ag__.list_append(a, s)
            keep = {'k': c}
            helper(d)
            for v in e:
                s += v
            if n > 2:
                a, c, d, e = [], [], [], []
            ag__.setitem(a, 0, 1)
        """)
    start, end = region(fn, 6)
    assert sharing.shared(["a", "c", "d", "e"], start, end) == ["c", "d"]


def test_nothing_is_shared_without_a_change_in_place_after_the_region():
    fn, sharing = sharing_of("""
        def f(xs, n):
            b = xs
            ag__.setitem(b, 0, 1)
            if n > 2:
                xs = [x * 2 for x in xs]
            return xs[0] + b[0]
        """)
    start, end = region(fn, 2)
    assert sharing.shared(["xs"], start, end) == []


def test_an_object_held_only_after_the_region_is_not_shared_there():
    fn, sharing = sharing_of("""
        def f(n):
            a = [1, 2]
            if n > 2:
                a = [5, 5]
            b = a
            ag__.setitem(b, 0, 1)
        """)
    start, end = region(fn, 1)
    assert sharing.shared(["a"], start, end) == []


def test_a_name_read_in_a_nested_function_is_held():
    fn, sharing = sharing_of("""
        def f(n):
            a = [1, 2]
            g = lambda: a
            if n > 2:
                a = [5, 5]
            a.append(3)
        """)
    start, end = region(fn, 2)
    assert sharing.shared(["a"], start, end) == ["a"]


_CHANGE_SOURCES = {
    "no change": "def f(n, xs):\n    y = len(xs) + jnp.sum(n)\n    return y, xs\n",
    "setitem": "def f(xs):\n    xs[0] = 1\n",
    "method": "def f(xs):\n    xs.append(1)\n",
    "del item": "def f(xs):\n    del xs[0]\n",
    "attribute": "def f(o):\n    o.k = 1\n",
    "item +=": "def f(xs):\n    xs[0] += 1\n",
    "operator": "def f(xs):\n    ag__.setitem(xs, 0, 9)\n",
    "passed": "def f(xs):\n    helper(xs)\n",
    "keyword": "def f(xs):\n    helper(k=xs)\n",
    "nested": "def f(xs):\n    def g():\n        helper(xs)\n    return g\n",
    "returned": "def f(a, b):\n    a, b = b, a\n    return a, b\n",
}


def test_may_change_is_false_only_where_no_sharing_finds_a_change():
    for label, source in _CHANGE_SOURCES.items():
        tree = gast.parse(source).body[0]
        nodes = walk_list(tree)
        found = any(Sharing(fn, "ag__").changes for fn in nodes
                    if isinstance(fn, gast.FunctionDef))
        assert may_change(nodes, "ag__") == found, label
