"""Which of a function's names may hold an object that something else holds too.

A staged region gives a Python list or dict back as a new object. Where Python's
variable afterwards is the old object on one path and a new one on another (an
``if`` that rebinds it in one branch only, a loop that may run zero times), the
difference shows only through another holder of the old object:

    b = a                  # or: a is a parameter, or stored in d['k']
    if n > 2:              # traced
        a = [5, 5]
    a[0] = 9               # Python: b sees this when n <= 2

``Sharing(fn, ...)`` finds where each of the function's names may come to hold
such an object: parameters (the caller holds the argument), ``global``/``nonlocal`` names,
names bound from anything but a new value (``b = a``, ``row = rows[i]``, a loop
target, a call's result), and names whose object leaves by value (assigned to
another name, put in a container, passed to a function that may keep it, read in a
nested function). The runtime refuses to change such an object in place after its
identity came to depend on a traced condition (``trackers.ContainerParameter``).
Reads never make a name held: ``a[0]``, ``a.append(v)``'s receiver, ``len(a)``,
``jnp.stack(a)``, ``for v in a``, arithmetic and comparisons.
"""

from __future__ import annotations

import gast

from autograph.analysis.annos import IN_PLACE_OPERATORS
from autograph.mutating_methods import CHANGING_METHODS
from autograph.walk import child_nodes

# Calls that read their arguments and keep none of them.
_READING_BUILTINS = frozenset({
    "len", "sum", "min", "max", "sorted", "any", "all", "abs", "print", "repr", "str",
    "int", "float", "bool", "complex", "list", "tuple", "dict", "set", "frozenset",
    "isinstance", "type", "id", "hash", "enumerate", "zip", "reversed", "iter", "range",
    "round", "divmod", "pow", "format", "ord", "chr", "hex", "bin", "oct",
})
_READING_MODULES = frozenset({"jnp", "np", "numpy", "jax", "lax", "math", "operator"})
# NumPy functions that give their argument itself or a view of it: the same data.
_NUMPY_VIEWS = frozenset({
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "ravel", "reshape",
    "squeeze", "transpose", "swapaxes", "moveaxis", "expand_dims", "atleast_1d",
    "atleast_2d", "atleast_3d", "broadcast_to", "diagonal", "real", "imag", "flip",
    "fliplr", "flipud", "rot90", "matrix_transpose", "permute_dims",
})
# Of the runtime's operators that change their first argument in place
# (``annos.IN_PLACE_OPERATORS``), those whose other arguments are read, not kept
# (``a += b`` keeps b's items, not b).
_READING_IN_PLACE = frozenset({"augmented_assign"})
_NEW_VALUE = (gast.List, gast.Dict, gast.Set, gast.ListComp, gast.DictComp, gast.SetComp,
              gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.JoinedStr,
              gast.GeneratorExp)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)
_SCOPE_TYPES = frozenset(_SCOPES)
_NAME, _RETURN, _TUPLE, _ASSIGN = gast.Name, gast.Return, gast.Tuple, gast.Assign
_STATEMENTS = frozenset(gast.stmt.__subclasses__())
_DECLARATIONS = frozenset({gast.Global, gast.Nonlocal})
_MAY_CHANGE = frozenset({gast.Call, gast.Attribute, gast.Delete, gast.Assign, gast.AugAssign})


class Sharing:
    """Where, in the function ``fn`` (a gast ``FunctionDef``), each name may come to
    hold an object that something else holds too (see the module docstring), and
    where the function may change an object in place (``a[k] = v``, ``a.append(v)``,
    ``del a[k]``, ``a[k] += v``, or a call it passes an object to). ``runtime_name``:
    the name earlier converters gave the runtime module (``ag__``). Positions are
    ``(line, column)`` pairs."""

    def __init__(self, fn, runtime_name: str):
        args = fn.args
        self.held_from = {a.id: (0, 0) for a in [*args.posonlyargs, *args.args,
                                                  *args.kwonlyargs, args.vararg, args.kwarg]
                          if a is not None}
        self.changes = []
        self._runtime = runtime_name
        start = _position(fn) or (0, 0)
        for stmt in fn.body:
            self._visit(stmt, fn, False, start)

    def _visit(self, node, parent, nested, at):
        kind = node.__class__
        if kind is _NAME:
            runtime = self._runtime
            if nested or _binds_held(node, parent, runtime) or _leaves(node, parent, runtime):
                self._hold(node.id, at)
            if _passed(node, parent, runtime):
                self.changes.append(at)
            return
        if kind in _STATEMENTS:
            at = _position(node) or at   # a generated statement may have no place
            if kind is _RETURN and node.value.__class__ is _TUPLE:
                for elt in node.value.elts:   # a returned tuple keeps nothing
                    self._visit(elt, node, nested, at)
                return
            if kind in _DECLARATIONS:
                for name in node.names:
                    self._hold(name, (0, 0))
                return
            if kind is _ASSIGN and _pairwise(node):   # a, b = [], {}: one value each
                for target, value in zip(node.targets[0].elts, node.value.elts, strict=True):
                    if not (_is_new(value) or _keeps_identity(value, target.id, self._runtime)):
                        self._hold(target.id, at)
                    self._visit(value, node, nested, at)
                return
        if kind in _MAY_CHANGE and _changes_in_place(node, self._runtime):
            self.changes.append(at)
        nested = nested or kind in _SCOPE_TYPES
        for child in child_nodes(node):
            self._visit(child, node, nested, at)

    def _hold(self, name, at):
        if name not in self.held_from or at < self.held_from[name]:
            self.held_from[name] = at

    def shared(self, names, start, end) -> list:
        """Of ``names``, those that may hold an object something else holds too
        before ``end`` while the function may change an object in place after
        ``start`` (the positions that bound a region, or the loop enclosing it)."""
        if not any(at >= start for at in self.changes):
            return []
        return [n for n in names if n in self.held_from and self.held_from[n] < end]


def may_change(nodes, runtime_name: str) -> bool:
    """Whether a ``Sharing`` of a function among ``nodes`` (``list(walk(tree))``) may
    find a place where an object is changed in place; where not, each one's
    ``shared`` is empty, and none need be made. (One look at each node, with its
    own parent, for what ``Sharing._visit`` counts as a change: never less.)"""
    may, call, keyword = _MAY_CHANGE, gast.Call, gast.keyword
    for node in nodes:
        cls = node.__class__
        if cls in may and _changes_in_place(node, runtime_name):
            return True
        if cls is call:
            if any(arg.__class__ is _NAME and _passed(arg, node, runtime_name)
                   for arg in node.args):
                return True
        elif cls is keyword and node.value.__class__ is _NAME and isinstance(
                node.value.ctx, gast.Load):
            return True
    return False


def _pairwise(node) -> bool:
    if not (isinstance(node, gast.Assign) and len(node.targets) == 1):
        return False
    target, value = node.targets[0], node.value
    return (isinstance(target, gast.Tuple) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, gast.Name) for t in target.elts))


def _position(node):
    line = getattr(node, "lineno", None)
    return None if line is None else (line, getattr(node, "col_offset", 0) or 0)


def end_position(node):
    """Where ``node`` ends, as a ``(line, column)`` pair (its start where unknown)."""
    line = getattr(node, "end_lineno", None)
    if line is None:
        return _position(node) or (0, 0)
    return (line, getattr(node, "end_col_offset", 0) or 0)


def _changes_in_place(node, runtime_name) -> bool:
    if isinstance(node, gast.Call):
        return _operator(node.func, runtime_name) in IN_PLACE_OPERATORS
    if isinstance(node, gast.Attribute):
        return node.attr in CHANGING_METHODS and isinstance(node.ctx, gast.Load)
    if isinstance(node, gast.Delete):
        return any(isinstance(t, gast.Subscript) for t in node.targets)
    if isinstance(node, gast.Assign):
        return any(isinstance(t, (gast.Subscript, gast.Attribute)) for t in node.targets)
    # ``a += b`` on a name that may hold a shared list is ``ag__.augmented_assign``
    # by now (converters/augmented_assignments.py): the others rebind the name.
    return isinstance(node, gast.AugAssign) and not isinstance(node.target, gast.Name)


def _passed(name, parent, runtime_name) -> bool:
    """Whether the read ``name`` is an argument of a call that may change it."""
    if not isinstance(name.ctx, gast.Load):
        return False
    if isinstance(parent, gast.keyword):
        return True
    if not isinstance(parent, gast.Call) or parent.func is name:
        return False
    func = parent.func
    if isinstance(func, gast.Name):
        return func.id not in _READING_BUILTINS
    if _operator(func, runtime_name) is not None:
        return False
    return _module_of(func) not in _READING_MODULES


def _binds_held(name, parent, runtime_name) -> bool:
    """Whether ``name`` is bound here to an object that may be held elsewhere."""
    if isinstance(name.ctx, gast.Load) or isinstance(name.ctx, gast.Del):
        return False
    if isinstance(parent, (gast.Assign, gast.AnnAssign, gast.NamedExpr)):
        value = parent.value
        return value is not None and not (
            _is_new(value) or _keeps_identity(value, name.id, runtime_name))
    # ``x += v`` changes or rebinds x's own object; a tuple target or a loop's,
    # ``with``'s, ``except``'s takes an object from elsewhere.
    return not isinstance(parent, gast.AugAssign)


def _is_new(value) -> bool:
    if isinstance(value, _NEW_VALUE):
        return True
    if isinstance(value, gast.Call):
        func = value.func
        if isinstance(func, gast.Name):
            return func.id in ("list", "dict", "set", "sorted", "tuple")
        module = _module_of(func)
        if module in ("np", "numpy") and func.attr in _NUMPY_VIEWS:
            return False   # np.asarray(a) is a itself
        return module in _READING_MODULES
    return False


def _keeps_identity(value, name, runtime_name) -> bool:
    """``x = ag__.list_append(x, v)``: an earlier converter's in-place change."""
    return (isinstance(value, gast.Call) and _operator(value.func, runtime_name)
            in IN_PLACE_OPERATORS and bool(value.args)
            and isinstance(value.args[0], gast.Name) and value.args[0].id == name)


def _leaves(name, parent, runtime_name) -> bool:
    """Whether the object of the read ``name`` may be kept by something else here."""
    if not isinstance(name.ctx, gast.Load):
        return False
    if isinstance(parent, (gast.Subscript, gast.Attribute)):
        return parent.value is not name   # x[i] and x.attr read x; d[x] reads it too
    if isinstance(parent, gast.keyword):
        return True   # the call is not known here: assume it keeps the argument
    if isinstance(parent, gast.Call):
        if parent.func is name:
            return False
        func = parent.func
        if isinstance(func, gast.Name):
            return func.id not in _READING_BUILTINS
        operator = _operator(func, runtime_name)
        if operator is not None:
            return (operator in IN_PLACE_OPERATORS and operator not in _READING_IN_PLACE
                    and parent.args[0] is not name)
        return _module_of(func) not in _READING_MODULES
    # Reads that give a new value, tests, iteration, a statement's own value.
    return not isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.If,
                                   gast.While, gast.For, gast.Assert, gast.Expr,
                                   gast.FormattedValue, gast.comprehension,
                                   gast.AugAssign, gast.Return))


def _operator(func, runtime_name):
    """``name`` for ``ag__.name``, else None."""
    if (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
            and func.value.id == runtime_name):
        return func.attr
    return None


def _module_of(func):
    while isinstance(func, gast.Attribute):
        func = func.value
    return func.id if isinstance(func, gast.Name) else None
