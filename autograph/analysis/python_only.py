"""Nested definitions that stay Python: generators and coroutines.

A generator (a ``def`` whose own body holds ``yield``), an ``async def`` and an
async generator suspend and resume; a staged computation cannot. Defined inside a
converted function, such a definition runs as the original would: every
converter leaves it, body included, exactly as written, as ``converted_call``
leaves a generator or coroutine callee.
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.walk import child_nodes

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
           gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)


def stays_python(node) -> bool:
    """Whether the definition ``node`` (a ``def``, ``async def`` or lambda) is a
    generator or coroutine, to be left as Python. Any other node: False."""
    if not isinstance(node, _DEFINITIONS):
        return False
    known = annos.get(node, annos.STAYS_PYTHON)
    if known is None:
        known = isinstance(node, gast.AsyncFunctionDef) or first_yield(node) is not None
        annos.set(node, annos.STAYS_PYTHON, known)
    return known


def first_yield(fn):
    """The first ``yield`` or ``yield from`` of ``fn``'s own body (not of the
    functions nested in it), or None: ``fn`` is a generator exactly when there is one."""
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    stack = [node for node in reversed(body) if not isinstance(node, _SCOPES)]
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Yield, gast.YieldFrom)):
            return node
        stack.extend(reversed([child for child in child_nodes(node)
                               if not isinstance(child, _SCOPES)]))
    return None
