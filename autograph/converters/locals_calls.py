"""``locals()`` (and ``vars()``, ``dir()`` without arguments) into the user's names.

Generated code moves blocks into helper functions and adds names of its own
(``retval``, ``loop_body``, ``ag__``), so the builtin would show the helper's
variables, not the function's. The call becomes ``ag__.locals_`` of a lambda
naming the function's own variables (and the outer variables it uses, as
``locals()`` shows them): those bound at that point, with their current values
(``dir()`` becomes ``ag__.dir_``, their sorted names).
Before:

    def f(n):
        total = 0
        for i in range(n):
            seen = locals()
        return seen

After:

    def f(n):
        total = 0
        for i in range(n):
            seen = ag__.locals_(lambda: (i, n, seen, total))
        return seen

(The dict's keys are in alphabetical order.)
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import local_names, read_names
from autograph.converters.base import Transformer

NODE_TYPES = (gast.Call,)
_SCOPE_CALLS = {"locals": "ag__.locals_(lambda: (names,))",
                "vars": "ag__.locals_(lambda: (names,))",
                "dir": "ag__.dir_(lambda: (names,))"}
# (a function naming none of them is skipped by the transpiler, its walk kept current)
NAMES = tuple(_SCOPE_CALLS)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the argument-less ``locals()``, ``vars()`` and ``dir()`` in ``node``."""
    if not any(name in ctx.user_names for name in _SCOPE_CALLS):
        return node
    outer = set(getattr(ctx.namespace, "maps", [{}])[0])   # the closure's variables
    return _LocalsCalls(ctx, outer).visit(node)


class _LocalsCalls(Transformer):
    def __init__(self, ctx, outer):
        self.ctx = ctx
        self.ag = ctx.runtime_name
        self.scopes = []          # per function: the names its locals() shows
        self.outer = outer

    def visit_FunctionDef(self, node):
        # (a class body's names are not a method's: its scope, None here, is skipped)
        enclosing = (set().union(*(s for s in self.scopes if s is not None))
                     if self.scopes else self.outer)
        own = local_names(node)
        used = read_names(node.body) & enclosing
        self.scopes.append(frozenset((own | used) & self.ctx.user_names))
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    def visit_ClassDef(self, node):
        self.scopes.append(None)   # a class body's locals() is its namespace
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    def visit_Lambda(self, node):
        self.scopes.append(None)
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if (not isinstance(func, gast.Name) or func.id not in _SCOPE_CALLS or node.args
                or node.keywords or not self.ctx.is_builtin(func.id)
                or not self.scopes or self.scopes[-1] is None):
            return node
        new = templates.replace_expr(_SCOPE_CALLS[func.id], ag__=self.ag,
                                     names=sorted(self.scopes[-1]))
        templates.set_location(new, node)
        return new
