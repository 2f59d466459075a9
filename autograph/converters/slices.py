"""Item assignment into runtime calls: functional for JAX arrays, in place otherwise.

Before:

    x[i] = v
    x[i, 1:] += v
    x[j], x[j + 1] = x[j + 1], x[j]
    s = s + x[i:i + k]
    return x, s

After:

    x = ag__.setitem(x, i, v, held='x')
    x = ag__.setitem(x, ag__.index[i, 1:], v, op='+', held='x')
    value_0, value_1 = x[j + 1], x[j]
    x = ag__.setitem(x, j, value_0, held='x')
    x = ag__.setitem(x, j + 1, value_1, held='x')
    s = s + ag__.getitem(x, ag__.index[i:i + k], (k,))
    return x, s

``ag__.setitem`` returns ``x.at[i].set(v)`` (``.add(v)``...) for a JAX array and
mutates anything else (NumPy arrays, lists, dicts) in place, returning the same
object. An assignment into a parameter that the function never rebinds nor
returns (``def set_first(xs, v): xs[0] = v``) passes ``shared='xs'``: the caller
sees the object, so a functional update of a JAX array, which it would never
see, is a ``ConversionError`` at the line (``runtime/slices.py``); so is one into a
name that another name holds too (``z = y; y[0] = v`` passes ``alias='z'``). Any
other name whose object something else may hold (a returned parameter, a view
``row = m[i]``, an object put in a list) passes ``held='row'``: a traced value
written into a NumPy array it holds is refused, since Python would write it into
the array every holder sees. Only
assignments into a plain name (``x[...]``, not ``a.x[...]`` or
``x[i][j]``) are rewritten: the others keep Python's semantics. A tuple of targets
takes its values first, as Python does, then assigns each target in turn. A slice
written ``a:a + k`` is read (and written) with its width ``k`` given, so that
``a``, a staged loop's index, can stay traced (``lax.dynamic_slice``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import walk_same_scope
from autograph.analysis.sharing import Sharing
from autograph.converters.scoped import ScopedTransformer
from autograph.walk import walk

_OPERATORS = {
    gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
    gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitAnd: "&", gast.BitOr: "|",
    gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>",
}


NODE_TYPES = (gast.Subscript,)
# (no converter before this one makes an item assignment or a slice: ``needed`` may
# look at the function as parsed, ``transpiler._declared``)
NEEDED_ON_SOURCE = True


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite ``name[key] = value`` and ``name[key] op= value`` in ``node``."""
    nodes = walk(node)
    return rewrite(node, ctx, nodes) if needed(nodes, ctx) else node


def needed(nodes, ctx=None) -> bool:
    """Whether ``nodes`` (a walk of the function) hold an item assignment or a slice:
    elsewhere there is nothing to rewrite (one walk, cheaper than the transformer's
    visit of each node)."""
    return any(sub.__class__ is gast.Slice or (sub.__class__ is gast.Subscript
                                               and sub.ctx.__class__ is not gast.Load)
               for sub in nodes)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
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
        self._shared = []   # per function: its parameters a caller sees (`shared`)
        self._aliases = []  # per function: name -> another name for its object (`alias`)
        self._held = []     # per function: names whose object something else may hold

    def _key(self, target):
        key = target.slice
        if not _has_slice(key):
            return key
        index = templates.replace_expr("ag__.index[0]", ag__=self.ag)
        index.slice = key
        return index

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        widths = _widths(node.slice)
        if not isinstance(node.ctx, gast.Load) or widths is None:
            return node
        new = templates.replace_expr("ag__.getitem(x, key, widths)", ag__=self.ag,
                                     x=node.value, key=self._key(node), widths=widths)
        templates.set_location(new, node)
        return new

    def _visit_function(self, node):
        self._shared.append(_shared_parameters(node))
        self._aliases.append(_aliases(node))
        self._held.append(_held_names(node, self.ag))
        try:
            return super()._visit_function(node)
        finally:
            self._shared.pop()
            self._aliases.pop()
            self._held.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def _setitem(self, target, value, op=None):
        """``x = ag__.setitem(x, key, value[, op=...][, widths=...])`` for ``x[key]``."""
        template = ("x = ag__.setitem(x, key, value)" if op is None else
                    "x = ag__.setitem(x, key, value, op=symbol)")
        symbols = {} if op is None else {"symbol": gast.Constant(value=op, kind=None)}
        new = templates.replace(template, ag__=self.ag, x=target.value.id,
                                key=self._key(target), value=value, **symbols)
        widths = _widths(target.slice)
        if widths is not None:
            new[0].value.keywords.append(gast.keyword(arg="widths", value=widths))
        name = target.value.id
        if self._shared and name in self._shared[-1]:
            new[0].value.keywords.append(
                gast.keyword(arg="shared", value=gast.Constant(value=name, kind=None)))
        elif self._aliases and name in self._aliases[-1]:
            alias = gast.Constant(value=self._aliases[-1][name], kind=None)
            new[0].value.keywords.append(gast.keyword(arg="alias", value=alias))
        elif self._held and name in self._held[-1]:
            new[0].value.keywords.append(
                gast.keyword(arg="held", value=gast.Constant(value=name, kind=None)))
        return new

    def _is_local_item(self, target):
        return _subscript_of_name(target) and self.is_local(target.value.id)

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        if len(node.targets) != 1:
            return node
        target = node.targets[0]
        if isinstance(target, (gast.Tuple, gast.List)):
            return self._unpacked(node, target)
        if not self._is_local_item(target):
            return node
        new = self._setitem(target, node.value)
        templates.set_location(new, node)
        return new

    def _unpacked(self, node, target):
        """``xs[j], xs[j + 1] = xs[j + 1], xs[j]``: the values first, into names, as
        Python evaluates them, then each target assigned from left to right."""
        elts = target.elts
        if (not any(self._is_local_item(e) for e in elts)
                or any(isinstance(e, gast.Starred) for e in elts)):
            return node
        names = [self.ctx.fresh_name(f"value_{k}") for k in range(len(elts))]
        unpack = gast.Assign(
            targets=[gast.Tuple(elts=[templates.name(n, gast.Store()) for n in names],
                                ctx=gast.Store())],
            value=node.value, type_comment=None)
        new = [unpack]
        for elt, name in zip(elts, names, strict=True):
            if self._is_local_item(elt):
                new.extend(self._setitem(elt, templates.name(name)))
            else:
                new.append(gast.Assign(targets=[elt], value=templates.name(name),
                                       type_comment=None))
        templates.set_location(new, node)
        return new

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        if not self._is_local_item(node.target):
            return node
        new = self._setitem(node.target, node.value, _OPERATORS[type(node.op)])
        templates.set_location(new, node)
        return new


def _shared_parameters(node) -> frozenset:
    """The parameters of the function ``node`` that it never rebinds (but by item
    assignment) and never returns: an item assigned into one of them is seen by the
    caller only through the object the caller passed."""
    if isinstance(node, gast.Lambda):
        return frozenset()
    args = node.args
    params = {a.id for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
              if isinstance(a, gast.Name)}
    for sub in walk_same_scope(node.body):
        if isinstance(sub, gast.Return) and sub.value is not None:
            values = sub.value.elts if isinstance(sub.value, gast.Tuple) else [sub.value]
            params -= {v.id for v in values if isinstance(v, gast.Name)}
        elif isinstance(sub, gast.Name) and not isinstance(sub.ctx, gast.Load):
            params.discard(sub.id)   # rebound: a new object, the caller's unchanged
    return frozenset(params)


def _held_names(node, runtime_name) -> frozenset:
    """The names of the function ``node`` that may hold an object something else holds
    too (``analysis/sharing.py``: a parameter, ``b = a``, a view such as
    ``np.asarray(a)`` or ``a[0]``, an object put in a container or passed on). A NumPy
    array such a name holds changes in place for every holder in Python; a traced
    value written into it cannot (``runtime/slices.py``)."""
    if isinstance(node, gast.Lambda):
        return frozenset()
    return frozenset(Sharing(node, runtime_name).held_from)


def _aliases(node) -> dict:
    """Names of the function ``node`` that another of its names may hold the same
    object as (``z = y``, ``z := y``, either way round): ``{name: other}``. An item
    assigned into one is seen through the other only if the object changes in place."""
    if isinstance(node, gast.Lambda):
        return {}
    found = {}
    for sub in walk_same_scope(node.body):
        if isinstance(sub, (gast.Assign, gast.AnnAssign, gast.NamedExpr)):
            targets = sub.targets if isinstance(sub, gast.Assign) else [sub.target]
            if isinstance(sub.value, gast.Name):
                for target in targets:
                    if isinstance(target, gast.Name) and target.id != sub.value.id:
                        found.setdefault(target.id, sub.value.id)
                        found.setdefault(sub.value.id, target.id)
    return found


def _widths(key):
    """For a key holding a slice written ``a:a + k`` (``a`` not a constant, ``k`` an
    expression without calls): a tuple expression of each entry's width ``k``, or
    None for the other entries (``(None, k)`` for ``x[:, i:i + k]``). None when no
    entry is such a slice."""
    parts = key.elts if isinstance(key, gast.Tuple) else [key]
    widths = [_width(part) for part in parts]
    if all(w is None for w in widths):
        return None
    return gast.Tuple(elts=[gast.Constant(value=None, kind=None) if w is None else w
                            for w in widths], ctx=gast.Load())


def _width(part):
    if not isinstance(part, gast.Slice) or part.step is not None or part.lower is None:
        return None
    lower, upper = part.lower, part.upper
    if isinstance(lower, gast.Constant) or not isinstance(upper, gast.BinOp) or not (
            isinstance(upper.op, gast.Add)):
        return None
    same = gast.dump(lower)
    for base, width in ((upper.left, upper.right), (upper.right, upper.left)):
        if gast.dump(base) == same and all(isinstance(n, _PURE) for n in walk(width)):
            return templates.copy_tree(width)
    return None


# What a slice's width may be made of (it is computed twice: no calls).
_PURE = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute, gast.Subscript,
         gast.Load, gast.operator, gast.unaryop, gast.expr_context, gast.Tuple)
