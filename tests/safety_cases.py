"""Functions for tests/test_safety.py (outside the test module: no assert rewriting)."""

EFFECTS = []


def counted_default():
    EFFECTS.append("default evaluated")
    return 3


def with_effectful_default(x, k=counted_default()):  # noqa: B008 - on purpose
    if x > k:
        x = x - k
    return x


def body_with_effects(x):
    EFFECTS.append("body ran")

    class Inner:
        EFFECTS.append("class body ran")

    if x > 0:
        x = -x
    return x, Inner.__name__


def uses_generated_names(x, n):
    ag__ = 1
    did_return = 2
    retval = 3
    break_ = 4
    continue_ = 5
    loop_body = 6
    loop_test = 7
    if_true = 8
    if_false = 9
    itr = 10
    for i in range(n):
        if i > x:
            break
        if i == 1:
            continue
        ag__ += i
        did_return += retval
    while x > 0:
        x -= 2
        if x == 3:
            return ag__, did_return, retval, break_, continue_, loop_body, loop_test
    return ag__, did_return, retval, break_, continue_, if_true, if_false, itr, x
