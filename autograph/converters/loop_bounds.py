"""Derived trip bounds of loops, for the control-flow converter.

A ``for`` over a range that depends on the indices of enclosing ``for`` loops over
ranges (``for j in range(i + 1, n)`` inside ``for i in range(n)``) gets
``bound=ag__.loop_bound(lambda i: ag__.range_(i + 1, n), i)``: staged, the runtime
derives its largest trip count from the enclosing loops' ranges, so the loop is
bounded and reverse-differentiable.

A ``while`` whose test is a conjunction holding a counter's limit, the counter
stepped once per iteration and assigned nowhere else, gets its bound from there:

    while err > tol and i < 30:          # before
        ...
        i += 1

    ag__.while_stmt(loop_test, loop_body, (err, i, ...),
                    maximum_iterations=ag__.counter_bound(i, 30))   # after

``counter_bound`` is ``30 - i`` for a Python int ``i`` (None, no bound, for a traced
one), so the staged loop is reverse-differentiable with no change to the code.
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos
from autograph.walk import walk

# What a range whose bound is derived may be made of (computing it has no effect).
_PURE_NODES = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute,
               gast.Subscript, gast.Tuple, gast.Load, gast.operator, gast.unaryop,
               gast.expr_context)
_PURE_CALLS = ("range_", "reversed_", "len_", "min_", "max_", "int_")


def range_args(iterable):
    """The arguments of ``iterable`` if it is ``ag__.range_(...)`` (or that range
    reversed, ``ag__.reversed_(ag__.range_(...))``), else None."""
    operator = annos.runtime_operator(iterable)
    if operator is None or iterable.keywords:
        return None
    if operator == "range_":
        return iterable.args
    if operator == "reversed_" and len(iterable.args) == 1:
        return range_args(iterable.args[0])
    return None


def derived_bound(node, enclosing, runtime_name):
    """``[bound=ag__.loop_bound(lambda i: <range>, i)]`` for the ``for`` ``node`` over
    a range that depends on ``enclosing`` (the indices of the ``for`` loops over
    ranges around it), else ``[]``. The range must be made of names, constants,
    arithmetic and ``len``/``min``/``max``/``int``, so computing it again has no
    effect."""
    args = range_args(node.iter)
    if args is None or not enclosing:
        return []
    used = []
    for sub in walk(gast.Tuple(elts=list(args), ctx=gast.Load())):
        if not isinstance(sub, _PURE_NODES) and annos.runtime_operator(sub) not in _PURE_CALLS:
            return []
        if isinstance(sub, gast.Name) and sub.id in enclosing and sub.id not in used:
            used.append(sub.id)
    if not used:
        return []
    call = templates.replace_expr("ag__.loop_bound(lambda indices: rng, indices)",
                                  ag__=runtime_name, indices=used,
                                  rng=templates.copy_tree(node.iter))
    return [gast.keyword(arg="bound", value=call)]


_LIMIT_OPS = {gast.Lt: (False, False), gast.LtE: (True, False),
              gast.Gt: (False, True), gast.GtE: (True, True)}


def counter_bound(node, own_local, modified, runtime_name):
    """``[maximum_iterations=ag__.counter_bound(i, limit[, step][, True])]`` for the
    ``while`` ``node`` whose test is an ``and`` of conditions one of which is
    ``i < limit`` (``i <= limit``, ``limit > i``, ``limit >= i``), where the body's
    one assignment to ``i`` is a statement of its own level, ``i += step`` or
    ``i = i + step`` (``step`` a positive int), no nested function there names ``i``,
    and ``limit`` is an int constant or a name the body does not assign
    (``modified``); ``i`` and ``limit`` must be the function's own locals, no nested
    function can assign (``own_local(name)``); else ``[]``. Each iteration then
    steps the counter once, so the loop runs at most as many times as the counter
    takes to reach the limit."""
    for conjunct in _conjuncts(node.test):
        found = _counter_limit(conjunct)
        if found is None:
            continue
        counter, limit, inclusive = found
        if not own_local(counter) or not (
                isinstance(limit, gast.Constant) and type(limit.value) is int
                or isinstance(limit, gast.Name) and limit.id != counter
                and own_local(limit.id) and limit.id not in modified):
            continue
        step = _single_step(node.body, counter)
        if step is None:
            continue
        args = [templates.name(counter), templates.copy_tree(limit)]
        if step != 1 or inclusive:
            args.append(gast.Constant(value=step, kind=None))
        if inclusive:
            args.append(gast.Constant(value=True, kind=None))
        call = templates.replace_expr("ag__.counter_bound(args)", ag__=runtime_name,
                                      args=args)
        return [gast.keyword(arg="maximum_iterations", value=call)]
    return []


def _conjuncts(test) -> list:
    """The conditions an ``and`` test (nested ``and``s flattened) requires; ``[]`` for
    any other test."""
    if not (isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And)):
        return []
    out = []
    for value in test.values:
        out.extend(_conjuncts(value) or [value])
    return out


def _counter_limit(compare):
    """``(counter, limit, inclusive)`` of ``i < limit`` and its mirrored forms."""
    if not (isinstance(compare, gast.Compare) and len(compare.ops) == 1):
        return None
    inclusive, mirrored = _LIMIT_OPS.get(type(compare.ops[0]), (None, None))
    if inclusive is None:
        return None
    counter, limit = compare.left, compare.comparators[0]
    if mirrored:
        counter, limit = limit, counter
    if not isinstance(counter, gast.Name):
        return None
    return counter.id, limit, inclusive


def _single_step(body, counter):
    """The positive int ``step`` of the body's one assignment to ``counter``, a
    statement of the body's own level (``counter += step``, ``counter = counter +
    step``); None where another statement or a nested function may assign it."""
    steps = []
    for stmt in body:
        step = _step_of(stmt, counter)
        if step is not None:
            steps.append(step)
            continue
        for sub in walk(stmt):
            if isinstance(sub, gast.Name) and sub.id == counter and (
                    not isinstance(sub.ctx, gast.Load) or _in_nested_scope(stmt, sub)):
                return None
    return steps[0] if len(steps) == 1 else None


def _step_of(stmt, counter):
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add):
        target, value = stmt.target, stmt.value
    elif (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
          and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
          and isinstance(stmt.value.left, gast.Name) and stmt.value.left.id == counter):
        target, value = stmt.targets[0], stmt.value.right
    else:
        return None
    if (isinstance(target, gast.Name) and target.id == counter
            and isinstance(value, gast.Constant) and type(value.value) is int
            and value.value > 0):
        return value.value
    return None


def _in_nested_scope(stmt, name) -> bool:
    """Whether ``name`` (a node under ``stmt``) sits in a function or lambda there."""
    for sub in walk(stmt):
        if isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                            gast.ClassDef)) and any(n is name for n in walk(sub)):
            return True
    return False
