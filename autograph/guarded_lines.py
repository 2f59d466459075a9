"""The user's lines that converted code runs inside a ``try``: facts made at conversion.

A traced check (``assert``, ``if ...: raise``) that the runtime would stage as a
check of the compiled program must know whether converted code calling it is
inside a ``try`` whose handlers could catch Python's exception (then it is raised
while tracing, and the ``except`` refuses it), or inside a ``try`` whose ``finally``
jumps and so would discard it (then it is refused). The runtime answers from the
frames of converted code being traced, by each frame's line (``frame.f_lineno``)
in these facts, which the transpiler computes from the final tree, just before
compiling it, and hands to ``runtime/try_lines.py``: the runtime never reads bytecode
or source for them.

Facts are kept per *anchor*: the first line of a user's definition, which is the
``co_firstlineno`` of its code and of the code of every helper generated inside it
(``if_true``, ``loop_body``: ``transpiler._anchor_helpers_at_a_def`` gives them the
definition's line). A helper generated from statements inside a ``try`` body is
defined and called there, so its lines count as inside that ``try`` too; a user's
function defined inside a ``try`` body has an anchor of its own, and a ``try``
around its definition does not cover its calls.

- *handled*: lines of the body of a ``try`` with ``except`` clauses: an exception
  raised there reaches a handler that may catch it. Each such line maps to what the
  handlers around it name (``"ValueError"``, ``"errors.Bad"``; ``"*"`` for a bare
  ``except`` or an expression other than names): the runtime resolves the names in
  the frame when it asks whether one of them catches a given error. (A ``finally``
  alone catches nothing: the exception leaves the function after it, as a staged
  check's does; a ``finally`` that jumps is the *discarding* case.)
- *discarding*: lines of the body of a ``try`` that ``converters/try_statements.py``
  made to keep the exception in flight for a ``finally`` that jumps (its handler
  calls ``current_exception``): an exception raised there is discarded by the jump.
"""

from __future__ import annotations

import ast

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TRIES = (ast.Try, ast.TryStar)


def guarded_lines(definition, runtime_name: str) -> tuple:
    """The facts of ``definition`` (an ``ast`` definition as compiled, its helpers
    anchored): ``((anchor, handled, discarding_lines), ...)``, one row per anchor of
    a definition in it (empty where it has no ``try``): ``handled`` a dict from line
    number to the frozenset of what the handlers around it catch (``_caught``),
    ``discarding_lines`` a frozenset; ``runtime_name``: how the generated code names
    the runtime (``ag__``)."""
    found: dict = {}
    anchor = _first_line(definition)
    found[anchor] = ({}, set())
    # blocks, with what covers them: the handlers' names (a frozenset, empty where no
    # `except` covers them) and whether a jumping `finally` discards their errors
    pending = [(definition.body, anchor, frozenset(), False)]
    while pending:
        block, anchor, handled, discarding = pending.pop()
        for stmt in block:
            if handled or discarding:
                _add(found[anchor], _expression_lines(stmt), handled, discarding)
            cls = stmt.__class__
            if cls in _DEFS:
                first = _first_line(stmt)
                if first != anchor:   # a user's definition: its calls are not in this `try`
                    found.setdefault(first, ({}, set()))
                    pending.append((stmt.body, first, frozenset(), False))
                else:                 # a helper, defined and called where it stands
                    pending.append((stmt.body, anchor, handled, discarding))
            elif cls in _TRIES:
                # (a `finally` alone catches nothing: an error raised under it leaves
                # the function as a staged check's would, after the `finally` ran)
                keeps = _keeps_for_a_finally(stmt, runtime_name)
                pending.append((stmt.body, anchor, handled | _caught(stmt.handlers),
                                discarding or keeps))
                pending.append((stmt.orelse, anchor, handled, discarding))
                pending.extend((h.body, anchor, handled, discarding) for h in stmt.handlers)
                pending.append((stmt.finalbody, anchor, handled, discarding))
            elif hasattr(stmt, "body"):
                pending.append((stmt.body, anchor, handled, discarding))
                if getattr(stmt, "orelse", None):
                    pending.append((stmt.orelse, anchor, handled, discarding))
            elif cls is ast.Match:
                pending.extend((case.body, anchor, handled, discarding) for case in stmt.cases)
    return tuple((anchor, h, frozenset(d)) for anchor, (h, d) in found.items())


def without_tries(definition) -> tuple:
    """``guarded_lines`` of a definition known to hold no ``try``: its own row."""
    return ((_first_line(definition), {}, frozenset()),)


def _caught(handlers) -> frozenset:
    """What the ``except`` clauses ``handlers`` name: dotted names as written, and
    ``"*"`` for a bare ``except`` or a type given by any other expression."""
    names = set()
    for handler in handlers:
        kind = handler.type
        for item in kind.elts if isinstance(kind, ast.Tuple) else [kind]:
            name = _dotted(item)
            names.add("*" if name is None else name)
    return frozenset(names)


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _first_line(definition) -> int:
    """The line the compiler gives as the definition's ``co_firstlineno``."""
    return min([definition.lineno] + [d.lineno for d in definition.decorator_list])


def _add(facts, lines, handled, discarding):
    if handled:
        for line in lines:
            facts[0][line] = facts[0].get(line, frozenset()) | handled
    if discarding:
        facts[1].update(lines)


def _keeps_for_a_finally(node, runtime_name) -> bool:
    """Whether ``node`` is the ``try`` the try converter adds around a ``try`` whose
    ``finally`` jumps: one handler, ``pending = <runtime>.current_exception()``."""
    if len(node.handlers) != 1 or not node.handlers[0].body:
        return False
    first = node.handlers[0].body[0]
    call = first.value if isinstance(first, ast.Assign) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "current_exception"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == runtime_name)


def _expression_lines(stmt):
    """The lines of the expressions ``stmt`` itself evaluates (not those of the
    statements inside it): where a frame running it can be."""
    lines = set()
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST) and not isinstance(item, ast.stmt):
                for sub in ast.walk(item):
                    start = getattr(sub, "lineno", None)
                    if start is not None:
                        lines.update(range(start, (sub.end_lineno or start) + 1))
    start = getattr(stmt, "lineno", None)
    if start is not None and not any(isinstance(getattr(stmt, f, None), list) and getattr(stmt, f)
                                     for f in ("body", "handlers", "cases")):
        lines.update(range(start, (stmt.end_lineno or start) + 1))
    return lines
