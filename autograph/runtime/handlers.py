"""What an ``except`` clause of converted code may handle.

Python raises an exception only on the paths that run. A staged branch or loop
is traced whatever its condition, so an exception raised while tracing it (a
``raise`` under a traced ``if`` in a called function, say) would reach an
``except`` clause for every input, and the compiled program raises nothing when it
runs: handling it would compute something Python does not. Nor is a
``ConversionError`` (autograph refusing a construct) an error of the user's
computation. ``except`` clauses whose ``try`` calls functions check what they
caught first (``converters/try_statements.py``).
"""

from __future__ import annotations

import contextlib
import dis
import sys
import threading
import warnings
import weakref

import jax
import numpy as np

from autograph.call_policy import is_library_file
from autograph.errors import ConversionError
from autograph.runtime import user_managers
from autograph.runtime.regions import regions_of
from autograph.runtime.trace_context import trace_active, under_jit
from autograph.runtime.tracing import caller_location, has_tracer


def check_caught():
    """Called first in an ``except`` clause: let the exception being handled through
    unless it is a ``ConversionError`` (raised again as it is) or was raised while a
    staged branch or loop was traced (a ``ConversionError`` at the ``except``)."""
    error = sys.exc_info()[1]
    if isinstance(error, ConversionError):
        raise error
    staged = [region for region in regions_of(error) if region.staged]
    if not staged:
        return
    region = staged[-1]
    where = caller_location()
    raise ConversionError(
        f"this `except` caught {type(error).__name__}({error}) raised while tracing the "
        f"{region.construct} at {region.where}, which autograph staged with lax because "
        "its condition or iterable is traced: its code runs while tracing, whatever the "
        "condition, so the `except` would handle the error for every input, and the "
        "compiled program raises nothing when it runs (an `except` cannot see errors of "
        "compiled code). Check traced values with an `assert` (autograph stages it) or "
        "jax.experimental.checkify, or compute a fallback with jnp.where; keep the "
        "`try` for errors Python raises.", where.filename, where.lineno) from error


class managed:  # noqa: N801 - used as a context manager, like contextlib's
    """``with manager:`` as Python runs it (``__enter__`` and ``__exit__`` looked up on
    its type first; the user's converted, ``user_managers``), except that
    ``__exit__`` may not suppress an exception that would compute something Python
    does not (``current_exception`` says which): that is a ``ConversionError`` at
    the ``with``
    (``converters/with_statements.py``)."""

    __slots__ = ("_manager", "_exit")

    def __init__(self, manager, call=None):
        enter = _special(manager, "__enter__")
        if enter is None:
            raise TypeError(f"'{type(manager).__name__}' object does not support the "
                            "context manager protocol")
        leave = _special(manager, "__exit__")
        if leave is None:
            raise TypeError(f"'{type(manager).__name__}' object does not support the "
                            "context manager protocol (missed __exit__ method)")
        if call is not None:   # ``call``: the caller's converted_call
            enter, leave = user_managers.calls_of(manager, enter, leave, call)
        self._exit = leave
        self._manager = (manager, enter)

    def __enter__(self):
        manager, enter = self._manager
        kind = _kind(manager) if under_jit() else None   # (a @contextmanager's enter
        value = enter()                                  # drops what _kind reads)
        _ACTIVE.__dict__.setdefault("managers", []).append((manager, sys._getframe(1)))
        _ACTIVE.__dict__.setdefault("traced_kinds", []).append(kind)
        return value

    def __exit__(self, kind, error, traceback):
        _ACTIVE.managers.pop()
        _ACTIVE.traced_kinds.pop()
        suppressed = self._exit(kind, error, traceback)
        if suppressed and error is not None:
            what = _not_discarded(error)
            if what is not None:
                where = caller_location()
                raise ConversionError(
                    f"this `with` suppressed {type(error).__name__}({error}), {what}: the "
                    "context manager would discard it for every input. Keep traced checks "
                    "out of the `with` (or use one that suppresses nothing), and check "
                    "traced values with an `assert` or jax.experimental.checkify.",
                    where.filename, where.lineno) from error
        return suppressed


def _special(obj, name):
    """``obj``'s special method ``name`` bound as Python's ``with`` looks it up (on
    the type, through descriptors), or None."""
    kind = type(obj)
    for base in kind.__mro__:
        if name in base.__dict__:
            attr = base.__dict__[name]
            get = getattr(type(attr), "__get__", None)
            return get(attr, obj, kind) if get is not None else attr
    return None


_ACTIVE = threading.local()   # .managers: (manager, frame of its `with`), innermost last
# .traced_kinds: per entry of .managers, what `_kind` says of it if entered under jit


def _kind(manager):
    """What ``manager`` changes that a call made when the program runs, after its
    ``with`` has ended, would miss: "stdout" (``redirect_stdout``), "warnings"
    (``catch_warnings``), "printoptions" (NumPy's, ``jnp.printoptions`` too); else None."""
    if isinstance(manager, contextlib.redirect_stdout):
        return "stdout"
    if isinstance(manager, warnings.catch_warnings):
        return "warnings"
    if (isinstance(manager, contextlib._GeneratorContextManager)
            and getattr(manager, "func", None) is _PRINTOPTIONS):
        return "printoptions"
    return None


_PRINTOPTIONS = getattr(np.printoptions, "__wrapped__", None)


def set_stdout(owner, stream) -> None:
    """``owner.stdout = stream`` (``sys.stdout = buf``, by hand: the
    ``stdout_assignments`` converter). Where ``owner`` is ``sys``, under ``jit``, the
    swap is noted, as a ``redirect_stdout`` entered while tracing is, until the
    stdout found before it is put back: a staged ``print`` without ``file=`` goes to
    the stream set, as Python's does, not to the one in force when the program runs."""
    if owner is sys and under_jit():
        swap = getattr(_ACTIVE, "stdout_swap", None)   # (the stdout found, the one set)
        found = sys.stdout
        before = swap[0] if swap is not None and swap[1] is found else found
        _ACTIVE.stdout_swap = None if stream is before else (before, stream)
    owner.stdout = stream


def _stdout_swapped() -> bool:
    """Whether a ``set_stdout`` under ``jit`` set the ``sys.stdout`` in force now."""
    swap = getattr(_ACTIVE, "stdout_swap", None)
    return swap is not None and swap[1] is sys.stdout


def entered_while_tracing(kind: str) -> bool:
    """Whether a ``with`` of converted code entered while tracing under ``jit``, of
    the ``kind`` ``_kind`` names, is active now: for ``printing``, whose staged
    ``print`` (or warning) is made when the program runs, after it has ended. A
    ``print`` without ``file=`` goes to the ``sys.stdout`` a ``redirect_stdout``
    set, as Python's does; one inside ``np.printoptions`` shows arrays with those
    options; a ``warnings.warn`` inside ``catch_warnings`` is made while tracing.
    A ``sys.stdout`` set by hand under ``jit`` (``set_stdout``) counts as a
    ``redirect_stdout``."""
    return kind in getattr(_ACTIVE, "traced_kinds", ()) or (
        kind == "stdout" and _stdout_swapped())


def suppressing_around(frames) -> bool:
    """Whether a ``with`` active now in one of ``frames`` (frame ids) has a context
    manager that may suppress an exception (``may_suppress``)."""
    return any(id(frame) in frames and may_suppress(manager)
               for manager, frame in getattr(_ACTIVE, "managers", ()))


def may_suppress(manager) -> bool:
    """Whether ``manager``'s ``__exit__`` may return true (suppress the exception):
    ``contextlib.suppress`` and ``ExitStack``; a user's ``__exit__`` that returns
    anything but ``None`` or ``False``; a user's ``@contextmanager`` generator with
    an ``except`` (library managers, such as ``jax.named_scope``, are taken to
    suppress nothing).

    The one place the runtime reads bytecode (docs/architecture.md, "Checks, try,
    and Python side effects"): the manager is a value, known only when the ``with``
    runs, and its ``__exit__`` is the user's code as written, never converted, so no
    conversion sees it. What is read is cached per code object, and asked only
    while tracing a traced check inside a ``with``."""
    if isinstance(manager, contextlib.suppress | contextlib.ExitStack):
        return True
    if isinstance(manager, contextlib._GeneratorContextManager):
        code = getattr(getattr(manager, "gen", None), "gi_code", None)
        return code is not None and not is_library_file(code.co_filename) and _read(
            code)[0]
    code = getattr(getattr(type(manager), "__exit__", None), "__code__", None)
    return code is not None and not is_library_file(code.co_filename) and _read(code)[1]


def _read(code) -> tuple:
    """``(catches, returns_other_than_none_or_false)`` of ``code``: whether it has
    an ``except`` clause (not only ``finally``s), and whether a ``return`` of it
    returns something other than the constants ``None`` or ``False`` (cached per
    code object, not keeping it alive)."""
    found = _READ.get(code)
    if found is None:
        instructions = list(dis.get_instructions(code))
        ops = [i.opname for i in instructions]
        catches = "CHECK_EXC_MATCH" in ops or any(
            op == "PUSH_EXC_INFO" and nxt == "POP_TOP"
            for op, nxt in zip(ops, ops[1:], strict=False))
        returns = any(i.opname == "RETURN_VALUE" and not (
            n and instructions[n - 1].opname == "LOAD_CONST"
            and instructions[n - 1].argval in (None, False))
            for n, i in enumerate(instructions))
        found = _READ[code] = (catches, returns)
    return found


_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _not_discarded(error) -> str | None:
    """Why ``error`` may not be discarded (by a jump in a ``finally`` or a context
    manager), or None where it may."""
    if isinstance(error, ConversionError):
        return "autograph's refusal of a construct (no error of the computation)"
    if isinstance(error, jax.errors.JAXTypeError | jax.errors.JAXIndexError):
        return "JAX's error about a traced value (Python, holding values, raises none)"
    staged = [region for region in regions_of(error) if region.staged]
    if staged:
        return (f"raised while tracing the {staged[-1].construct} at {staged[-1].where}, "
                "which autograph staged with lax because its condition or iterable is "
                "traced: its code runs while tracing, whatever the condition")
    return None


def current_exception():
    """The exception being handled (``sys.exc_info()[1]``): kept by a ``try`` whose
    ``finally`` may discard it with a jump. Raised again at once where discarding it
    would compute something Python does not (``_not_discarded``): a
    ``ConversionError`` and JAX's errors about traced values as they are, one raised
    while a staged branch or loop was traced (Python raises it for some inputs
    only, the jump would discard it for all) as a ``ConversionError`` at the
    ``try``."""
    error = sys.exc_info()[1]
    what = _not_discarded(error)
    if what is None:
        return error
    if isinstance(error, ConversionError | jax.errors.JAXTypeError | jax.errors.JAXIndexError):
        raise error
    where = caller_location()
    raise ConversionError(
        f"the `finally` of this `try` leaves it (`return`, `break` or `continue`), "
        f"discarding the exception in flight, and {type(error).__name__}({error}) was "
        f"{what}, so the jump would discard the error for every input and the result "
        "would be the one of the inputs that raise. Move the `return`/`break`/`continue` "
        "out of the `finally` (after the `try`), or check traced values with an "
        "`assert` outside the `try`.", where.filename, where.lineno) from error


def check_try_inputs(*names):
    """Called before a ``try`` whose ``except`` could catch an error Python raises
    on values (``converters/try_statements.py``): under a JAX trace, a
    ``ConversionError`` at the ``try`` if one of the caller's variables ``names``
    (those its body reads) holds a traced value. Traced operations never raise those
    errors, so the ``except`` would never run where Python's does."""
    if not trace_active():
        return
    variables = sys._getframe(1).f_locals
    for name in names:
        value = variables.get(name)
        if value is not None and has_tracer(value):
            where = caller_location()
            raise ConversionError(try_error_text(
                "this `try`", f"its body computes with '{name}', which is traced"),
                where.filename, where.lineno)


def try_error_text(subject: str, what: str) -> str:
    """Why a ``try`` whose ``except`` could catch an error Python raises on values
    (``subject``) cannot be honoured where ``what``; the one rule for ``try`` and traced values
    (README, "try and staging")."""
    return (
        f"{subject} has an `except` that handles an error Python raises on values "
        f"(ZeroDivisionError, OverflowError, IndexError, or a base of one: "
        f"ArithmeticError, LookupError, Exception, a bare `except`), and {what}. "
        "Traced operations never raise these (x / 0 is inf, an index out of range is "
        "clamped), so the `except` would not run where Python's does. Compute the "
        "fallback from the value instead (jnp.where(a == 0, fallback, 1.0 / a)), check "
        "it with an `assert` or jax.experimental.checkify, or catch only the errors "
        "Python raises while tracing (ValueError, TypeError).")
