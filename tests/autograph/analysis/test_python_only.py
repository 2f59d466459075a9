"""``stays_python``: which nested definitions are generators or coroutines."""

import textwrap

import gast

from autograph.analysis import first_yield, stays_python


def _definitions(source):
    tree = gast.parse(textwrap.dedent(source))
    return {node.name: node for node in gast.walk(tree)
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef))}


SOURCE = """
    def outer(x):
        def plain(n):
            return [i for i in range(n)]

        def gen(n):
            if n:
                while True:
                    yield n

        def delegates():
            result = yield from gen(2)
            return result

        def holds_a_generator():
            def inner():
                yield 1
            return (i for i in inner())

        async def co():
            return 1

        async def agen():
            yield 1
        return plain, gen, delegates, holds_a_generator, co, agen
"""


def test_generators_and_coroutines_stay_python():
    defs = _definitions(SOURCE)
    assert {name for name, node in defs.items() if stays_python(node)} == {
        "gen", "delegates", "co", "agen", "inner"}


def test_a_function_holding_a_generator_or_generator_expression_is_not_one():
    defs = _definitions(SOURCE)
    assert first_yield(defs["outer"]) is None
    assert first_yield(defs["holds_a_generator"]) is None
    assert first_yield(defs["plain"]) is None


def test_first_yield_is_the_first_in_source_order():
    fn = _definitions("""
        def g(a):
            if a:
                x = yield 1
            yield 2
    """)["g"]
    assert first_yield(fn).lineno == 4


def test_lambda_and_other_nodes():
    tree = gast.parse("f = lambda: (yield)\ng = lambda: 1\n")
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)]
    assert [stays_python(n) for n in lambdas] == [True, False]
    assert not stays_python(tree.body[0])
