"""Calls from converted code keep the original's frames, and run callees without source.

``ag__.converted_call(f)(*args)`` makes the call in the user's own frame, so a
callee sees the stack the original would show: ``traceback.extract_stack()``,
``sys._getframe(1)``, ``warnings.warn(stacklevel=2)`` and the tracebacks of errors
name the user's frames only (the ``convert`` wrapper at the entry point is the one
frame more, see the README's known limits). A callee whose source cannot be read
(made by ``exec``) runs as it is, as Python runs it.
"""

import sys
import traceback
import warnings

import jax
import pytest

import autograph
from tests.differential import check


def _user_frames(stack):
    """The frames of this file below the test function: ``(name, line)``."""
    return [(f.name, f.lineno) for f in stack
            if f.filename == __file__ and not f.name.startswith("test_")]


def innermost():
    return traceback.extract_stack()


def middle():
    return innermost()


def outermost():
    return middle()


def test_extract_stack_shows_the_user_frames_of_the_original():
    original = _user_frames(outermost())
    converted = _user_frames(autograph.convert(outermost)())
    assert converted == original
    names = [f.name for f in autograph.convert(outermost)()]
    assert "converted_call" not in names


def caller_name():
    return sys._getframe(1).f_code.co_name


def asks_for_its_caller():
    return caller_name()


def test_getframe_one_is_the_user_caller():
    assert autograph.convert(asks_for_its_caller)() == asks_for_its_caller() == (
        "asks_for_its_caller")


def warns():
    warnings.warn("look at your caller", UserWarning, stacklevel=2)


def calls_a_warning():
    warns()
    return 1


def test_warning_stacklevel_names_the_user_line():
    for fn in (calls_a_warning, autograph.convert(calls_a_warning)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        assert caught[0].filename == __file__
        assert caught[0].lineno == calls_a_warning.__code__.co_firstlineno + 1


def fails_deep():
    return 1 / 0


def fails_through_a_call():
    return fails_deep()


def catches_and_keeps_traceback():
    try:
        fails_through_a_call()
    except ZeroDivisionError as error:
        return _user_frames(traceback.extract_tb(error.__traceback__))


def test_tracebacks_hold_the_user_frames_only():
    assert (autograph.convert(catches_and_keeps_traceback)()
            == catches_and_keeps_traceback())
    for fn in (fails_through_a_call, autograph.convert(fails_through_a_call)):
        with pytest.raises(ZeroDivisionError) as info:
            fn()
        frames = traceback.extract_tb(info.value.__traceback__)
        assert [f.name for f in frames][-2:] == ["fails_through_a_call", "fails_deep"]
        assert not any(f.name in ("wrapper", "converted_call") for f in frames)


def passes_its_star_args(f, args):
    return f(*args)


def test_star_args_reach_the_callee_as_python_passes_them():
    args = (1, 2, 3)
    same = passes_its_star_args(lambda *a: a, args)
    assert autograph.convert(passes_its_star_args)(lambda *a: a, args) == same
    check(passes_its_star_args, lambda *a: sum(a), (1.0, 2.0), compiled=False)


EXEC_SOURCE = "def made_by_exec(x):\n    if x > 0:\n        x = x - 1\n    return x * 2\n"


def calls_exec_defined(f, x):
    y = f(x)
    if y > 2:
        y = y + 10
    return y


def test_callee_without_source_runs_as_it_is():
    namespace = {}
    exec(EXEC_SOURCE, namespace)
    f = namespace["made_by_exec"]
    for x in (3, -1, 2.5):
        assert autograph.convert(calls_exec_defined)(f, x) == calls_exec_defined(f, x)


def test_callee_without_source_on_a_traced_value_says_why():
    namespace = {}
    exec(EXEC_SOURCE, namespace)
    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(autograph.convert(calls_exec_defined), static_argnums=0)(
            namespace["made_by_exec"], 3.0)
    note = "\n".join(info.value.__notes__)
    assert "made_by_exec" in note and "source is unavailable" in note


def test_callee_without_source_without_branches_is_staged_around():
    namespace = {}
    exec("def affine(x):\n    return 3 * x + 1\n", namespace)
    out = jax.jit(autograph.convert(calls_exec_defined), static_argnums=0)(
        namespace["affine"], 1.0)
    assert float(out) == calls_exec_defined(namespace["affine"], 1.0) == 14.0
