"""A ``while`` test that is one comparison of names and number literals.

    while n != 1:          # compares=('n', 1)
    while i < n:           # compares=('i', 'n')

Such a test's value is a tracer whenever one of its names holds a numeric tracer
and the others hold tracers or Python numbers: ``control_flow.py`` passes its
operands as the loop call's ``compares=`` keyword, and ``runtime/loops.py`` then
decides from the values alone that the loop stages, without first tracing the test
abstractly (``loops._test_is_traced``). Anything else (a call, an attribute, ``and``,
a chained comparison, ``is``/``in``) gets no keyword.
"""

from __future__ import annotations

import gast

_ORDERING = (gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE)
_NUMBERS = (int, float, bool)


def compared_operands(test) -> tuple | None:
    """``test``'s two operands (a name as its string, a number literal as itself) if
    it is one ordering or equality comparison of names and number literals holding
    at least one name; None otherwise."""
    if not (isinstance(test, gast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], _ORDERING)):
        return None
    operands = []
    for side in (test.left, test.comparators[0]):
        if isinstance(side, gast.Name):
            operands.append(side.id)
        elif isinstance(side, gast.Constant) and type(side.value) in _NUMBERS:
            operands.append(side.value)
        else:
            return None
    if not any(type(operand) is str for operand in operands):
        return None
    return tuple(operands)
