"""Calls to Python builtins that need help with traced arguments, into runtime calls.

Before:

    m = max(a, b)
    n = int(math.sqrt(x))
    for k, v in enumerate(xs):
        total = total + v

After:

    m = ag__.max_(a, b)
    n = ag__.int_(ag__.math_sqrt(x))
    for k, v in ag__.enumerate_(xs):
        total = total + v

``enumerate`` and ``zip`` are rewritten as the iterable of a ``for`` only (where a
list grown in a staged loop is iterated). Only a name that really is Python's
builtin here is rewritten (not a local, parameter, closure variable or module
global of that name). Builtins that JAX's arrays already support (``abs``...)
are left as they are; ``isinstance``, ``type``, ``str``, ``repr`` and ``format`` answer for the
Python numbers staging made traced (``runtime/types_of.py``). This is the one table
of the builtins the converters replace (``print`` has a converter of its own,
``print_function``).

A call of a function of Python's ``math`` module in ``MATH`` (however it is
reached: ``math.sqrt``, ``m.sqrt`` after ``import math as m``, ``sqrt`` after
``from math import sqrt``) becomes ``ag__.math_<name>(...)``
(``runtime/math_functions.py``: ``math`` itself for Python values).

Reductions and membership (``runtime/reductions.py``): a generator expression
with one ``for`` over a name, the first argument of ``sum``/``max``/``min``/
``any``/``all``, becomes ``ag__.generator_(lambda i: item, iterable, lambda i:
condition)`` (a range with a traced bound is then reduced by a staged loop; for
``sum``/``any``/``all`` with an ``if`` and an item that changes nothing, calling only
``PURE_BUILTINS``, ``math``, NumPy or ``jax`` functions, with ``masked='sum'``:
an item whose condition is traced is then computed and masked; a list comprehension
so, summed, tested by ``any``/``all`` or counted by ``len``, is that masked
generator too: ``len([x for x in xs if x > 0])`` counts by a masked ``sum`` of ones);
``a in b`` and ``a not in b`` become ``ag__.in_(a, b)`` and ``ag__.not_in(a, b)``;
``(a, b).count(v)`` of a tuple or list display ``ag__.count_((a, b), v)``, any
other ``xs.count(v)`` ``ag__.count_method(ag__.converted_call(xs.count), v)`` (a
list's or tuple's count, with traced items, is the traced number of equal items);
``xs.index(v)`` ``ag__.index_method(ag__.converted_call(xs.index), v)`` (a list's or
tuple's, with traced items or value, the traced first position, a run-time check
raising Python's ``ValueError`` where none is: ``runtime/sequence_index.py``);
a comparison (``<``, ``==``...)
with a tuple or list display on one side, ``(a, 1) < (b, 2)``, becomes
``ag__.compare_sequences((a, 1), '<', (b, 2))`` (``runtime/sequence_compare.py``:
Python's item-by-item order, staged where traced items decide it); a
statement ``xs.sort(...)`` becomes ``ag__.sort_(xs, ...)``; and ``table[i]`` where
``table`` is a list (bound in the function to a display, comprehension, ``list(...)``
or ``[0] * k``, or a global list of numbers) becomes ``ag__.list_item(table, i)``
(``runtime/lookups.py``: an array read for a traced ``i``). Before:

    total = sum(i for i in range(1, n) if n % i == 0)
    small = x in (0, 1)
    xs.sort()

After:

    total = ag__.sum_(ag__.generator_(lambda i: i, ag__.range_(1, n), lambda i: n % i == 0,
                                      masked='sum'))
    small = ag__.in_(x, (0, 1))
    ag__.sort_(xs)
"""

from __future__ import annotations

import math

import gast

from autograph import templates
from autograph.analysis import SCOPES
from autograph.converters.base import STATEMENT_FIELDS, Transformer

# builtin name -> runtime function, wherever it is called
REPLACED = {
    "len": "len_",
    "min": "min_",
    "max": "max_",
    "sum": "sum_",
    "int": "int_",
    "float": "float_",
    "bool": "bool_",
    "range": "range_",
    "reversed": "reversed_",
    "any": "any_",
    "all": "all_",
    "sorted": "sorted_",
    "pow": "pow_",
    "round": "round_",
    "isinstance": "isinstance_",
    "type": "type_",
    "str": "str_",
    "repr": "repr_",
    "format": "format_builtin",
}
# builtins whose one generator-expression argument becomes ``ag__.generator_(...)``
REDUCTIONS = frozenset({"sum", "max", "min", "any", "all"})
# reductions whose generator's dropped items can be masked (``generator_(masked=)``)
MASKABLE = frozenset({"sum", "any", "all"})
# builtins an item of a masked generator may call (no change to anything)
PURE_BUILTINS = frozenset({"abs", "float", "int", "bool", "round", "min", "max", "len",
                           "pow"})
# what this converter replaces those (and ``math``'s functions) with
_PURE_RUNTIME = frozenset(REPLACED[name] for name in PURE_BUILTINS if name in REPLACED)
# modules whose functions an item of a masked generator may call (``out=`` aside)
_PURE_MODULES = frozenset({"jax.numpy", "jax.lax", "numpy"})
_PURE_MODULE_PREFIXES = ("jax.nn", "jax.scipy", "jax._src.nn", "jax._src.scipy")
# builtin name -> runtime function, called as the iterable of a ``for``
REPLACED_AS_ITERABLE = {
    "enumerate": "enumerate_",
    "zip": "zip_",
}

# functions of Python's math module -> ``ag__.math_<name>``
MATH = ("sqrt", "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "sin", "cos",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "erf", "erfc", "lgamma", "gamma", "degrees", "radians", "fabs", "floor", "ceil",
        "trunc", "isnan", "isinf", "isfinite", "isqrt", "pow", "hypot", "dist", "prod",
        "fsum", "isclose", "gcd", "lcm", "copysign", "fmod", "atan2", "ldexp", "factorial",
        "comb", "perm")
_MATH_FUNCTIONS = {id(getattr(math, name)): name for name in MATH if hasattr(math, name)}

NODE_TYPES = (gast.Call, gast.Compare, gast.Subscript)
# The names whose calls ``_replace`` (and ``_replace_generator``) may rewrite.
_CALLED_NAMES = frozenset(REPLACED) | REDUCTIONS | frozenset(REPLACED_AS_ITERABLE)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Convert calls to the builtins in ``REPLACED`` in ``node``, and to those in
    ``REPLACED_AS_ITERABLE`` that are the iterable of a ``for``."""
    return _BuiltinFunctions(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx) -> bool:
    """Whether ``nodes`` (a walk of the function) hold something this converter may
    rewrite: a call of a name in its tables, of a ``math`` function or of a
    ``.count``/``.index``/``.sort`` method, an ``in``/``not in``, or an item read ``name[i]``.
    (One walk, cheaper than the transformer's visit of each node.)"""
    tables, math_functions, value_of = _CALLED_NAMES, _MATH_FUNCTIONS, ctx.value_of
    for sub in nodes:
        cls = sub.__class__
        if cls is gast.Call:
            func = sub.func
            if func.__class__ is gast.Name:
                if func.id in tables or id(value_of(func)) in math_functions:
                    return True
            elif func.__class__ is gast.Attribute and (
                    func.attr in ("count", "index", "sort")
                    or id(value_of(func)) in math_functions):
                return True
        elif cls is gast.Compare:
            if any(isinstance(op, (gast.In, gast.NotIn)) for op in sub.ops):
                return True
            if len(sub.ops) == 1 and type(sub.ops[0]) in _SEQUENCE_COMPARISONS and (
                    _is_display(sub.left) or _is_display(sub.comparators[0])):
                return True
        elif (cls is gast.Subscript and isinstance(sub.ctx, gast.Load)
              and isinstance(sub.value, gast.Name)
              and not isinstance(sub.slice, (gast.Slice, gast.Tuple, gast.Constant))):
            return True
    return False


# ``(a, 1) < (b, 2)``, a tuple or list display on one side -> ``ag__.compare_sequences``
_SEQUENCE_COMPARISONS = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=",
                         gast.Eq: "==", gast.NotEq: "!="}


def _is_display(node) -> bool:
    return isinstance(node, (gast.Tuple, gast.List)) and not any(
        isinstance(e, gast.Starred) for e in node.elts)


class _BuiltinFunctions(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx
        self.lists: list[frozenset] = []    # per function: locals bound to lists

    def visit_FunctionDef(self, node):
        self.lists.append(_list_names(node))
        try:
            return self.generic_visit(node)
        finally:
            self.lists.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        if (isinstance(node.ctx, gast.Load) and isinstance(node.value, gast.Name)
                and not isinstance(node.slice, (gast.Slice, gast.Tuple))
                and not (isinstance(node.slice, gast.Constant))
                and self._is_list(node.value.id)):
            new = templates.replace_expr("ag__.list_item(sequence, index)",
                                         ag__=self.ctx.runtime_name, sequence=node.value,
                                         index=node.slice)
            templates.set_location(new, node)
            return new
        return node

    def _is_list(self, name) -> bool:
        if self.lists and name in self.lists[-1]:
            return True
        if name in self.ctx.local_names:
            return False
        value = self.ctx.value_of(templates.name(name))
        return type(value) in (list, tuple) and 0 < len(value) and all(
            isinstance(v, (bool, int, float)) for v in value)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        self._replace_generator(node)
        self._replace(node, REPLACED)
        self._replace_math(node)
        return self._replace_index(self._replace_count(node))

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in _SEQUENCE_COMPARISONS and (
                _is_display(node.left) or _is_display(node.comparators[0])):
            new = templates.replace_expr(
                "ag__.compare_sequences(left, op, right)", ag__=self.ctx.runtime_name,
                left=node.left, right=node.comparators[0],
                op=gast.Constant(value=_SEQUENCE_COMPARISONS[type(node.ops[0])], kind=None))
            templates.set_location(new, node)
            return new
        if len(node.ops) != 1 or not isinstance(node.ops[0], (gast.In, gast.NotIn)):
            return node
        name = "in_" if isinstance(node.ops[0], gast.In) else "not_in"
        new = templates.replace_expr(f"ag__.{name}(a, b)", ag__=self.ctx.runtime_name,
                                     a=node.left, b=node.comparators[0])
        templates.set_location(new, node)
        return new

    def visit_Expr(self, node):
        node = self.generic_visit(node)
        call = node.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "sort"
                and isinstance(call.func.value, (gast.Name, gast.Attribute))):
            new = templates.replace_expr("ag__.sort_(target)", ag__=self.ctx.runtime_name,
                                         target=call.func.value)
            new.args.extend(call.args)
            new.keywords = call.keywords
            templates.set_location(new, call)
            node.value = new
        return node

    def _replace_count(self, call):
        func = call.func
        if not (isinstance(func, gast.Attribute) and func.attr == "count"
                and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], gast.Starred)):
            return call
        if isinstance(func.value, (gast.Tuple, gast.List)):
            new = templates.replace_expr("ag__.count_(container, value)",
                                         ag__=self.ctx.runtime_name, container=func.value,
                                         value=call.args[0])
        else:   # xs.count(v): a list's, if xs is one when it runs (else a call as any)
            new = templates.replace_expr("ag__.count_method(ag__.converted_call(method), value)",
                                         ag__=self.ctx.runtime_name, method=func,
                                         value=call.args[0])
        templates.set_location(new, call)
        return new

    def _replace_index(self, call):
        """``xs.index(v)`` (``start``/``stop`` too) -> ``ag__.index_method(
        ag__.converted_call(xs.index), v)``: a list's or tuple's, when ``xs`` is one."""
        func = call.func
        if not (isinstance(func, gast.Attribute) and func.attr == "index"
                and 1 <= len(call.args) <= 3 and not call.keywords
                and not any(isinstance(a, gast.Starred) for a in call.args)):
            return call
        new = templates.replace_expr("ag__.index_method(ag__.converted_call(method), value)",
                                     ag__=self.ctx.runtime_name, method=func,
                                     value=call.args[0])
        new.args.extend(call.args[1:])
        templates.set_location(new, call)
        return new

    def _replace_generator(self, call):
        """``sum(f(i) for i in xs if c(i))`` -> ``sum(ag__.generator_(lambda i: f(i),
        xs, lambda i: c(i)))``. A list comprehension with an ``if`` and an item free of
        changes, summed or tested by ``any``/``all`` or counted by ``len``, is that
        generator too (masked): ``len([x for x in xs if x > 0])`` ->
        ``ag__.sum_(ag__.generator_(lambda x: 1, xs, lambda x: x > 0, masked='sum'))``.
        A ``for a, b in ...`` takes two-parameter lambdas and ``unpack=2``."""
        func = call.func
        if not (isinstance(func, gast.Name) and self.ctx.is_builtin(func.id) and call.args):
            return
        generator = call.args[0]
        listed = isinstance(generator, gast.ListComp)
        if not ((func.id in REDUCTIONS and isinstance(generator, gast.GeneratorExp))
                or (listed and (func.id in MASKABLE or func.id == "len"
                                and len(call.args) == 1 and not call.keywords))):
            return
        if len(generator.generators) != 1:
            return
        clause = generator.generators[0]
        names = _target_names(clause.target)
        if clause.is_async or names is None:
            return
        masked = bool(clause.ifs) and func.id in MASKABLE | {"len"} and self._is_pure(
            generator.elt)
        if listed and not masked:
            return
        item = gast.Constant(value=1, kind=None) if func.id == "len" else generator.elt
        pieces = [_lambda(names, item), clause.iter]
        if clause.ifs:
            test = clause.ifs[0] if len(clause.ifs) == 1 else gast.BoolOp(
                op=gast.And(), values=list(clause.ifs))
            pieces.append(_lambda(names, test))
        new = templates.replace_expr("ag__.generator_(pieces)", ag__=self.ctx.runtime_name,
                                     pieces=pieces)
        if isinstance(clause.target, gast.Tuple):
            new.keywords.append(gast.keyword(arg="unpack", value=gast.Constant(
                value=len(names), kind=None)))
        if masked:
            new.keywords.append(gast.keyword(arg="masked", value=gast.Constant(
                value="sum" if func.id == "len" else func.id, kind=None)))
        templates.set_location(new, generator)
        call.args[0] = new
        if func.id == "len":
            call.func = templates.replace_expr("ag__.sum_", ag__=self.ctx.runtime_name)
            templates.set_location(call.func, func)

    def _is_pure(self, expr) -> bool:
        """Whether ``expr`` can be computed for an item its ``if`` drops without a
        change Python would not make: it calls only ``PURE_BUILTINS``, ``math``,
        NumPy and ``jax`` functions, and binds nothing."""
        for sub in gast.walk(expr):
            if isinstance(sub, (gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await,
                                gast.Lambda)):
                return False
            if isinstance(sub, gast.Call):
                func = sub.func
                if isinstance(func, gast.Name) and func.id in PURE_BUILTINS \
                        and self.ctx.is_builtin(func.id):
                    continue
                if id(self.ctx.value_of(func)) in _MATH_FUNCTIONS:
                    continue
                if (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                        and func.value.id == self.ctx.runtime_name and (
                            func.attr in _PURE_RUNTIME or func.attr.startswith("math_"))):
                    continue   # (replaced already: this visit is bottom-up)
                module = getattr(self.ctx.value_of(func), "__module__", None)
                if not (module in _PURE_MODULES or str(module).startswith(
                        _PURE_MODULE_PREFIXES)) or any(k.arg == "out" for k in sub.keywords):
                    return False
        return True

    def _replace_math(self, call):
        func = call.func
        if not isinstance(func, (gast.Name, gast.Attribute)):
            return
        name = _MATH_FUNCTIONS.get(id(self.ctx.value_of(func)))
        if name is not None:
            new = templates.replace_expr(f"ag__.math_{name}", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            call.func = new

    def visit_For(self, node):
        node = self.generic_visit(node)
        self._replace(node.iter, REPLACED_AS_ITERABLE)
        return node

    def _replace(self, call, table):
        func = getattr(call, "func", None)
        if (isinstance(call, gast.Call) and isinstance(func, gast.Name)
                and func.id in table and self.ctx.is_builtin(func.id)):
            new = templates.replace_expr(f"ag__.{table[func.id]}", ag__=self.ctx.runtime_name)
            templates.set_location(new, func)
            call.func = new


def _list_names(fn) -> frozenset:
    """The names ``fn`` binds (directly) to a list: a display, a comprehension,
    ``list(...)``, or a sum or product of those (``[1] + [0] * n``)."""
    names = set()
    stack = list(fn.body)     # (an assignment is a statement: statements suffice)
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is gast.Assign:
            if (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                    and _makes_list(node.value)):
                names.add(node.targets[0].id)
        elif cls not in _SCOPE_CLASSES:      # a nested scope's body binds its own names
            for field in STATEMENT_FIELDS[cls]:
                stack += getattr(node, field, None) or ()
    return frozenset(names)


_SCOPE_CLASSES = frozenset(SCOPES)


def _makes_list(expr) -> bool:
    if isinstance(expr, (gast.List, gast.ListComp)):
        return True
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name):
        return expr.func.id == "list"
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Mult)):
        return _makes_list(expr.left) or _makes_list(expr.right)
    return False


def _target_names(target):
    """The names a comprehension's ``for`` binds: ``[x]`` for ``x``, ``[a, b]`` for
    ``a, b``; None for any other target (a starred, nested or attribute target)."""
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, gast.Tuple) and len(target.elts) > 1 and all(
            isinstance(e, gast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return None


def _lambda(names, body):
    return gast.Lambda(
        args=gast.arguments(args=[gast.Name(id=name, ctx=gast.Param(), annotation=None,
                                            type_comment=None) for name in names],
                            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                            kwarg=None, defaults=[]),
        body=body)
