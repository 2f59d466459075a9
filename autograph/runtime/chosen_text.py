"""Text that a traced condition chooses, in what ``print`` shows.

``print(f"{x:8.3f} {'+' if x > 0 else '-'}")`` prints one of two texts, and with
``x`` traced the condition has a value only when the program runs. The print
converter writes such a field (a conditional expression between two string
literals, in a ``print`` argument or an f-string it formats) as
``ag__.chosen_text(x > 0, '+', '-')``: a Python condition chooses at once; a traced
one gives a ``ChosenText``, whose flag the staged ``print`` carries to run time,
shown there as the text it chooses. Elsewhere such an expression is still refused
(a staged conditional expression carries arrays, not text).
"""

from __future__ import annotations

import numpy as np
from jax import tree_util

from autograph.runtime.conditionals import predicate
from autograph.runtime.tracing import caller_location, is_tracer


def chosen_text(condition, if_true: str, if_false: str):
    """``if_true if condition else if_false`` for a ``print`` to show: the text itself
    for a Python condition, a ``ChosenText`` for a traced one."""
    if not is_tracer(condition):
        return if_true if condition else if_false
    flag = predicate(condition, caller_location(), "conditional expression")
    return ChosenText(flag, (if_true, if_false))


@tree_util.register_pytree_node_class
class ChosenText:
    """One of two texts, chosen by a traced flag: its ``str``, ``repr`` and
    ``format`` are the chosen text's once the flag is concrete."""

    __slots__ = ("flag", "texts")

    def __init__(self, flag, texts):
        self.flag, self.texts = flag, tuple(texts)

    def _text(self) -> str:
        return self.texts[0] if bool(np.asarray(self.flag)) else self.texts[1]

    def __str__(self):
        return self._text()

    def __repr__(self):
        return repr(self._text())

    def __format__(self, spec):
        return format(self._text(), spec)

    def tree_flatten(self):
        return (self.flag,), self.texts

    @classmethod
    def tree_unflatten(cls, texts, leaves):
        return cls(leaves[0], texts)
