"""Directives are recognised by what the called name is bound to, checked at conversion."""

import inspect

import jax
import jax.numpy as jnp
import pytest

import autograph
import autograph as ag
from autograph import ConversionError, directives, runtime, stack
from autograph import set_element_type as declare_type
from autograph import set_loop_options as loop_options
from tests.differential import check


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _conversion_error(fn):
    with pytest.raises(ConversionError) as info:
        autograph.to_code(fn)
    return str(info.value)


# -- one definition of the options ---------------------------------------------------


def test_the_options_are_the_directive_signature_and_the_runtime_keywords():
    params = inspect.signature(autograph.set_loop_options).parameters
    assert directives.LOOP_OPTIONS == tuple(params) == ("maximum_iterations", "checkpoint")
    assert all(p.kind is p.KEYWORD_ONLY for p in params.values())
    for operator in (runtime.while_stmt, runtime.for_stmt):
        runtime_params = inspect.signature(operator).parameters
        for name, param in params.items():
            assert runtime_params[name].kind is param.KEYWORD_ONLY
            assert runtime_params[name].default == param.default


# -- recognised by identity -------------------------------------------------------------


def halvings_aliased(x):
    n = 0
    while x > 1:
        loop_options(maximum_iterations=5)
        x = x / 2
        n += 1
    return x, n


def halvings_through_module(x):
    n = 0
    while x > 1:
        ag.set_loop_options(maximum_iterations=5, checkpoint=False)
        x = x / 2
        n += 1
    return x, n


@pytest.mark.parametrize("fn", [halvings_aliased, halvings_through_module])
def test_an_alias_or_a_module_attribute_is_the_directive(fn):
    code = autograph.to_code(fn)
    assert "maximum_iterations=5" in code and "loop_options(" not in code
    assert autograph.convert(fn)(100.0) == fn(100.0) == (0.78125, 7)
    x, n = autograph.to_graph(fn)(100.0)
    assert float(x) == 100.0 / 32 and int(n) == 5     # the bound is honoured


def make_lookalike():
    seen = []
    recording = [True]

    def set_loop_options(**options):
        if recording[0]:
            seen.append(options)

    def doubles(x):
        while x < 10:
            set_loop_options(maximum_iterations=1)
            x = x * 2
        return x

    return doubles, seen, recording


def test_a_user_function_of_the_same_name_is_an_ordinary_call():
    doubles, seen, recording = make_lookalike()
    assert doubles(1) == 16 and len(seen) == 4
    code = autograph.to_code(doubles)
    assert "ag__.converted_call(set_loop_options)(maximum_iterations=1)" in code
    assert "maximum_iterations=1)" not in code.split("ag__.while_stmt")[1]
    assert autograph.convert(doubles)(1) == 16 and len(seen) == 8   # called each time
    # Staged, the body runs once while tracing: the append to `seen` would happen once,
    # not per iteration, so it is refused at the helper's line (issue 26.6) ...
    with pytest.raises(autograph.ConversionError, match="changes the Python list 'seen'"):
        autograph.to_graph(doubles)(1.0)
    recording[0] = False   # ... and without the side effect it stages
    assert float(autograph.to_graph(doubles)(1.0)) == 16.0            # not bounded to 1


def for_with_only_a_directive(xs):
    for _ in xs:
        autograph.set_loop_options(checkpoint=True)
    return xs


def test_a_directive_alone_in_its_body_leaves_pass():
    code = autograph.to_code(for_with_only_a_directive)
    assert "pass" in code and "checkpoint=True" in code
    check(for_with_only_a_directive, jnp.arange(3.0))


def non_literal_bound(x, n):
    while x < 10.0:
        autograph.set_loop_options(maximum_iterations=n)
        x = x * 2.0
    return x


def test_values_that_are_not_literals_are_left_to_the_runtime():
    assert "maximum_iterations=n" in autograph.to_code(non_literal_bound)
    assert autograph.convert(non_literal_bound)(1.0, 3) == 16.0
    assert float(jax.jit(autograph.convert(non_literal_bound), static_argnums=1)(1.0, 3)) == 8.0


# -- misplaced or wrong directives are refused at the user's line --------------------------


def second_statement(x):
    while x < 10.0:
        x = x * 2.0
        autograph.set_loop_options(maximum_iterations=3)
    return x


def inside_an_if(x):
    for i in range(3):
        if i > 1:
            autograph.set_loop_options(maximum_iterations=3)
        x = x + i
    return x


def outside_a_loop(x):
    autograph.set_loop_options(maximum_iterations=3)
    return x


def in_a_function_nested_in_a_loop(x):
    while x < 10.0:
        def step(v):
            autograph.set_loop_options(checkpoint=True)
            return v * 2.0
        x = step(x)
    return x


@pytest.mark.parametrize("fn, where", [
    (second_statement, "elsewhere in a loop"),
    (inside_an_if, "elsewhere in a loop"),
    (outside_a_loop, "outside any loop"),
    (in_a_function_nested_in_a_loop, "outside any loop"),
])
def test_a_misplaced_set_loop_options_is_refused(fn, where):
    message = _conversion_error(fn)
    assert f"{__file__}:{_line_of(fn, 'set_loop_options(')}" in message
    assert "must be the first statement of a loop body" in message and where in message


def float_bound(x):
    while x < 10.0:
        autograph.set_loop_options(maximum_iterations=2.5)
        x = x * 2.0
    return x


def negative_bound(x):
    while x < 10.0:
        autograph.set_loop_options(maximum_iterations=-1)
        x = x * 2.0
    return x


def string_checkpoint(x):
    while x < 10.0:
        autograph.set_loop_options(checkpoint="yes")
        x = x * 2.0
    return x


def positional(x):
    while x < 10.0:
        autograph.set_loop_options(3)
        x = x * 2.0
    return x


def unpacked(x, options):
    while x < 10.0:
        autograph.set_loop_options(**options)
        x = x * 2.0
    return x


def unknown(x):
    for _ in range(3):
        loop_options(max_iterations=3)
        x = x * 2.0
    return x


@pytest.mark.parametrize("fn, words", [
    (float_bound, "must be an int, got float"),
    (negative_bound, "must be >= 0, got -1"),
    (string_checkpoint, "must be True or False, got 'yes'"),
    (positional, "keyword arguments only"),
    (unpacked, "written out as keywords"),
    (unknown, "unknown option 'max_iterations'; it takes maximum_iterations, checkpoint"),
])
def test_wrong_options_are_refused_at_conversion(fn, words):
    message = _conversion_error(fn)
    assert f"{__file__}:{_line_of(fn, 'loop_options(')}" in message
    assert words in message


# -- set_element_type goes through the same resolution -------------------------------------


def declared_by_alias(xs):
    z = []
    declare_type(z, jnp.float32)
    for x in xs:
        z.append(x * 2)
    return stack(z)


def make_element_type_lookalike():
    def set_element_type(lst, dtype):
        return [dtype]

    def not_declared(z):
        set_element_type(z, 1)
        return z

    return not_declared


def test_set_element_type_is_recognised_by_identity_too():
    assert "z = declare_type(z, jnp.float32)" in autograph.to_code(declared_by_alias)
    check(declared_by_alias, jnp.arange(3))
    lookalike = make_element_type_lookalike()
    code = autograph.to_code(lookalike)
    assert "z = " not in code and "converted_call(set_element_type)(z, 1)" in code
    assert autograph.convert(lookalike)([5]) == lookalike([5]) == [5]


def declared_only_by_alias(xs):
    z = [x * 2 for x in xs]
    declare_type(z, jnp.float32)       # no .append or .pop anywhere: still rebinds z
    return len(z)


def declared_only_through_module(xs):
    z = list(xs)
    ag.set_element_type(z, jnp.float32)
    return len(z)


@pytest.mark.parametrize("fn, call", [(declared_only_by_alias, "declare_type"),
                                      (declared_only_through_module,
                                       "ag.set_element_type")])
def test_a_declaration_alone_is_rewritten_whatever_its_name(fn, call):
    # The lists converter skips functions with nothing of its own to rewrite; the
    # directives converter's mark on the call is what it looks for, not a name.
    assert f"z = {call}(z, jnp.float32)" in autograph.to_code(fn)
    check(fn, [1.0, 2.0, 3.0])
