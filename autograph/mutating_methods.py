"""The methods of Python's mutable containers that change the object in place.

One set for the two places that ask: the analysis that finds where a function may
change an object in place (``analysis/sharing.py``: ``a.append(v)`` is such a
change to ``a``) and the runtime that refuses such a change to a list or dict a
staged region replaced (``runtime/side_effects.py``, through ``converted_call``).
Converters and analysis do not import the runtime, so it lives here, outside both.

Every method of ``list``, ``dict``, ``set``, ``bytearray`` and
``collections.deque`` that changes its object, the in-place operators included
(``a += b`` on a list calls ``__iadd__``); ``tests/autograph/test_mutating_methods.py``
checks the set against the types themselves.
"""

from __future__ import annotations

import functools
import importlib

CHANGING_METHODS = frozenset({
    # list, bytearray, deque
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
    "__setitem__", "__delitem__", "__iadd__", "__imul__",
    # deque
    "appendleft", "extendleft", "popleft", "rotate",
    # dict
    "update", "setdefault", "popitem", "__ior__",
    # set
    "add", "discard", "difference_update", "intersection_update",
    "symmetric_difference_update", "__iand__", "__isub__", "__ixor__",
})

# Functions of the standard library that change their first argument (a list) in
# place: ``heapq.heappush(b, v)`` is ``b.append(v)`` for what it does to ``b``.
CHANGING_FUNCTIONS = (
    ("heapq", ("heappush", "heappop", "heapify", "heapreplace", "heappushpop")),
    ("bisect", ("insort", "insort_left", "insort_right")),
    ("random", ("shuffle",)),
    ("operator", ("setitem", "delitem", "iadd", "iconcat", "imul", "ior")),
)


@functools.cache
def changing_functions() -> dict:
    """``id`` -> function, for ``CHANGING_FUNCTIONS``."""
    found = {}
    for module, names in CHANGING_FUNCTIONS:
        module = importlib.import_module(module)
        for name in names:
            f = getattr(module, name)
            found[id(f)] = f
    return found
