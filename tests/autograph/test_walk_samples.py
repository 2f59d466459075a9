"""Functions whose statements the statement-only converters rewrite (jumps, raises,
try, assert), with lambdas and nested definitions in expressions around them."""

import jax.numpy as jnp


def jumps_in_loops(xs, n):
    total = 0.0
    for x in xs:
        if x > n:
            break
        if x < 0:
            continue
        total += (lambda v: v * 2)(x)
    while n > 0:
        n -= 1
        if n == 3:
            return total
    return total + sorted([1, 2], key=lambda v: -v)[0]


def raises_and_asserts(x, n):
    assert n >= 0, "n must not be negative"
    if n > 100:
        raise ValueError(f"too many: {n}")
    try:
        y = jnp.sqrt(x) if n else x
    except ValueError:
        y = x
    finally:
        n = n + 1

    def inner(v):
        if v > 0:
            return v
        return -v
    return inner(y) + n


class Holder:
    def method(self, x):
        for i in range(3):
            if i == 1:
                continue
            x = x + i
        return x


FUNCTIONS = [jumps_in_loops, raises_and_asserts, Holder.method]
