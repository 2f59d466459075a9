"""What staging cannot honour, found at conversion (``analysis/stageability.py``)."""

import textwrap

import gast

from autograph import templates
from autograph.analysis import annos
from autograph.analysis.stageability import (
    annotate_enclosing_try,
    deleted_name,
    outer_write,
)
from autograph.converters.try_statements import catches_value_errors


def _function(source):
    # Generated code: templates mark each `ag__.name` as the runtime's; the try
    # converter marks each `try` whose `except` could catch an error on values.
    fn = _parsed(source)
    for node in gast.walk(fn):
        if isinstance(node, gast.Try) and catches_value_errors(node):
            annos.set(node, annos.CATCHES_VALUE_ERRORS, True)
    return fn


def _try_lines(fn):
    annotate_enclosing_try(fn)
    return [(type(n).__name__, n.lineno, annos.get(n, annos.IN_TRY)) for n in gast.walk(fn)
            if isinstance(n, (gast.If, gast.While, gast.For, gast.IfExp))]


def test_enclosing_try_with_except_clauses_only():
    fn = _function("""
        def f(x):
            try:
                if x:
                    pass
                y = 1 if x else 2
            except ZeroDivisionError:
                while x:
                    pass
            try:
                for i in x:
                    pass
            finally:
                pass
    """)
    assert sorted(_try_lines(fn)) == [("For", 11, None), ("If", 4, 3), ("IfExp", 6, 3),
                                      ("While", 8, None)]


def test_enclosing_try_stops_at_function_boundaries():
    fn = _function("""
        def f(x):
            try:
                def inner(x):
                    if x:
                        pass
                g = lambda v: 1 if v else 2
                if x:
                    pass
            except ZeroDivisionError:
                pass
    """)
    assert sorted(_try_lines(fn)) == [("If", 5, None), ("If", 8, 3), ("IfExp", 7, None)]


def test_nodes_annotated_before_keep_their_line():
    fn = _function("""
        def f(x):
            try:
                if x:
                    pass
            except ZeroDivisionError:
                pass
    """)
    annotate_enclosing_try(fn)
    branch = fn.body[0].body[0]
    fn.body = [branch]           # moved out of the try, as into a generated helper
    annotate_enclosing_try(fn)
    assert annos.get(branch, annos.IN_TRY) == 3


def _write(source, state=(), globals_=(), nonlocals=()):
    fn = _function(source)
    return outer_write(fn.body, set(state), set(globals_), set(nonlocals))


def test_declared_names_assigned_in_the_block():
    assert _write("""
        def block():
            x = 1
            counter += 1
    """, globals_={"counter"}) == ("global", "counter")
    assert _write("""
        def block():
            del total
    """, nonlocals={"total"}) == ("nonlocal", "total")
    assert _write("""
        def block():
            y = counter + 1
    """, globals_={"counter"}) is None


def test_nested_functions_declaring_global_or_nonlocal():
    assert _write("""
        def block():
            def inner():
                global g
                g = 1
            inner()
    """) == ("global", "g")
    # Only defined in the block, not called there: it writes nothing yet.
    assert _write("""
        def block():
            def inner():
                global g
                g = 1
    """) is None
    # `nonlocal acc` names the block's own state: written inside, not outside.
    assert _write("""
        def block():
            def add():
                nonlocal acc
                acc = acc + 1
            add()
    """, state={"acc"}) is None
    # ... a variable of the enclosing function the block does not bind: outside.
    assert _write("""
        def block():
            def bump():
                nonlocal count
                count += 1
            ag__.converted_call(bump)
    """) == ("nonlocal", "count")
    # ... a variable an enclosing nested function binds: inside.
    assert _write("""
        def block():
            def outer():
                v = 0
                def inner():
                    nonlocal v
                    v = 1
    """) is None


def test_comprehension_and_lambda_variables_are_their_own():
    assert _write("""
        def block():
            ys = [counter for counter in range(3)]
            f = lambda counter: counter
    """, globals_={"counter"}) is None


def test_deleted_carried_name_at_the_body_s_own_level():
    fn = _function("""
        def body():
            y = 1
            with open(p) as f:
                del y
            if c:
                del z
            del w
    """)
    assert deleted_name(fn.body, {"y", "z"}) == "y"
    assert deleted_name(fn.body, {"z"}) is None        # inside an `if`: its own function
    assert deleted_name(fn.body, {"w", "z"}) == "w"


def _parsed(source):
    source = textwrap.dedent(source)
    if "ag__" not in source:
        return gast.parse(source).body[0]
    return templates.replace(source, ag__="ag__")[0]
