"""Item assignment into runtime calls: functional for JAX arrays, in place otherwise.

Before:

    x[i] = v
    x[i, 1:] += v

After:

    x = ag__.setitem(x, i, v)
    x = ag__.setitem(x, ag__.index[i, 1:], v, op='+')

``ag__.setitem`` returns ``x.at[i].set(v)`` (``.add(v)``...) for a JAX array and
mutates anything else (NumPy arrays, lists, dicts) in place, returning the same
object. Only assignments into a plain name (``x[...]``, not ``a.x[...]`` or
``x[i][j]``) are rewritten: the others keep Python's semantics.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.converters.scoped import ScopedTransformer

_OPERATORS = {
    gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
    gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|",
    gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>",
}


NODE_TYPES = (gast.Subscript,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite ``name[key] = value`` and ``name[key] op= value`` in ``node``."""
    return _Slices(ctx).visit(node)


def _subscript_of_name(target):
    return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)


def _has_slice(key) -> bool:
    if isinstance(key, gast.Slice):
        return True
    return isinstance(key, gast.Tuple) and any(isinstance(e, gast.Slice) for e in key.elts)


class _Slices(ScopedTransformer):
    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx
        self.ag = ctx.runtime_name

    def _key(self, target):
        key = target.slice
        if not _has_slice(key):
            return key
        index = templates.replace_expr("ag__.index[0]", ag__=self.ag)
        index.slice = key
        return index

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        if (len(node.targets) != 1 or not _subscript_of_name(node.targets[0])
                or not self.is_local(node.targets[0].value.id)):
            return node
        target = node.targets[0]
        new = templates.replace("x = ag__.setitem(x, key, value)", ag__=self.ag,
                                x=target.value.id, key=self._key(target), value=node.value)
        templates.set_location(new, node)
        return new

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        if not _subscript_of_name(node.target) or not self.is_local(node.target.value.id):
            return node
        target = node.target
        op = gast.Constant(value=_OPERATORS[type(node.op)], kind=None)
        new = templates.replace("x = ag__.setitem(x, key, value, op=symbol)", ag__=self.ag,
                                x=target.value.id, key=self._key(target), value=node.value,
                                symbol=op)
        templates.set_location(new, node)
        return new
