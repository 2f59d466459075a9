"""runtime/types_of.py: isinstance, type, str and repr of the Python numbers that
staging made traced (a staged `if` carries `m = 0` out as a traced scalar)."""

import contextlib
import io

import jax
import jax.numpy as jnp
import pytest

import autograph


def int_stepped(x):
    m = 0
    if x > 0:
        m = m + 1
    return isinstance(m, int), isinstance(m, float), isinstance(m, jax.Array), type(m) is int


def float_stepped(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    return isinstance(s, float), isinstance(s, (int, float)), type(s) is float


def nested_and_looped(x):
    m = 0
    for i in range(3):
        if x > i:
            m = m + 1
            if x > 1:
                m = m + 2
    return isinstance(m, int)


def either_type_asked_for_both(x):
    k = 3
    if x > 1:
        k = 4.0
    return isinstance(k, (int, float))


@pytest.mark.parametrize("fn", [int_stepped, float_stepped, nested_and_looped,
                                either_type_asked_for_both])
def test_isinstance_answers_for_the_python_number(fn):
    for x in (2.0, -1.0):
        expected = fn(x)
        assert autograph.convert(fn)(x) == expected
        staged = autograph.to_graph(fn)(x)
        assert tuple(map(bool, staged)) == expected if type(expected) is tuple \
            else bool(staged) == expected


def either_type_asked_for_one(x):
    k = 3
    if x > 1:
        k = 4.0
    return isinstance(k, int)


def either_type_of(x):
    k = 3
    if x > 1:
        k = 4.0
    return type(k)


def int_stepped_then_computed(x):
    m = 0
    if x > 0:
        m = m + 1
    m = m * 2
    return isinstance(m, int)


def number_or_array(x):
    m = 0
    if x > 0:
        m = m + x
    return isinstance(m, int)


def float_stepped_then_doubled_is_an_array(x):
    m = 1.5
    if x > 0:
        m = m + 1.0
    n = m * 2
    return isinstance(n, jax.Array)   # (Python: a float; JAX's answer was True)


def weak_scalar_is_a_number(x):
    return isinstance(x * 2, (int, float))


@pytest.mark.parametrize("fn, line, match", [
    (float_stepped_then_doubled_is_an_array, 5, "may stand for a Python number"),
    (weak_scalar_is_a_number, 1, "may stand for a Python number"),
    (either_type_asked_for_one, 4, "one type on one path"),
    (either_type_of, 4, "one type on one path"),
    (int_stepped_then_computed, 5, "may stand for a Python number"),
    (number_or_array, 4, "an array \\(or a number of another type\\) on the other"),
])
def test_an_answer_python_decides_by_a_traced_condition_is_refused(fn, line, match):
    with pytest.raises(autograph.ConversionError, match=match) as info:
        autograph.to_graph(fn)(2.0)
    assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(info.value)


def str_kept(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    return s, len(str(s))


def repr_kept(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    return repr(s)


def fstring_kept(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    return s, len(f"{s}")


@pytest.mark.parametrize("fn", [str_kept, repr_kept, fstring_kept])
def test_the_text_of_a_traced_value_outside_print_is_refused(fn):
    with pytest.raises(autograph.ConversionError, match="traced value") as info:
        autograph.to_graph(fn)(2.0)
    assert f"{__file__}:{fn.__code__.co_firstlineno + 4}:" in str(info.value)


def printed_text(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    print("v=" + str(s), repr(s) + "!", f"<{s}>")
    return s


def test_the_text_of_a_traced_value_inside_print_is_printed_when_run():
    for x in (2.0, -1.0):
        expected = io.StringIO()
        with contextlib.redirect_stdout(expected):
            printed_text(x)
        got = io.StringIO()
        with contextlib.redirect_stdout(got):
            autograph.to_graph(printed_text)(x)
            jax.effects_barrier()
        assert got.getvalue() == expected.getvalue()


def test_values_that_are_not_traced_are_the_builtins():
    def f(x):
        return isinstance(x, int), type(x), str(x), repr(x), type("T", (), {}).__name__

    assert autograph.convert(f)(3) == f(3)
    assert autograph.convert(f)("a") == f("a")
    assert bool(autograph.to_graph(lambda x: isinstance(x, jax.Array))(jnp.int32(1)))


def raises_with_text(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    if s > 1:
        raise ValueError("bad s=" + str(s) + " " + repr(s))
    return s


def test_the_text_of_a_traced_value_in_a_raise_message_is_made_when_run():
    with pytest.raises(ValueError) as python:
        raises_with_text(2.0)
    with pytest.raises(ValueError) as staged:
        jax.block_until_ready(autograph.to_graph(raises_with_text)(2.0))
    assert str(staged.value) == str(python.value) == "bad s=1.5 1.5"


def formatted_kept(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    return s, len(format(s, ".2f"))


def formatted_printed(x):
    s = 0.5
    if x > 0:
        s = s + 1.0
    print(format(s, ".2f") + "|" + format(s, ">6"))
    return s


def test_format_of_a_traced_value_is_refused_outside_print_and_printed_inside():
    with pytest.raises(autograph.ConversionError, match="traced value") as info:
        autograph.to_graph(formatted_kept)(2.0)
    assert f"{__file__}:{formatted_kept.__code__.co_firstlineno + 4}:" in str(info.value)
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        formatted_printed(2.0)
    got = io.StringIO()
    with contextlib.redirect_stdout(got):
        autograph.to_graph(formatted_printed)(2.0)
        jax.effects_barrier()
    assert got.getvalue() == expected.getvalue()


def _get_class(self):
    return type(self)    # converted: type_ must not read __class__ again


class ClassProperty:
    __class__ = property(autograph.convert(_get_class))

    def kind(self):
        return isinstance(self, ClassProperty), type(self) is ClassProperty


def stepped_if_its_class(x):
    obj = ClassProperty()
    return x + 1 if type(obj) is ClassProperty and isinstance(obj, ClassProperty) else x


def test_a_class_property_calling_type_does_not_recurse():
    # (CPython's test_descr: the converted type() read __class__ to look for a
    # tracer, whose property called type() again: a crash of the interpreter. Only
    # under a trace does the converted type() run: in Python mode it is the builtin.)
    obj = ClassProperty()
    assert autograph.convert(ClassProperty.kind)(obj) == ClassProperty.kind(obj)
    assert autograph.convert(_get_class)(obj) is ClassProperty
    assert float(autograph.to_graph(stepped_if_its_class)(1.0)) == stepped_if_its_class(1.0)
    assert float(jax.jit(autograph.convert(stepped_if_its_class))(1.0)) == 2.0
