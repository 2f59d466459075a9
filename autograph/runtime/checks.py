"""``assert`` and traced ``raise``: Python's statement, or a run-time check of a traced condition.

``assert x != 0, 'Do not pass zero!'`` becomes
``ag__.assert_stmt(x != 0, lambda: 'Do not pass zero!')``; the message is behind a
lambda because Python evaluates it only when the assertion fails. (Under
``python -O`` the converter drops the statement, as Python does.)

- A Python condition: exactly Python's ``assert`` (``AssertionError(msg)``, or a
  bare ``AssertionError`` without a message).
- A traced condition is checked when the compiled program runs, and a failure
  stops the program there, as Python's assert stops the function (a staged
  ``while`` does not run on with bad values, or forever). The error carries the
  message (a traced message shows its value) and the user's ``file:line``.

  The check is ``lax.cond(cond, nothing, report)``: the host is called only when
  the check fails (under ``vmap`` the ``cond`` becomes a select and the host sees
  every example's condition each time), and ``report`` raises there.

  * Under ``autograph.to_graph``: ``StagedAssertionError`` (an ``AssertionError``)
    with the message and ``file:line``, raised from the call (a function with traced
    asserts waits for its result; one without is dispatched asynchronously).
  * Inside the user's own ``jax.jit`` (or ``vmap``, ``scan``...): nothing needs
    wrapping; the call (or the first use of its result) raises JAX's
    ``JaxRuntimeError``, whose text ends with ``StagedAssertionError: <message>
    [file:line: source]``. Use ``autograph.to_graph`` for a plain ``AssertionError``.
  * Traced under ``jax.experimental.checkify.checkify`` (around the converted
    function, or around a ``jit`` of it): the check is ``checkify.check``, so the
    failure is in the error value that ``checkify`` returns (``err.get()``,
    ``err.throw()``), with no host callback (cheap on TPU). A checkify error does
    not stop the program: a staged loop runs on after a failure.

  The mode in force (``autograph.convert(f, asserts=...)``,
  ``autograph.staged_effects(asserts=...)``, see ``effects``) can make the check
  always a checkify check, always the host check, or drop traced checks (as
  ``python -O`` drops every assert). Under ``jax.export``, which cannot serialize
  host callbacks, a host check is refused with a ``ConversionError`` at the
  assert's line.
"""

from __future__ import annotations

import collections
import linecache
import logging
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify

from autograph.errors import ConversionError
from autograph.runtime import effects, handlers, paths, regions, try_lines
from autograph.runtime.printing import DeferredFormat, message_text
from autograph.runtime.tracing import FlatTree, caller_location, has_tracer, is_tracer


class StagedAssertionError(AssertionError):
    """A traced ``assert`` that failed when the compiled program ran."""


def _not_a_failed_assert(record) -> bool:
    """Logging filter: JAX logs every exception a debug callback raises, with its
    traceback, before passing it on; a failed traced assert is reported to the caller
    (as ``StagedAssertionError`` or in JAX's run-time error), so its log entry only
    repeats the message with runtime frames, on stderr."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (isinstance(exc, StagedAssertionError) or _is_failed_check(exc))


logging.getLogger("jax._src.debugging").addFilter(_not_a_failed_assert)


# How many traced asserts have been staged in this process. to_graph reads it on
# every call, so it is a plain list cell, not a thread-local (a read costs ~30 ns
# instead of ~600 ns); a race only makes to_graph wait for one result it needn't.
_STAGED_ASSERTS = [0]


def staged_assert_count() -> int:
    """How many traced asserts have been staged so far (``to_graph`` asks to learn
    whether a function it compiled has any)."""
    return _STAGED_ASSERTS[0]


def reraise_failed_assert(error) -> None:
    """Raise ``StagedAssertionError`` if JAX's run-time ``error`` comes from a failed
    traced assert, and the user's own exception if it comes from a failed staged
    ``if ...: raise`` check; return otherwise."""
    text = str(error)
    raised = _failed_check(text)
    if raised is not None:
        raised.__suppress_context__ = True   # (keeps a `raise ... from` cause)
        raise raised
    if _MARKER in text:
        raise StagedAssertionError(text.rsplit(_MARKER, 1)[1].strip()) from None


_MARKER = f"{StagedAssertionError.__name__}: "
# The user's exceptions that failed staged checks raised on the host, until to_graph
# raises them from the call (JAX's error shows them as text). A few are kept: under
# the user's own jit nobody collects them.
_RAISED: collections.deque = collections.deque(maxlen=16)
_RAISED_LOCK = threading.Lock()


def _failed_check(text):
    """The newest exception of a failed staged check that JAX's error ``text`` shows."""
    with _RAISED_LOCK:
        for error in reversed(_RAISED):
            if f"{type(error).__name__}: {error}" in text or (
                    not error.args and text.rstrip().endswith(type(error).__name__)):
                _RAISED.remove(error)
                return error
    return None


def _is_failed_check(error) -> bool:
    with _RAISED_LOCK:
        return any(error is e for e in _RAISED)


def assert_stmt(cond, message=None):
    """``assert cond, message()``: Python's assert, or a run-time check if ``cond``
    is traced."""
    if not is_tracer(cond):
        if not cond:
            if _maybe_unreached():
                cond = jnp.asarray(False)   # fails where the compiled program gets here
            elif message is None:
                raise AssertionError
            else:
                raise AssertionError(message_text(message()))
        else:
            return
    staged = _traced_check(cond, "assert", "`assert jnp.all(c)`", "assert")
    if staged is None:
        return
    where, mode, truth = staged
    text = message() if message is not None else "assertion failed"
    # ordered with the traced raises and checks: the first that fails is Python's
    _stage_check(truth, mode, where, text, _check_on_host, ordered=True)


def _traced_check(cond, what, fix, mode_what):
    """Where a traced check of ``cond`` stands, how it is staged, and ``cond`` as a
    bool: ``(where, mode, truth)``; None when nothing is staged (a replay of
    recorded paths, or traced checks dropped)."""
    if paths.is_replaying():
        return None
    where = caller_location()
    _check_scalar(cond, what, fix, where)
    mode = _check_mode(where, mode_what)
    if mode is None:
        return None
    return where, mode, cond if cond.dtype == bool else cond != 0


def _check_scalar(cond, what, fix, where):
    if jnp.shape(cond) != ():
        raise ConversionError(
            f"the condition of this {what} is a traced array of shape "
            f"{tuple(jnp.shape(cond))}, and its truth value is ambiguous. Reduce it to "
            f"one value, e.g. {fix}.", where.filename, where.lineno)


def _check_mode(where, what):
    """``'checkify'`` or ``'callback'``: how a traced check is staged here; None when
    traced checks are dropped."""
    mode = effects.current().asserts
    if mode == "drop":
        return None
    functional = mode == "checkify" or (mode == "auto" and effects.under_checkify())
    if not functional and effects.under_export():
        raise ConversionError(effects.export_error_text(
            what, "convert the function with autograph.convert(f, asserts='drop') or "
            "asserts='checkify' (and wrap it with checkify.checkify), or trace it inside "
            "`with autograph.staged_effects(asserts=...)`; `python -O` removes asserts, as "
            "Python does"), where.filename, where.lineno)
    return "checkify" if functional else "callback"


def _stage_check(pred, mode, where, text, on_host, extra=(), ordered=False):
    """Stage ``pred`` (a traced bool: the check passes) as a run-time check: under
    ``mode == 'checkify'`` a ``checkify.check`` with ``text`` (a string or a
    ``DeferredFormat``) and ``where``; else a host call of ``on_host(fmt, treedef)``'s
    function when ``pred`` fails, with the flattened ``(text_values, extra)``;
    ``ordered``: in program order with the other ordered checks (the first that fails
    is the one Python raises)."""
    if _under_a_discarding_finally():
        raise ConversionError(
            "this check is of a traced value, so autograph stages it as a check that "
            "fails when the compiled program runs; the `finally` of a `try` around it "
            "leaves the `try` (`return`, `break` or `continue`), which in Python discards "
            "the error, but an error of compiled code is raised from the call. Move the "
            "`return`/`break`/`continue` out of the `finally` (after the `try`), or move "
            "the check out of the `try`.", where.filename, where.lineno)
    if _under_a_suppressing_with():
        raise ConversionError(
            "this check is of a traced value, so autograph stages it as a check that "
            "fails when the compiled program runs; a `with` around it has a context "
            "manager that may suppress the error (contextlib.suppress, an `__exit__` that "
            "may return true), which Python would let it do, but an error of compiled code "
            "is raised from the call. Move the check out of the `with`, or compute a "
            "fallback with jnp.where.", where.filename, where.lineno)
    reached = paths.condition()
    if reached is not None:   # under vmap, only the examples whose path is here
        pred = jnp.logical_or(pred, jnp.logical_not(reached))
    source = linecache.getline(where.filename, where.lineno).strip()
    suffix = _escape(f" [{where}: {source}]" if source else f" [{where}]")
    if has_tracer(text):
        if not isinstance(text, DeferredFormat):
            text = DeferredFormat("{}", ((text,), {}), percent=False)
        fmt, values = "{}" + suffix, (text,)
    else:
        fmt, values = _escape(str(text)) + suffix, ()
    _STAGED_ASSERTS[0] += 1
    if mode == "checkify":
        checkify.check(pred, fmt, *values)
        return
    flat = FlatTree((values, extra), lambda leaf: isinstance(leaf, jax.Array))
    check = on_host(fmt, flat)
    lax.cond(pred, lambda: None,
             lambda: jax.debug.callback(check, pred, *flat.selected, ordered=ordered))


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _check_on_host(fmt, flat):
    def check(pred, *arrays):
        if not np.all(np.asarray(pred)):
            values, _ = flat.rebuild(arrays)
            raise StagedAssertionError(fmt.format(*values))
    return check


def raise_if(cond, raiser, values=None, *, effects=False):
    """The condition of ``if cond: <...; raise E(msg)>``: ``cond`` itself when it is a
    Python value (the ``if`` runs as written). A traced ``cond`` is staged as a
    run-time check that calls ``raiser(*values())`` (the raising branch, a function
    of the local values it reads) when ``cond`` holds, and the ``if`` is given
    False: what follows is staged as if the check passed. ``effects``: the branch
    does more than raise (it then runs only when the check fails)."""
    if not is_tracer(cond):
        if not (regions.depth() and cond):
            return cond
        if not _raise_decided_in_python(raiser, values):
            return cond
        cond = jnp.asarray(True)    # fails where the compiled program gets here
    _stage_raise(cond, True, raiser, values, effects)
    return False


def raise_unless(cond, raiser, values=None, *, effects=False):
    """The condition of ``if cond: ... else: <...; raise E(msg)>``: as ``raise_if``,
    with the check failing when ``cond`` does not hold; a traced ``cond`` gives the
    ``if`` True."""
    if not is_tracer(cond):
        if not (regions.depth() and not cond):
            return cond
        if not _raise_decided_in_python(raiser, values):
            return cond
        cond = jnp.asarray(False)   # fails where the compiled program gets here
    _stage_raise(cond, False, raiser, values, effects)
    return True


def _maybe_unreached() -> bool:
    """Whether the point being traced is inside a staged branch or loop body that
    the compiled program may not run (a staged ``if``'s branch, a ``while`` body):
    a failure that Python decides there is Python's only where the program gets
    there, so it is staged as a check that fails when it is reached (while a loop
    body is traced again to differentiate it, the check the forward trace staged
    stands for it: nothing is staged or raised then)."""
    return bool(paths.depth())


def _raise_decided_in_python(raiser, values) -> bool:
    """Inside a staged region, a raise that a Python condition decided. Where the
    point may not be reached (``_maybe_unreached``): True, the caller stages it as
    a check that fails when reached. Else raised here, marked as decided in Python
    (so no note explains it as a staged branch's); False when the branch reads a
    variable not bound yet (the branch itself raises, reading what it reads)."""
    try:
        held = tuple(values()) if values is not None else ()
    except NameError:
        return False
    if _maybe_unreached():
        return True
    try:
        raiser(*held)
    except Exception as error:
        regions.record(error, regions.PYTHON_BRANCH)
        raise


def _stage_raise(cond, fails_when, raiser, values, effects):
    staged = _traced_check(cond, "input check", "`if jnp.any(c): raise ...`",
                           "input check (`if ...: raise`)")
    if staged is None:
        return
    where, mode, truth = staged
    pred = jnp.logical_not(truth) if fails_when else truth
    try:
        held = tuple(values()) if values is not None else ()
    except NameError as error:
        raise ConversionError(
            f"this check's raising branch reads a variable that is not bound here "
            f"({error}); with a traced condition its values are taken before the check "
            "runs. Bind it before the `if`.", where.filename, where.lineno) from None
    if _under_an_except():
        # Python's except around a caller may catch this; a run-time check raises
        # from the compiled call. Where one of the handlers around catches its type,
        # raise while tracing, as the staged branch did: the except clause refuses it
        # (handlers.check_caught) at the user's line. Else it is a run-time check,
        # as outside a `try`.
        try:
            with regions.staged("if", where):
                raiser(*held)
        except Exception as error:  # noqa: BLE001 - the user's, shown unformatted
            if _under_an_except_of(type(error)):
                error.args = tuple(a.template if isinstance(a, DeferredFormat) else a
                                   for a in error.args)
                raise
    text = _message(raiser, held, effects) if mode == "checkify" else ""
    _stage_check(pred, mode, where, text, _raise_on_host(raiser), extra=held, ordered=True)


def _message(raiser, held, effects):
    """The message a checkify check carries: ``'E: msg'`` from the exception the
    raising branch builds while tracing (its formatting of traced values deferred),
    or the ``raise`` statement's text when that would take more than building it."""
    code = raiser.__code__
    last = max((line for _, _, line in code.co_lines() if line is not None),
               default=code.co_firstlineno)
    source = linecache.getline(code.co_filename, last).strip()
    fallback = f"check failed: {source}" if source else "check failed"
    if effects:
        return fallback
    try:
        raiser(*held)
    except Exception as error:  # noqa: BLE001 - what the branch raises is the message
        args = error.args
        if len(args) == 1 and isinstance(args[0], DeferredFormat):
            return DeferredFormat("{}: {}", ((type(error).__name__, args[0]), {}),
                                  percent=False)
        text = f"{type(error).__name__}: {error}" if args else type(error).__name__
        return fallback if "Traced<" in text else text
    return fallback


def _raise_on_host(raiser):
    """The host side of a staged raise check: the raising branch run on the concrete
    values; the user's exception kept for ``to_graph`` and announced to JAX."""
    def make(fmt, flat):
        def check(pred, *arrays):
            if np.all(np.asarray(pred)):
                return
            _, held = flat.rebuild(arrays)
            try:
                raiser(*(_as_python(value) for value in held))
            except Exception as error:  # noqa: BLE001 - the user's exception, any type
                where = fmt.format()
                error.add_note(f"(a staged check, failed when the compiled program ran:{where})")
                with _RAISED_LOCK:
                    _RAISED.append(error)
                raise
        return check
    return make


def _as_python(value):
    """A scalar the compiled program held, as the Python number the original held
    (``KeyError(n)`` shows ``3``, not ``Array(3, dtype=int32)``; a float32 becomes
    the Python float of its shortest decimal, so ``f"{x}"`` shows ``0.1``)."""
    if not isinstance(value, jax.Array | np.ndarray) or np.ndim(value) != 0:
        return value
    scalar = np.asarray(value)[()]
    if np.issubdtype(scalar.dtype, np.bool_):
        return bool(scalar)
    if np.issubdtype(scalar.dtype, np.integer):
        return int(scalar)
    if np.issubdtype(scalar.dtype, np.floating):
        return float(str(scalar)) if scalar.dtype.itemsize < 8 else float(scalar)
    return value


def _under_an_except() -> bool:
    """Whether converted code that is being traced (a frame holding tracers) called
    this from inside a ``try`` whose handlers may catch an exception (a ``with``
    alone does not count): by the lines the transpiler recorded (``try_lines``)."""
    return any(try_lines.under_a_handler(frame)
               for frame in _traced_converted_frames(sys._getframe(2)))


def _under_an_except_of(error_type) -> bool:
    """``_under_an_except``, where one of the handlers may catch ``error_type``
    (``try_lines.under_a_handler_of``)."""
    return any(try_lines.under_a_handler_of(frame, error_type)
               for frame in _traced_converted_frames(sys._getframe(2)))


def _under_a_discarding_finally() -> bool:
    """Whether converted code that is being traced called this from inside a ``try``
    whose ``finally`` leaves it with a jump, discarding the exception in flight
    (``converters/try_statements.py`` keeps that exception with
    ``ag__.current_exception()`` in a handler around the body): Python's error here
    would be discarded, a run-time check's error cannot be."""
    return any(try_lines.under_a_discarding_finally(frame)
               for frame in _traced_converted_frames(sys._getframe(1)))


def _under_a_suppressing_with() -> bool:
    """Whether converted code being traced called this inside a ``with`` whose
    context manager may suppress an exception (``handlers.may_suppress``)."""
    return handlers.suppressing_around(
        {id(frame) for frame in _traced_converted_frames(sys._getframe(1))})


def _traced_converted_frames(frame):
    """The frames from ``frame`` outwards that run converted code and hold traced
    values (those being traced now)."""
    while frame is not None:
        code = frame.f_code
        if (any(name.startswith("ag__") for name in code.co_freevars)
                and any(is_tracer(v) or (isinstance(v, tuple | list | dict)
                                         and has_tracer(v))
                        for v in frame.f_locals.values())):
            yield frame
        frame = frame.f_back


def check_value(ok, error_type, message: str) -> None:
    """A run-time check, for an operation on traced values that Python would refuse
    with ``error_type(message)`` (``math.sqrt(-1)``: ``ValueError('math domain
    error')``): raised from the compiled call where ``ok`` (a traced bool array) is
    False anywhere, under the same switches as a traced ``assert``."""
    if paths.is_replaying():
        return
    where = caller_location()
    if _under_an_except_of(error_type):
        raise ConversionError(
            f"this operation raises {error_type.__name__} ({message}) in Python for some "
            "values of its traced argument, and it is inside a `try` whose `except` may "
            f"catch {error_type.__name__}: traced, the error is a check of the compiled "
            "program, which no `except` sees, so the `except` would not run where "
            "Python's does. Compute the fallback from the value instead "
            "(jnp.where(x > 0, jnp.log(x), -jnp.inf)), or move the call out of the "
            "`try`.", where.filename, where.lineno)
    mode = _check_mode(where, f"check of {error_type.__name__}")
    if mode is None:
        return
    pred = jnp.all(ok)

    def raiser():
        raise error_type(message)

    text = f"{error_type.__name__}: {message}"
    _stage_check(pred, mode, where, text, _raise_on_host(raiser), ordered=True)
