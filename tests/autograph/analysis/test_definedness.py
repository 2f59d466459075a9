"""Definedness annotations: bound on every path, on some path, and guarded reads."""

import textwrap

import gast

from autograph import templates
from autograph.analysis import annos, annotate_definedness


def _function(source):
    # Generated code: templates mark each `ag__.name` as the runtime's.
    fn = _parsed(source)
    annotate_definedness(fn)
    return fn


def _maybe_undefined_reads(fn):
    return sorted(n.id for n in gast.walk(fn)
                  if isinstance(n, gast.Name) and annos.get(n, annos.MAYBE_UNDEFINED))


def test_defined_on_both_branches():
    fn = _function("""
        def f(x):
            if x:
                y = 1
            else:
                y = 2
            return y
    """)
    assert _maybe_undefined_reads(fn) == []


def test_defined_on_one_branch():
    fn = _function("""
        def f(x):
            if x:
                y = 1
            if x:
                y = 3
            return y
    """)
    second_if = [n for n in gast.walk(fn) if isinstance(n, gast.If)][1]
    assert "y" not in annos.get(second_if, annos.DEFINED_IN)
    assert "y" in annos.get(second_if, annos.MAYBE_DEFINED_IN)
    assert _maybe_undefined_reads(fn) == ["y"]


def test_loop_may_run_zero_times():
    fn = _function("""
        def f(n):
            for i in range(n):
                t = i
            return t, i
    """)
    assert _maybe_undefined_reads(fn) == ["i", "t"]


def test_return_makes_the_rest_unreachable():
    fn = _function("""
        def f(x):
            if x:
                return 0
            else:
                y = 1
            return y
    """)
    assert _maybe_undefined_reads(fn) == []


def test_parameters_and_globals_are_not_guarded():
    fn = _function("""
        def f(x):
            return x + some_global
    """)
    assert _maybe_undefined_reads(fn) == []


def test_del_unbinds():
    fn = _function("""
        def f(x):
            y = x
            del y
            return y
    """)
    assert _maybe_undefined_reads(fn) == ["y"]


def test_flags_remember_what_is_bound_when_they_are_set():
    # `for ... else` after the break converter: r is bound on the break path and in
    # the else clause, so it is bound after the loop.
    fn = _function("""
        def f(n):
            did_break = False
            for i in range(n):
                if i == 3:
                    r = 1
                    did_break = True
            if ag__.not_(did_break):
                r = 2
            return r
    """)
    assert _maybe_undefined_reads(fn) == []
    assert "r" not in annos.get(fn, annos.READ_UNBOUND)


def test_a_flag_set_without_the_binding_does_not_vouch_for_it():
    fn = _function("""
        def f(n):
            found = False
            for i in range(n):
                if i == 3:
                    found = True
                    if n > 5:
                        r = 1
            if not found:
                r = 2
            return r
    """)
    assert _maybe_undefined_reads(fn) == ["r"]
    assert "r" in annos.get(fn, annos.READ_UNBOUND)


def test_a_flag_assigned_anything_else_is_no_flag():
    fn = _function("""
        def f(n):
            ok = False
            if n:
                r = 1
                ok = True
            ok = n > 2
            if ok:
                return r
            return 0
    """)
    assert _maybe_undefined_reads(fn) == ["r"]


def test_if_records_what_is_bound_after_it():
    fn = _function("""
        def f(x):
            if x:
                y = 1
                z = 2
            else:
                y = 3
            return y
    """)
    node = [n for n in gast.walk(fn) if isinstance(n, gast.If)][0]
    assert {"y"} <= annos.get(node, annos.DEFINED_OUT)
    assert "z" not in annos.get(node, annos.DEFINED_OUT)


def _returns_in_a_loop(bound):
    # A return inside a loop, after the return converter: `z` is read only when no
    # return happened, and then every iteration bound it.
    return _function(f"""
        def f(x):
            did_return = False
            for i in ag__.range_({bound}):
                if x > i:
                    r = i
                    did_return = True
                else:
                    z = i
            if ag__.not_(did_return):
                r = z
            return r
    """)


def test_a_flag_remembers_what_is_bound_when_it_is_false():
    fn = _returns_in_a_loop("3")
    assert _maybe_undefined_reads(fn) == []
    assert "z" not in annos.get(fn, annos.READ_UNBOUND)


def test_a_loop_that_may_run_zero_times_leaves_its_names_maybe_unbound():
    for bound in ("n", "0", "3, 1"):
        fn = _returns_in_a_loop(bound)
        assert "z" in annos.get(fn, annos.READ_UNBOUND), bound


def _parsed(source):
    source = textwrap.dedent(source)
    if "ag__" not in source:
        return gast.parse(source).body[0]
    return templates.replace(source, ag__="ag__")[0]
