"""Generators and coroutines defined inside converted code stay Python, body and all.

A nested ``def`` with ``yield``, an ``async def`` and an async generator suspend and
resume; no converter may rewrite them (a converted generator body returned None
where Python gave an iterator; an ``await`` moved into a generated helper did not
compile). The converted function around them is converted as usual.
"""

import asyncio
import inspect

import jax
import jax.numpy as jnp

import autograph
from tests.differential import check


def squares_from_nested_generator(x):
    def gen(n):
        for i in range(n):
            yield i * i
    total = x
    for v in gen(4):
        total = total + v
    return total + sum(gen(3))


def generator_with_jumps_and_closure(x):
    scale = 3

    def gen(n):
        i = 0
        while True:
            i += 1
            if i > n:
                return
            if i == 2:
                continue
            yield i * scale
    out = []
    for v in gen(5):
        if v > 10:
            break
        out.append(v)
    if x > 0:
        x = x + len(out)
    return x, out


def yield_from_and_send(x):
    def inner():
        got = yield 1
        yield got * 2

    def outer():
        result = yield from inner()
        return result
    g = outer()
    first = next(g)
    second = g.send(x)
    return first, second


def generator_method_in_local_class(x):
    class Bag:
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            for item in self.items:
                if item:
                    yield item

    bag = Bag([0, 1, 2, 0, 3])
    if x > 0:
        x = x + sum(bag)
    return x


def drive(coroutine):
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine suspended")


def awaits_nested_coroutines(x):
    async def add_one(v):
        return v + 1

    async def chain(v):
        for k in range(5):
            if k == 3:
                return v
            v = await add_one(v)
        return v
    y = drive(chain(x))
    if y > 4:
        y = y * 2
    return y


def async_generator_and_async_for(n):
    async def agen(k):
        for i in range(k):
            if i % 2:
                continue
            yield i

    async def main():
        return [v async for v in agen(n)]
    return asyncio.run(main())


def generator_expression_and_lambda_generator(x):
    squares = (i * i for i in range(4))
    make = lambda: (yield x)  # noqa: E731
    g = make()
    return sum(squares) + next(g)


def test_nested_generator_runs_as_python():
    check(squares_from_nested_generator, 2.0)
    check(squares_from_nested_generator, 2)


def test_nested_generator_with_return_break_continue_and_closure():
    check(generator_with_jumps_and_closure, 1, compiled=False)
    check(generator_with_jumps_and_closure, -1, compiled=False)
    expected = generator_with_jumps_and_closure(1.0)
    out = jax.jit(autograph.convert(generator_with_jumps_and_closure))(1.0)
    assert float(out[0]) == expected[0] == 3.0 and out[1] == expected[1] == [3, 9]


def test_yield_from_and_send():
    check(yield_from_and_send, 5)
    check(yield_from_and_send, 2.5)


def test_generator_method_of_a_local_class():
    check(generator_method_in_local_class, 1.0, compiled=False)
    check(generator_method_in_local_class, -1.0, compiled=False)


def test_generator_method_of_a_local_class_compiled():
    # The object a staged `if` reaches through its closure is carried whole; its
    # Python ints reach each branch as Python values (conditionals._as_python_values).
    check(generator_method_in_local_class, 1.0)


def test_nested_coroutines_with_await():
    check(awaits_nested_coroutines, 1)
    check(awaits_nested_coroutines, 5.0)
    check(awaits_nested_coroutines, -2)


def test_nested_async_generator_and_async_comprehension():
    assert autograph.convert(async_generator_and_async_for)(6) == [0, 2, 4]


def test_generator_expression_and_generator_lambda():
    check(generator_expression_and_lambda_generator, 3, compiled=False)
    assert float(jax.jit(autograph.convert(generator_expression_and_lambda_generator))(
        jnp.float32(3))) == 17.0


def test_nested_definitions_are_left_as_written():
    code = autograph.to_code(generator_with_jumps_and_closure)
    generator = code[code.index("def gen(n)"):code.index("out = []")]
    assert "ag__" not in generator
    assert "yield (i * scale)" in generator and "continue" in generator
    code = autograph.to_code(awaits_nested_coroutines)
    coroutine = code[code.index("async def chain"):code.index("y = ")]
    assert "ag__" not in coroutine and "await add_one(v)" in coroutine
    assert "ag__.if_stmt" in code      # the function around them is converted


def test_nested_generator_keeps_its_kind():
    def make():
        def gen():
            yield 1

        async def co():
            return 1
        return gen, co

    gen, co = autograph.convert(make)()
    assert inspect.isgeneratorfunction(gen)
    assert inspect.iscoroutinefunction(co)
