"""Golden generated code: the to_code output is part of the product.

Update these deliberately when the output improves.
"""

import autograph


def huber_loss(a, delta=1.0):
    if abs(a) <= delta:
        loss = a * a / 2
    else:
        loss = delta * (abs(a) - delta / 2)
    return loss


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def row_sum(x):
    z = 0.0
    for i in range(500):
        z += x[i]
    return z


HUBER_LOSS = '''\
def huber_loss(a, delta=1.0):

    def if_true(loss):
        loss = a * a / 2
        return loss

    def if_false(loss):
        loss = delta * (abs(a) - delta / 2)
        return loss
    loss = ag__.if_stmt(abs(a) <= delta, if_true, if_false, (ag__.Undefined('loss'),))
    return loss
'''

COLLATZ = '''\
def collatz(n):
    steps = 0

    def loop_test(n, steps):
        return n != 1

    def loop_body(n, steps):

        def if_true(n):
            n = n // 2
            return n

        def if_false(n):
            n = 3 * n + 1
            return n
        n = ag__.if_stmt(n % 2 == 0, if_true, if_false, (n,))
        steps += 1
        return (n, steps)
    n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps), literal_steps={'steps': (1, 0)}, compares=('n', 1))
    return steps
'''  # noqa: E501 - the generated line as it is

ROW_SUM = '''\
def row_sum(x):
    z = 0.0

    def loop_body(i, z):
        z += x[i]
        return z
    z = ag__.for_stmt(ag__.range_(500), loop_body, (z,))
    return z
'''


def test_huber_loss_code():
    assert autograph.to_code(huber_loss) == HUBER_LOSS


def test_collatz_code():
    assert autograph.to_code(collatz) == COLLATZ


def test_row_sum_code():
    assert autograph.to_code(row_sum) == ROW_SUM
