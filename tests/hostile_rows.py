"""The functions of the hostile-input table (``tests/test_hostile_input.py``).

They live outside the test module so that pytest's assertion rewriting does not
change the originals' ``assert`` messages (conversion reads the unrewritten source).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

SAME = "same"


def error(line_offset=0, *words):
    return ("error", line_offset, words)


def generator(n):
    yield n
    yield n + 1


async def coroutine(x):
    if x > 0:
        x = x - 1
    return x


async def async_generator(n):
    for i in range(n):
        yield i


class AClass:
    def __init__(self, v):
        self.v = v


def lambda_in_default(x, g=lambda v: v + 1 if v > 0 else v - 1):
    if x > 0:
        y = g(x)
    else:
        y = -g(x)
    return y


def user_variable_named_runtime(x):
    ag__ = 3
    if x > 0:
        ag__ = ag__ + x
    return ag__


def shadows_builtins(x):
    range = lambda n: [n, n + 1]  # noqa: E731
    print = []                    # a list called print
    len = 7
    total = 0
    for i in range(x):
        if i > 0:
            print.append(i)
            total += i + len
    return total, print


def shadows_generated_names(x):
    loop_body = 1
    if_true = 2
    if_false = 3
    loop_test = 4
    itr = 0
    while x > 0:
        if x % 2:
            loop_body += x
        else:
            if_true += x
        x -= 1
    for itr_1, itr in enumerate(range(3)):
        if_false += itr + itr_1
    return loop_body, if_true, if_false, loop_test, itr


def nested_def_named_like_helpers(x):
    def loop_body(v):
        return v * 2

    def if_true(v):
        return v + 100

    for i in range(3):
        if x > i:
            x = loop_body(x)
        else:
            x = if_true(x)
    return x


def star_args(*args, **kwargs):
    total = 0
    for a in args:
        if a > 1:
            total += a
    for key in sorted(kwargs):
        total += kwargs[key] if key != "skip" else 0
    return total


def keyword_only(a, *, b=2, c):
    if a > b:
        a = a - c
    return a, b, c


def positional_only(a, b=1, /):
    while a > b:
        a -= 2
    return a


def walrus_in_if_test(x):
    if (y := x * 2) > 4:
        x = y + 1
    return x, y


def walrus_in_if_body(x):
    y = 0
    if x > 0:
        z = (y := x * 3) + 1
    else:
        z = 0
    return y, z


def walrus_in_while_test(n):
    count = 0
    while (n := n - 1) > 0:
        count += 1
    return count, n


def match_statement(x):
    y = 0
    match x:
        case 0:
            y = 10
        case 1 | 2:
            if x > 1:
                y = 20
            else:
                y = 21
        case _:
            y = x
    return y


def fstrings(x):
    if x > 1:
        s = f"big {x:>4} {x!r}"
    else:
        s = f"small {x}"
    return s


COUNTER = 0


def global_statement(x):
    global COUNTER
    if x > 0:
        COUNTER += x
    return COUNTER


def nonlocal_statement(x):
    total = 0

    def add(v):
        nonlocal total
        if v > 0:
            total += v

    for i in range(x):
        add(i)
    return total


def del_statement(x):
    y = x + 1
    z = 0
    if x > 0:
        z = y
        del y
    return z


def del_in_loop(x):
    for i in range(x):
        tmp = i * 2
        x += tmp
        del tmp
    return x


EVENTS = []


@contextlib.contextmanager
def recording(tag):
    EVENTS.append(("enter", tag))
    try:
        yield tag
    finally:
        EVENTS.append(("exit", tag))


def with_statement(x):
    if x > 0:
        with recording("pos") as tag:
            x = x + len(tag)
    return x


def try_finally(x):
    try:
        if x > 0:
            x = x * 2
    finally:
        EVENTS.append(("finally", x))
    return x


def try_except(x):
    try:
        if x > 1:
            raise ValueError("big")
        y = x
    except ValueError:
        y = -1
    return y


def raises_in_branch(x):
    if x > 0:
        raise KeyError(f"positive {x}")
    return x


def nested_function_and_class(x):
    class Box:
        def __init__(self, v):
            self.v = v

    def double(b):
        return Box(b.v * 2)

    box = Box(x)
    while box.v < 20:
        box = double(box)
    return box.v


def comprehension_with_if(x):
    values = [i for i in range(x) if i % 2]
    total = 0
    for v in values:
        total += v if v > 2 else -v
    return total, {k: k * k for k in values}


def annotated(x: int) -> int:
    y: int = 0
    if x > 0:
        y: int = x
    return y


def lambdas_in_body(x):
    f = lambda v: v * 2 if v > 0 else -v  # noqa: E731
    if x > 0:
        x = f(x)
    return x


def inner_generator(x):
    def gen(n):
        yield from range(n)

    total = 0
    for v in gen(x):
        total += v
    return total


def recursive(n):
    return 1 if n <= 1 else n * recursive(n - 1)


def docstring_only():
    """Nothing else."""


def tuple_targets_and_starred(x):
    a, *rest = [x, x + 1, x + 2]
    for i, (p, q) in enumerate([(1, 2), (3, 4)]):
        if p > x:
            a += q * i
    return a, rest


def assert_and_print(x):
    if x > 0:
        print("positive", x)
    assert x != 5, "not five"
    return x


def while_else(x):
    while x > 0:
        x -= 3
    else:
        x = -x
    return x


def for_else(x):
    for i in range(x):
        x += i
    else:
        x = x * 10
    return x


def chained_comparisons(x):
    if 0 < x <= 5:
        y = 1
    else:
        y = 2 if -3 < x < 0 else 3
    return y


def decorated_with_effects(x):
    return x + 1


EFFECTS = []


def _effect_decorator(fn):
    EFFECTS.append("decorated")
    return fn


@_effect_decorator
def has_effectful_decorator(x):
    if x > 0:
        x = -x
    return x


exec_namespace = {}
exec("def made_by_exec(x):\n    if x > 0:\n        x = x - 1\n    return x\n", exec_namespace)
made_by_exec = exec_namespace["made_by_exec"]
made_by_lambda = lambda x: x + 1  # noqa: E731
partial_fn = functools.partial(keyword_only, c=1)


ROWS = [
    ("generator", generator, (3,), SAME),      # runs as it is (issue 27.7)
    ("coroutine", coroutine, (2,), error(0, "async")),
    ("async generator", async_generator, (2,), error(0, "async")),
    ("class", AClass, (1,), error(None, "function")),
    ("builtin len", len, ([1],), error(None, "function")),
    ("C function math.sqrt", math.sqrt, (4.0,), error(None, "function")),
    ("numpy ufunc", np.add, (1, 2), error(None, "function")),
    ("functools.partial", partial_fn, (3,), SAME),   # converts its function
    ("function made by exec", made_by_exec, (3,), error(None, "source")),
    ("lambda", made_by_lambda, (3,), SAME),
    ("lambda in a default argument", lambda_in_default, (3,), SAME),
    ("user variable named ag__", user_variable_named_runtime, (2,), SAME),
    ("variables named range/print/len", shadows_builtins, (4,), SAME),
    ("variables named like generated helpers", shadows_generated_names, (5,), SAME),
    ("nested defs named loop_body/if_true", nested_def_named_like_helpers, (2,), SAME),
    ("star-args", star_args, (1, 2, 3), SAME),
    ("keyword-only args", keyword_only, (5,), SAME),
    ("positional-only args", positional_only, (9,), SAME),
    ("walrus in if test", walrus_in_if_test, (3,), SAME),
    ("walrus in if body", walrus_in_if_body, (3,), SAME),
    ("walrus in while test", walrus_in_while_test, (5,), SAME),
    ("match statement", match_statement, (2,), SAME),
    ("f-strings", fstrings, (7,), SAME),
    ("global", global_statement, (3,), SAME),
    ("nonlocal", nonlocal_statement, (5,), SAME),
    ("del in a branch", del_statement, (3,), SAME),
    ("del in a loop", del_in_loop, (3,), SAME),
    ("with", with_statement, (3,), SAME),
    ("try/finally", try_finally, (3,), SAME),
    ("try/except", try_except, (3,), SAME),
    ("raise in a branch", raises_in_branch, (3,), SAME),
    ("nested function and class", nested_function_and_class, (3,), SAME),
    ("comprehensions", comprehension_with_if, (6,), SAME),
    ("annotations", annotated, (3,), SAME),
    ("lambdas in the body", lambdas_in_body, (3,), SAME),
    ("nested generator", inner_generator, (4,), SAME),
    ("recursion", recursive, (5,), SAME),
    ("docstring only", docstring_only, (), SAME),
    ("starred and tuple targets", tuple_targets_and_starred, (1,), SAME),
    ("assert and print", assert_and_print, (3,), SAME),
    ("assert failing", assert_and_print, (5,), SAME),
    ("while/else", while_else, (7,), SAME),
    ("for/else", for_else, (3,), SAME),
    ("chained comparisons", chained_comparisons, (-1,), SAME),
    ("effectful decorator", has_effectful_decorator, (2,), SAME),
]


