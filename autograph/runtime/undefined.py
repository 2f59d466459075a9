"""The value of a variable that a converted statement did not bind.

Generated code passes ``Undefined('y')`` where a branch or loop may leave ``y``
unbound, and guards later reads with ``ld(y)``, so such a read raises
``UnboundLocalError`` exactly as the original would.
"""

from __future__ import annotations


class Undefined:
    """Stands for the unbound local variable ``name``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"<unbound {self.name}>"


def ld(value):
    """Read a variable that may be unbound: raise ``UnboundLocalError`` if it is."""
    if isinstance(value, Undefined):
        raise UnboundLocalError(
            f"cannot access local variable '{value.name}' where it is not associated "
            "with a value")
    return value


def local_or_undefined(frame_locals: dict, name: str):
    """``frame_locals[name]``, or ``Undefined(name)`` when that local is unbound."""
    try:
        return frame_locals[name]
    except KeyError:
        return Undefined(name)


def is_undefined(value) -> bool:
    """Whether ``value`` is, or is a pytree holding, an ``Undefined``."""
    if isinstance(value, Undefined):
        return True
    if isinstance(value, (tuple, list)):
        return any(is_undefined(v) for v in value)
    if isinstance(value, dict):
        return any(is_undefined(v) for v in value.values())
    return False


class Unset(Undefined):
    """The unbound local variable ``name``, which no code reads (or deletes) before
    assigning it: definedness analysis found it bound before every read
    (``for ...: if c: r = 1; break / else: r = 2`` binds ``r`` on every path).

    So a staged ``if`` or loop may stand in a placeholder of the type the region
    gives it (zeros) where Python has it unbound: nothing ever sees it.
    """

    __slots__ = ()


class UndefinedReturn(Unset):
    """The function's return value before any ``return`` ran.

    Generated code reads it only after a ``return`` set it (behind the
    ``did_return`` flag), so a staged ``if`` or loop may stand in a placeholder of
    the type the returns give (zeros) wherever it is still unset.
    """

    __slots__ = ()


def is_undefined_return(value) -> bool:
    """Whether ``value`` is unbound and never read so: a placeholder may stand in."""
    return isinstance(value, Unset)
