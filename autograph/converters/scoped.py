"""A node transformer that knows which names are local to the function it is in.

Rewriting ``lst.append(x)`` as ``lst = ag__.list_append(lst, x)`` rebinds ``lst``:
that is only right when ``lst`` is already a local of that function. Rebinding a
global or a closure variable would make it a new, unbound local; rebinding a name
in a class body would make it a class attribute, so nothing is local there.
"""

from __future__ import annotations

from autograph.analysis import local_names
from autograph.converters.base import Transformer


class ScopedTransformer(Transformer):
    """``self.is_local(name)``: whether ``name`` is local to the innermost function."""

    def __init__(self):
        self._scopes = []

    def is_local(self, name: str) -> bool:
        return bool(self._scopes) and name in self._scopes[-1]

    def _visit_in_scope(self, node, local):
        self._scopes.append(local)
        try:
            return self.generic_visit(node)
        finally:
            self._scopes.pop()

    def _visit_function(self, node):
        return self._visit_in_scope(node, local_names(node))

    def visit_ClassDef(self, node):
        return self._visit_in_scope(node, frozenset())

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function
