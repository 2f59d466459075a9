"""Which of a loop's variables only step by int literals, read from the loop's AST.

    steps = 0
    while n != 1:          # read by a comparison alone
        n = ...
        steps += 1         # stepped by a literal alone

A Python int such a loop carries needs no abstract run of the body to judge whether
it leaves int32 (``runtime/int_overflow.py``): how far it can move in an iteration
is written in the source. ``control_flow.py`` passes what is found here as the loop
call's ``steps=`` keyword (``runtime/loops.py`` reads it):

- a ``while``: ``{name: (most it rises, most it falls) in one iteration}`` for the
  variables whose every use in the body is ``name += k`` / ``name -= k`` /
  ``name = name ± k`` (``k`` an int literal, ``10 ** 8`` too; at the top of the body or in its
  ``if`` branches, not in an inner loop) and whose every use in the test is one side
  of a comparison with a name or a constant;
- a ``for``: the same for the variables only stepped so (its test is the range),
  or ``{name: what one iteration adds}`` where every step is a statement at the top
  of a body that cannot jump (each runs once an iteration).
"""

from __future__ import annotations

import operator

import gast

from autograph.walk import child_nodes, walk, walk_list

_STEPS = {gast.Add: 1, gast.Sub: -1}
_JUMPS = (gast.Break, gast.Continue, gast.Return, gast.Yield, gast.YieldFrom, gast.Await)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_NAME = gast.Name
_SIDES = frozenset((gast.Name, gast.Constant))


def while_steps(node: gast.While, names) -> dict:
    """``{name: (rise, fall)}``: the most each of ``names`` (the loop's state) rises
    and falls in one iteration of ``node``, for those only stepped by literals in its
    body and only compared in its test (see the module's docstring)."""
    steps = _only_stepped(node.body, names, node.test)
    return {name: _bounds(taken) for name, taken in steps.items()}


def for_steps(node: gast.For, names) -> dict:
    """For those of ``names`` that ``node``'s body only steps by literals: ``{name:
    net change}`` where every step is a statement at the body's top and the body
    cannot jump out of an iteration (each step runs once an iteration), ``{name:
    (rise, fall)}`` (as ``while_steps``) otherwise."""
    steps = _only_stepped(node.body, names, None, node.target)
    if not steps:
        return steps
    straight = not any(isinstance(n, _JUMPS) for n in _same_scope_walk(node.body))
    return {name: (sum(step for step, _ in taken)
                   if straight and not any(inner for _, inner in taken) else _bounds(taken))
            for name, taken in steps.items()}


def _bounds(steps) -> tuple:
    return (sum(s for s, _ in steps if s > 0), -sum(s for s, _ in steps if s < 0))


def _only_stepped(body, names, test=None, target=None) -> dict:
    """``{name: [(change, whether in an if), ...]}`` for those of ``names`` that
    ``body`` steps by literals (at its top or in its ``if`` branches) and uses in no
    other way, nor ``target``, nor ``test`` but in comparisons."""
    steps, rest = {}, []
    _steps_in(body, False, steps, rest)
    steps = {name: taken for name, taken in steps.items() if name in names}
    if not steps:
        return steps
    used = _not_compared(test) if test is not None else set()
    for node in rest if target is None else [*rest, target]:
        for n in walk(node):
            if n.__class__ is _NAME:
                used.add(n.id)
            elif isinstance(n, gast.Global | gast.Nonlocal):
                used.update(n.names)
    return {name: taken for name, taken in steps.items() if name not in used}


def _steps_in(stmts, inner, steps, rest):
    """Gather the literal steps ``stmts`` make, at their top or in their ``if``
    branches (``steps``: ``{name: [(change, whether in an if), ...]}``), and the
    nodes everything else is in (``rest``: other statements, ``if`` tests)."""
    for stmt in stmts:
        stepped = _step(stmt)
        if stepped is not None:
            steps.setdefault(stepped[0], []).append((stepped[1], inner))
        elif stmt.__class__ is gast.If:
            rest.append(stmt.test)
            _steps_in(stmt.body, True, steps, rest)
            _steps_in(stmt.orelse, True, steps, rest)
        else:
            rest.append(stmt)


def _step(stmt):
    """``(name, change)`` where ``stmt`` is ``name += k``, ``name -= k`` or ``name =
    name ± k`` (``k`` an int literal); None otherwise."""
    if isinstance(stmt, gast.AugAssign):
        target, op, value = stmt.target, stmt.op, stmt.value
    elif (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
          and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.targets[0], gast.Name)
          and isinstance(stmt.value.left, gast.Name)
          and stmt.value.left.id == stmt.targets[0].id):
        target, op, value = stmt.targets[0], stmt.value.op, stmt.value.right
    else:
        return None
    sign = _STEPS.get(type(op))
    literal = _int_literal(value)
    if not isinstance(target, gast.Name) or sign is None or literal is None:
        return None
    return target.id, sign * literal


def _int_literal(node):
    """The value of an int literal, or of arithmetic on them (``10 ** 8``)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = _int_literal(node.operand)
        return None if value is None else -value
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _int_literal(node.left), _int_literal(node.right)
        if left is None or right is None or (
                isinstance(node.op, gast.Pow) and not 0 <= right <= 64):
            return None
        return _ARITHMETIC[type(node.op)](left, right)
    return None


_ARITHMETIC = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
               gast.Pow: operator.pow}


def _not_compared(test) -> set:
    """The names ``test`` uses other than as one side of a single comparison whose
    other side is a name or a constant."""
    nodes = walk_list(test)
    compared = set()
    for node in nodes:
        if node.__class__ is gast.Compare and len(node.comparators) == 1:
            sides = (node.left, node.comparators[0])
            if all(s.__class__ in _SIDES for s in sides):
                compared.update(id(s) for s in sides)
    return {node.id for node in nodes if node.__class__ is _NAME and id(node) not in compared}


def _same_scope_walk(stmts):
    """The nodes of ``stmts``, not entering nested functions or classes."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(child_nodes(node))
