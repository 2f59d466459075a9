"""Whether a frame of converted code runs inside a ``try``, by its line.

The transpiler records, for each converted definition, the user's lines that its
code (and its helpers') runs inside a ``try`` (``autograph/guarded_lines.py``
computes them from the tree it compiles, and the disk cache keeps them with the
code). The checks ask here while tracing (``checks.py``): a lookup of the frame's
file, the first line of its code and its current line; no bytecode is read.
"""

from __future__ import annotations

# (file name, first line of a definition's code) -> ({handled line: what its
# handlers name}, discarding lines)
_FACTS: dict = {}
_NONE = ({}, frozenset())


def record(filename: str, facts) -> None:
    """Keep the facts of one conversion compiled under ``filename``:
    ``((anchor, handled, discarding_lines), ...)`` (a newer conversion of the
    same definition replaces an older one's: the definition at that line after an
    edit; only definitions with a ``try`` are kept)."""
    for anchor, handled, discarding in facts:
        if handled or discarding:
            _FACTS[(filename, anchor)] = (handled, discarding)
        else:
            _FACTS.pop((filename, anchor), None)


def _facts(frame):
    code = frame.f_code
    return _FACTS.get((code.co_filename, code.co_firstlineno), _NONE)


def under_a_handler(frame) -> bool:
    """Whether converted code running in ``frame`` is inside a ``try`` with
    ``except`` clauses or a ``finally`` (its body; the handlers and ``else`` of one
    with a ``finally``): an exception raised there reaches a handler."""
    return frame.f_lineno in _facts(frame)[0]


def under_a_handler_of(frame, error_type) -> bool:
    """Whether converted code running in ``frame`` is inside a ``try`` one of whose
    ``except`` clauses may catch an ``error_type``: a class it names that is
    ``error_type`` or a base of it, or one that cannot be told here (a bare
    ``except``, a type given by an expression, a name not bound)."""
    caught = _facts(frame)[0].get(frame.f_lineno)
    if not caught:
        return False
    for name in caught:
        kind = _resolve(frame, name)
        if kind is None or any(isinstance(k, type) and issubclass(error_type, k)
                               for k in (kind if isinstance(kind, tuple) else (kind,))):
            return True
    return False


def _resolve(frame, name):
    """The object the dotted ``name`` is bound to as ``frame``'s code reads it, or
    None where it cannot be told (``"*"``, an unbound name, a failing attribute)."""
    if name == "*":
        return None
    first, *rest = name.split(".")
    for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
        if first in scope:
            value = scope[first]
            break
    else:
        return None
    try:
        for attribute in rest:
            value = getattr(value, attribute)
    except Exception:  # noqa: BLE001 - a name that cannot be read may catch anything
        return None
    return value


def under_a_discarding_finally(frame) -> bool:
    """Whether converted code running in ``frame`` is inside the body of a ``try``
    whose ``finally`` jumps (``converters/try_statements.py`` keeps the exception
    for it): an exception raised there is discarded."""
    return frame.f_lineno in _facts(frame)[1]
