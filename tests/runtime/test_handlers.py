# ruff: noqa: B012 - a `return` or `continue` in `finally` is the subject here
"""What an ``except`` or a jumping ``finally`` of converted code may discard
(runtime/handlers.py)."""

import contextlib
import dis

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.runtime import handlers


def raise_in_a_try_whose_finally_returns(n):
    y = -8
    try:
        try:
            int("x")
        except ValueError:
            pass
        if n > 5:
            raise ValueError("big")
        else:
            y = 91
    finally:
        return y


def raise_in_a_try_whose_finally_continues(n):
    y = 0
    for _ in range(3):
        try:
            if n > 5:
                raise ValueError("big")
            y += 1
        finally:
            continue
    return y


def helper_raising(n):
    if n > 5:
        raise ValueError("big")
    return n + 1


def helper_raise_in_a_try_whose_finally_returns(n):
    y = 0
    try:
        y = helper_raising(n)
    finally:
        return y


@pytest.mark.parametrize("fn", [raise_in_a_try_whose_finally_returns,
                                raise_in_a_try_whose_finally_continues,
                                helper_raise_in_a_try_whose_finally_returns])
def test_a_jumping_finally_does_not_discard_a_staged_raise(fn):
    # Traced `n`: the raise runs while tracing (a handler is around it) and the jump
    # would discard it for every input: to_graph gave the value of the raising
    # inputs (-8 where Python gives 91; found by the program fuzz, seed 41065).
    for n in (3, 7):
        assert autograph.convert(fn)(n) == fn(n)
    with pytest.raises(autograph.ConversionError, match="the `finally` of this `try` leaves"
                       ) as info:
        autograph.to_graph(fn)(jnp.int32(3))
    assert "ValueError(big)" in str(info.value) and __file__ in str(info.value)


@autograph.do_not_convert
def positive_part(x):
    return x if x > 0 else 0.0


def concretizes_in_a_try_whose_finally_returns(x):
    y = 0.0
    try:
        y = positive_part(x) + 1.0
    finally:
        return y


def test_a_jumping_finally_does_not_discard_jax_errors():
    # Python, holding values, raises none of them: discarding one computes the value
    # from before the `try` (0.0 where Python gives 3.0).
    assert autograph.convert(concretizes_in_a_try_whose_finally_returns)(2.0) == 3.0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        autograph.to_graph(concretizes_in_a_try_whose_finally_returns)(2.0)


class ReturnsFalse:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class ReturnsWhetherValueError:
    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        return kind is ValueError


@contextlib.contextmanager
def only_finally():
    try:
        yield
    finally:
        pass


@contextlib.contextmanager
def catching():
    try:
        yield
    except ValueError:
        pass


def test_may_suppress():
    assert handlers.may_suppress(contextlib.suppress(ValueError))
    assert handlers.may_suppress(contextlib.ExitStack())
    assert handlers.may_suppress(ReturnsWhetherValueError())
    assert handlers.may_suppress(catching())
    assert not handlers.may_suppress(ReturnsFalse())
    assert not handlers.may_suppress(only_finally())
    assert not handlers.may_suppress(jax.named_scope("s"))
    assert not handlers.may_suppress(contextlib.nullcontext())


def test_may_suppress_reads_a_user_s_code_once(monkeypatch):
    # The runtime's one reader of bytecode (docs/architecture.md): cached per code.
    handlers.may_suppress(ReturnsWhetherValueError())
    handlers.may_suppress(catching())
    monkeypatch.setattr(dis, "get_instructions", None)     # read again: a TypeError
    assert handlers.may_suppress(ReturnsWhetherValueError())
    assert handlers.may_suppress(catching())


def test_managed_is_the_with_statement():
    with handlers.managed(contextlib.suppress(KeyError)):
        raise KeyError(1)
    with handlers.managed(contextlib.nullcontext(5)) as value:
        assert value == 5
    with pytest.raises(ValueError), handlers.managed(ReturnsFalse()):
        raise ValueError
    with pytest.raises(TypeError, match="'int' object does not support the context"):
        handlers.managed(3)
    with pytest.raises(TypeError, match=r"\(missed __exit__ method\)"):
        handlers.managed(EnterOnly())
    with handlers.managed(Descriptors()) as value:
        assert value == "static"
    assert Descriptors.exited == [Descriptors]


class EnterOnly:
    def __enter__(self):
        return self


class Descriptors:
    exited = []

    @staticmethod
    def __enter__():
        return "static"

    @classmethod
    def __exit__(cls, *exc):
        cls.exited.append(cls)
        return False
