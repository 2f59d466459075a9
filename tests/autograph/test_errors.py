"""Errors raised while converted code runs or traces name the user's file and line.

Each case asserts the exception type, the user's ``file:line`` in the formatted
traceback (with the source line shown) and the key words of our explanation.
"""

from __future__ import annotations

import io
import linecache
import os
import pdb
import traceback

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError, StagingTypeError

RUNTIME_DIR = os.path.dirname(autograph.runtime.__file__)


def line_of(fn, k):
    """The line ``k`` lines below ``fn``'s ``def``."""
    return fn.__code__.co_firstlineno + k


def formatted(excinfo) -> str:
    return "".join(traceback.format_exception(excinfo.value))


def assert_user_frame(text, fn, k, source):
    """The formatted traceback shows ``fn``'s line ``k`` as a frame, with its source."""
    assert f'File "{__file__}", line {line_of(fn, k)}' in text
    assert source in text


# -- user code failing inside staged regions -----------------------------------------

def shape_error_in_loop(x, n):
    i = 0
    while i < n:
        x = x + jnp.dot(x, jnp.ones((4, 4)))
        i += 1
    return x


def test_shape_error_in_staged_loop_names_user_lines():
    with pytest.raises(TypeError, match="dot_general") as excinfo:
        jax.jit(autograph.convert(shape_error_in_loop))(jnp.ones(3), jnp.int32(2))
    text = formatted(excinfo)
    assert_user_frame(text, shape_error_in_loop, 2, "while i < n:")
    assert_user_frame(text, shape_error_in_loop, 3, "x = x + jnp.dot(x, jnp.ones((4, 4)))")
    assert RUNTIME_DIR not in text          # the runtime's frames are dropped
    assert "During handling" not in text


def type_error_in_branch(x):
    if x > 0:
        y = x + "a"
    else:
        y = x
    return y


@pytest.mark.parametrize("arg", [1, jnp.float32(1.0)], ids=["python", "traced"])
def test_type_error_in_branch(arg):
    fn = autograph.convert(type_error_in_branch)
    run = fn if isinstance(arg, int) else jax.jit(fn)
    with pytest.raises(TypeError, match="unsupported operand") as excinfo:
        run(arg)
    text = formatted(excinfo)
    if not isinstance(arg, int):   # (with Python values the twin runs: the original's frames)
        assert_user_frame(text, type_error_in_branch, 1, "if x > 0:")
    assert_user_frame(text, type_error_in_branch, 2, 'y = x + "a"')
    assert RUNTIME_DIR not in text
    assert "During handling" not in text     # one error, not a chain of retries


def failing_assert(x):
    for i in range(3):
        assert i < 2, "i too large"
        x = x + i
    return x


def test_failing_assert_names_user_line():
    with pytest.raises(AssertionError, match="i too large") as excinfo:
        autograph.convert(failing_assert)(1)
    assert_user_frame(formatted(excinfo), failing_assert, 2, 'assert i < 2, "i too large"')


def test_runtime_frames_kept_when_jax_filtering_is_off():
    jax.config.update("jax_traceback_filtering", "off")
    try:
        with pytest.raises(TypeError) as excinfo:
            jax.jit(autograph.convert(type_error_in_branch))(jnp.float32(1.0))
    finally:
        jax.config.update("jax_traceback_filtering", "auto")
    text = formatted(excinfo)
    assert RUNTIME_DIR in text
    assert_user_frame(text, type_error_in_branch, 2, 'y = x + "a"')


# -- branch and carry mismatches -------------------------------------------------------

def branch_dtype(x):
    if x > 0:
        y = jnp.int32(1)
    else:
        y = x * 2.0
    return y


def test_branch_dtype_mismatch():
    with pytest.raises(StagingTypeError) as excinfo:
        jax.jit(autograph.convert(branch_dtype))(jnp.float32(1.0))
    assert isinstance(excinfo.value, TypeError)
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(branch_dtype, 1)}" in message
    assert "'y'" in message and "int32[]" in message and "float32[]" in message
    assert "both branches" in message.lower()
    text = formatted(excinfo)
    assert_user_frame(text, branch_dtype, 1, "if x > 0:")
    assert "During handling" not in text


def carry_shape(x, n):
    acc = jnp.zeros(())
    i = 0
    while i < n:
        acc = jnp.append(acc, x)
        i += 1
    return acc


def test_loop_carry_shape_change():
    with pytest.raises(StagingTypeError) as excinfo:
        jax.jit(autograph.convert(carry_shape))(jnp.float32(1.0), jnp.int32(3))
    assert isinstance(excinfo.value, TypeError)
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(carry_shape, 3)}" in message
    assert "'acc'" in message and "float32[]" in message and "float32[2]" in message
    assert "before the loop" in message
    text = formatted(excinfo)
    assert_user_frame(text, carry_shape, 3, "while i < n:")
    assert "During handling" not in text


def one_branch(x):
    if x > 0:
        y = x
    return y


def test_variable_defined_in_one_branch():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(one_branch))(jnp.float32(1.0))
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(one_branch, 1)}" in message
    assert "'y'" in message and "only one branch" in message and "before the if" in message


# -- tracer conversion errors get our explanation -----------------------------------

def chained(x):
    y = 0.0
    if 0 < x < 1:
        y = x
    return y


def explicit_bool(x):
    y = 0
    if bool(x > 0):
        y = 1
    return y


def int_of_tracer(x):
    n = int(x)
    return n


def min_of_tracer(x):
    return min(x, 1.0)


def test_constructs_that_once_failed_under_tracing_now_convert():
    for fn in (chained, explicit_bool, int_of_tracer, min_of_tracer):
        assert float(jax.jit(autograph.convert(fn))(jnp.float32(0.5))) == float(fn(0.5))


def lambda_filter(x):
    small = list(filter(lambda v: v < x, range(3)))
    return len(small)


LETTERS = "abc"   # (a list of numbers indexed by a traced int is a gather: issue 27.4)


def list_index_in_traced_loop(x, n):
    for i in range(n):
        x = x + ord(LETTERS[i])
    return x


@autograph.do_not_convert
def unconverted_helper(x):
    if x > 0:
        return x
    return -x


def calls_unconverted(x):
    return unconverted_helper(x) + 1


CONCRETE_CASES = [
    (lambda_filter, (jnp.float32(0.5),), 1, "small = list(filter(lambda v: v < x, range(3)))",
     "lambda_filter", jax.errors.TracerBoolConversionError, "`filter` with a lambda"),
    (list_index_in_traced_loop, (jnp.float32(0.0), jnp.int32(3)), 2, "x = x + ord(LETTERS[i])",
     "loop_body", jax.errors.TracerIntegerConversionError, "an index into a Python list"),
]


@pytest.mark.parametrize("fn, args, k, source, where, error, words", CONCRETE_CASES,
                         ids=[c[0].__name__ for c in CONCRETE_CASES])
def test_tracer_conversion_errors_are_explained(fn, args, k, source, where, error, words):
    with pytest.raises(error) as excinfo:
        jax.jit(autograph.convert(fn))(*args)
    assert isinstance(excinfo.value, TypeError)        # JAX's type, still a TypeError
    text = formatted(excinfo)
    assert_user_frame(text, fn, k, source)
    assert f"autograph: {__file__}:{line_of(fn, k)} (in {where})" in text
    assert words in text


def test_unconverted_callee_is_named():
    with pytest.raises(jax.errors.TracerBoolConversionError) as excinfo:
        jax.jit(autograph.convert(calls_unconverted))(jnp.float32(0.5))
    text = formatted(excinfo)
    assert_user_frame(text, calls_unconverted, 1, "return unconverted_helper(x) + 1")
    line = unconverted_helper.__code__.co_firstlineno + 2   # below the decorator and def
    assert f"autograph: {__file__}:{line} (in unconverted_helper)" in text
    assert "not converted by autograph" in text


def test_explanation_names_the_staged_region():
    with pytest.raises(jax.errors.TracerIntegerConversionError) as excinfo:
        jax.jit(autograph.convert(list_index_in_traced_loop))(jnp.float32(0.0), jnp.int32(3))
    text = formatted(excinfo)
    assert f"autograph: {__file__}:{line_of(list_index_in_traced_loop, 2)}" in text
    assert (f"inside the for loop at {__file__}:{line_of(list_index_in_traced_loop, 1)}"
            in text)


def raise_in_staged_branch(x):
    while x < 0:    # (an `if` ending in a raise is a run-time check: test_raises.py)
        raise ValueError("negative input")
    return x


def test_raise_in_staged_branch_is_explained():
    assert autograph.convert(raise_in_staged_branch)(1.0) == 1.0
    with pytest.raises(ValueError, match="negative input") as excinfo:
        jax.jit(autograph.convert(raise_in_staged_branch))(jnp.float32(1.0))
    text = formatted(excinfo)
    assert_user_frame(text, raise_in_staged_branch, 2, 'raise ValueError("negative input")')
    assert (f"inside the while loop at {__file__}:{line_of(raise_in_staged_branch, 1)}"
            in text)
    assert "checkify" in text


def test_python_mode_raise_has_no_note():
    with pytest.raises(ValueError) as excinfo:
        autograph.convert(raise_in_staged_branch)(-1.0)
    assert not getattr(excinfo.value, "__notes__", None)


def outer_calls_converted(x):
    return autograph.convert(lambda_filter)(x) * 2


def test_note_added_once_through_nested_converted_functions():
    with pytest.raises(jax.errors.TracerBoolConversionError) as excinfo:
        jax.jit(autograph.convert(outer_calls_converted))(jnp.float32(0.5))
    notes = [n for n in excinfo.value.__notes__ if n.startswith("autograph:")]
    assert len(notes) == 1


# -- errors survive JAX's transformations -------------------------------------------

TRANSFORMS = {
    "to_graph": lambda fn: autograph.to_graph(fn),
    "jit": lambda fn: jax.jit(autograph.convert(fn)),
    "vmap": lambda fn: jax.vmap(autograph.convert(fn)),
    # Under grad alone a comparison gives a concrete bool (Python control flow, as
    # the original): stage it with jit inside grad.
    "grad": lambda fn: jax.grad(autograph.to_graph(fn)),
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_branch_mismatch_survives_transformations(transform):
    arg = jnp.ones(2) if transform == "vmap" else jnp.float32(1.0)
    with pytest.raises(StagingTypeError) as excinfo:
        TRANSFORMS[transform](branch_dtype)(arg)
    assert f"{__file__}:{line_of(branch_dtype, 1)}" in str(excinfo.value)
    assert_user_frame(formatted(excinfo), branch_dtype, 1, "if x > 0:")


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_tracer_bool_error_survives_transformations(transform):
    arg = jnp.ones(2) if transform == "vmap" else jnp.float32(0.5)
    with pytest.raises(jax.errors.TracerBoolConversionError) as excinfo:
        TRANSFORMS[transform](lambda_filter)(arg)
    text = formatted(excinfo)
    assert_user_frame(text, lambda_filter, 1, "small = list(filter(lambda v: v < x, range(3)))")
    assert "`filter` with a lambda" in text


def shape_error_summed(x):
    i = 0
    while i < jnp.int32(2):
        x = x + jnp.dot(x, jnp.ones((4, 4)))
        i += 1
    return x.sum()


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_user_shape_error_survives_transformations(transform):
    arg = jnp.ones((2, 3)) if transform == "vmap" else jnp.ones(3)
    with pytest.raises(TypeError) as excinfo:
        TRANSFORMS[transform](shape_error_summed)(arg)
    assert_user_frame(formatted(excinfo), shape_error_summed, 3,
                      "x = x + jnp.dot(x, jnp.ones((4, 4)))")


# -- JAX's source information points at the user's lines ---------------------------

def staged(x):
    while x < 10:
        x = x * 2
    if x > 50:
        x = jnp.sin(x)
    return x


def test_jaxpr_source_info_names_user_lines():
    text = jax.make_jaxpr(autograph.convert(staged))(1.0).pretty_print(source_info=True)
    assert f"{__file__}:{line_of(staged, 2)}" in text            # x = x * 2
    assert f"{__file__}:{line_of(staged, 4)}" in text            # jnp.sin
    assert "staged.<locals>.loop_body" in text
    assert "__autograph_factory__" not in text


def test_hlo_metadata_names_user_lines():
    text = jax.jit(autograph.convert(staged)).lower(1.0).as_text(debug_info=True)
    assert f'"{__file__}":{line_of(staged, 2)}' in text
    assert f'"{__file__}":{line_of(staged, 4)}' in text


def test_source_info_holds_no_frame_of_autograph_itself():
    # The runtime's frames and the convert wrapper's are not the user's: JAX passes
    # over them (runtime/tracing.py), so what the runtime binds (the staged loop, the
    # cond) is placed at the user's statement, and lowering makes no location for them.
    from autograph import api
    from autograph.runtime import tracing

    text = jax.jit(autograph.convert(staged)).lower(1.0).as_text(debug_info=True)
    assert os.path.dirname(tracing.__file__) not in text
    assert api.__file__ not in text
    jaxpr = jax.make_jaxpr(autograph.convert(staged))(1.0)
    named = jaxpr.pretty_print(source_info=True)
    assert f"{__file__}:{line_of(staged, 1)}" in named            # the while
    assert f"{__file__}:{line_of(staged, 3)}" in named            # the if


# -- the generated code, for a debugger --------------------------------------------

def debugged(x):
    if x > 0:
        y = x + "a"
    else:
        y = x
    return y


def test_generated_source_is_not_stored_by_default():
    autograph.convert(debugged)(-1)
    assert not [name for name in linecache.cache if name.startswith("<autograph-generated")
                and "debugged" in name]


def test_set_debug_stores_generated_source_for_tracebacks_and_pdb():
    autograph.set_debug(store_source=True)
    try:
        fn = autograph.convert(debugged)
        with pytest.raises(TypeError) as excinfo:
            fn(1)
        name = (f"<autograph-generated debugged at {__file__}:"
                f"{debugged.__code__.co_firstlineno}>")
        assert "".join(linecache.getlines(name)) == autograph.to_code(debugged)
        text = formatted(excinfo)
        assert f'File "{name}", line' in text and "in if_true" in text
        assert "ag__.if_stmt(x > 0, if_true, if_false" in text    # a generated line

        out = io.StringIO()
        debugger = pdb.Pdb(stdin=io.StringIO("step\n" * 10 + "list\ncontinue\n"), stdout=out)
        debugger.use_rawinput = False
        assert debugger.runcall(fn, -1) == -1
        assert f"> {name}(" in out.getvalue()
        assert "def if_true(y):" in out.getvalue()
    finally:
        autograph.set_debug(store_source=False)
    assert fn(-1) == -1                  # back to code carrying the user's lines
    with pytest.raises(TypeError) as excinfo:
        fn(1)
    assert_user_frame(formatted(excinfo), debugged, 2, 'y = x + "a"')


# -- constructs that only fail once staged ------------------------------------------

counter = 0


def writes_global(x):
    global counter
    if x > 0:
        counter += 1
    return x


def make_writes_nonlocal():
    total = 0

    def writes_nonlocal(x):
        nonlocal total
        while x > 0:
            total += x
            x -= 1
        return total

    return writes_nonlocal


def test_global_assigned_in_branch_works_in_python_mode():
    global counter
    counter = 0
    assert autograph.convert(writes_global)(1) == 1
    assert autograph.convert(writes_global)(-1) == -1
    assert counter == 1


def test_global_assigned_in_staged_branch_is_a_conversion_error():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(writes_global))(jnp.float32(1.0))
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(writes_global, 2)}" in message
    assert "'counter'" in message and "`global`" in message and "local variable" in message


def test_nonlocal_assigned_in_loop():
    original = make_writes_nonlocal()
    assert autograph.convert(make_writes_nonlocal())(3) == original(3) == 6
    fn = make_writes_nonlocal()
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(fn))(jnp.int32(3))
    message = str(excinfo.value)
    line = fn.__code__.co_firstlineno + 2
    assert f"{__file__}:{line}" in message
    assert "'total'" in message and "`nonlocal`" in message and "while loop" in message


def try_around_condition(x):
    try:
        if x > 0:
            y = 1.0
        else:
            y = 2.0
    except ArithmeticError:
        y = 3.0
    return y


def try_before_condition(x):
    try:
        z = 1.0
    except TypeError:
        z = 2.0
    if x > 0:
        y = x
    else:
        y = -x
    return y + z


def test_try_around_python_condition_works():
    assert autograph.convert(try_around_condition)(1) == 1.0
    assert autograph.convert(try_around_condition)(-1) == 2.0


def test_try_around_traced_condition_is_a_conversion_error():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(try_around_condition))(jnp.float32(1.0))
    message = str(excinfo.value)
    # An `except` for what Python raises on values around traced `x`: at the `try`.
    assert f"{__file__}:{line_of(try_around_condition, 1)}" in message
    assert "computes with 'x'" in message
    assert "except" in message and "jnp.where" in message
    assert "try:" in message


def test_try_elsewhere_in_the_function_is_fine():
    assert jax.jit(autograph.convert(try_before_condition))(jnp.float32(-2.0)) == 3.0


def deletes_in_branch(x):
    y = x
    if x > 0:
        del y
    return y


def deletes_carried(x, n):
    y = x
    i = 0
    while i < n:
        y = y + 1
        del y
        y = i * 1.0
        i += 1
    return y


def test_del_in_branch_python_mode_as_original():
    assert autograph.convert(deletes_in_branch)(-1.0) == -1.0
    with pytest.raises(UnboundLocalError):
        autograph.convert(deletes_in_branch)(1.0)


def test_del_in_staged_branch_is_one_sided():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(deletes_in_branch))(jnp.float32(1.0))
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(deletes_in_branch, 2)}" in message
    assert "'y'" in message and "`del`" in message


def test_del_of_carried_variable_in_staged_loop():
    assert autograph.convert(deletes_carried)(1.0, 3) == deletes_carried(1.0, 3)
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(deletes_carried))(jnp.float32(1.0), jnp.int32(3))
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(deletes_carried, 3)}" in message
    assert "`del y`" in message and "after the loop" in message


# -- unsupported constructs found at conversion time --------------------------------

def generator(n):
    for i in range(n):
        yield i * i


async def coroutine(x):
    return x


@pytest.mark.parametrize("fn, k, words", [(generator, 2, "generator"),
                                          (coroutine, 0, "async functions")])
def test_unsupported_function_kinds(fn, k, words):
    with pytest.raises(ConversionError) as excinfo:
        autograph.to_code(fn)
    message = str(excinfo.value)
    assert f"{__file__}:{line_of(fn, k)}" in message and words in message
    source_line, caret = message.splitlines()[-2:]
    assert caret.strip() == "^"
    assert source_line[len(caret) - 1:].startswith("yield" if fn is generator else "async")


def test_runtime_errors_show_a_caret_under_the_statement():
    with pytest.raises(ConversionError) as excinfo:
        jax.jit(autograph.convert(one_branch))(jnp.float32(1.0))
    assert str(excinfo.value).endswith("\n    if x > 0:\n    ^")


CACHE = {}


def mutates_global_dict(x):
    for i in range(3):
        CACHE["v"] = x * i
    return x


def test_global_mutated_in_loop_is_not_state():
    CACHE.clear()
    assert autograph.convert(mutates_global_dict)(2) == 2
    assert CACHE == {"v": 4}
    assert "loop_body(i)" in autograph.to_code(mutates_global_dict)


def raise_on_python_value_in_staged_loop(x, n, limit):
    i = 0
    while i < n:
        if limit < 0:
            raise ValueError("negative limit")
        x = x + 1
        i += 1
    return x


def test_raise_under_a_python_if_in_a_staged_loop_raises_when_the_loop_runs():
    # Python raises only if the loop runs once: with a traced `n` that is decided
    # when the program runs, so the raise is a run-time check there (n = 0: none).
    fn = autograph.to_graph(raise_on_python_value_in_staged_loop, static_argnums=2)
    assert fn(jnp.float32(0.0), jnp.int32(2), 1) == 2.0
    assert fn(jnp.float32(0.0), jnp.int32(0), -1) == 0.0
    with pytest.raises(ValueError, match="negative limit") as excinfo:
        fn(jnp.float32(0.0), jnp.int32(2), -1)
    assert any("staged check" in n for n in getattr(excinfo.value, "__notes__", []))
