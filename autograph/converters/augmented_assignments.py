"""``name += value`` that may extend a shared list or dict in place into a runtime call.

For a list, ``a += v`` and ``a *= k`` change the object in place; for a dict so does
``a |= v``. After a staged ``if`` or loop that rebinds ``a`` on one path only, or a
conditional expression that may pick an existing list, Python's ``a`` is the old
object on one path and a new one on the other, and another holder of the old object
(``b = a``, the caller) sees the change on one path only. The staged region gives
one object for both, so such a change is refused at the user's line
(``runtime/side_effects.refuse_if_replaced``), as ``a.append(v)`` and ``a[k] = v`` are.

Before:

    def f(x, a):
        b = a
        if x > 0:
            a = [x]
        b += [3]
        return a, b

After:

    def f(x, a):
        b = a
        if x > 0:
            a = [x]
        b = ag__.augmented_assign(b, [3], '+')
        return a, b

Only a statement that can meet such an object is rewritten: its target a name that
may hold an object something else holds too (``analysis/sharing.py``), its operator
one that extends a list or dict, its value not a number (but for ``*=``), and some ``if``, loop or
conditional expression before it (or in a loop around it). The others stay as
written; ``ag__.augmented_assign`` does what ``+=`` does.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import walk_same_scope
from autograph.analysis.sharing import Sharing
from autograph.converters.base import Transformer

NODE_TYPES = (gast.AugAssign,)
_EXTENDING = {gast.Add: "+", gast.Mult: "*", gast.BitOr: "|"}
_STAGEABLE = (gast.If, gast.While, gast.For, gast.IfExp)
_STAGEABLE_SET = frozenset(_STAGEABLE)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the augmented assignments of ``node`` that may extend a shared object."""
    return _AugmentedAssignments(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx=None) -> bool:
    """Whether ``transform`` may change the function whose walk is ``nodes``: an
    augmented assignment to a name with an operator that extends, its value not a
    number (but for ``*=``), in a function holding some ``if``, loop or conditional
    expression (``_may_meet`` asks more of it; this asks no analysis of sharing)."""
    if not any(sub.__class__ in _STAGEABLE_SET for sub in nodes):
        return False
    aug = gast.AugAssign
    return any(sub.__class__ is aug and sub.op.__class__ in _EXTENDING
               and sub.target.__class__ is gast.Name and not _adds_number(sub)
               for sub in nodes)


def _adds_number(node) -> bool:
    """Whether ``node``'s value is a number that does not extend a list (``*=`` with
    a number does)."""
    value = node.value
    return (isinstance(value, gast.Constant) and isinstance(value.value, (int, float, complex))
            and not isinstance(node.op, gast.Mult))


class _AugmentedAssignments(Transformer):
    # (an augmented assignment is a statement: the walk need not enter expressions)
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx
        self.scopes = []   # per function: [the function, its Sharing, its first region]

    def visit_FunctionDef(self, node):
        self.scopes.append([node, None, None])
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_AugAssign(self, node):
        op = _EXTENDING.get(type(node.op))
        target = node.target
        if op is None or not isinstance(target, gast.Name) or not self._may_meet(node):
            return node
        new = templates.replace(
            "target = ag__.augmented_assign(target, value, op)",
            target=target.id, value=node.value, op=gast.Constant(value=op, kind=None))
        templates.set_location(new, node)
        return new

    def _may_meet(self, node) -> bool:
        if _adds_number(node):   # (a list *= 2 extends it)
            return False
        scope = self.scopes[-1]
        fn, sharing, first_region = scope
        if first_region is None:   # worked out once, for the first statement that asks
            first_region = scope[2] = min(
                ((n.lineno, n.col_offset) for n in walk_same_scope(fn.body)
                 if isinstance(n, _STAGEABLE)), default=(float("inf"), 0))
            sharing = scope[1] = Sharing(fn, self.ctx.runtime_name)
        return (node.lineno, node.col_offset) > first_region and node.target.id in sharing.held_from
