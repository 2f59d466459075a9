"""The SPEC's seed examples, written as plain eager-style Python.

Nothing here is decorated: `autograph demo` converts these functions at run
time, and the tests and benchmarks import them. They live in a real source
file so that conversion can read their source.
"""


def huber_loss(a, delta=1.0):
    """Huber loss of ``a``: quadratic near zero, linear beyond ``delta``."""
    if abs(a) <= delta:
        loss = a * a / 2
    else:
        loss = delta * (abs(a) - delta / 2)
    return loss


def collatz(n):
    """Number of Collatz steps from ``n`` down to 1."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def count_to_five(n):
    """Count ``n`` up to 5, printing each step, if ``n`` is not negative."""
    if n >= 0:
        while n < 5:
            n += 1
            print(n)
    return n
