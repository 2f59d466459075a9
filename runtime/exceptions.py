"""``assert``: Python's assert, or a run-time check for a traced condition.

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

import linecache
import logging

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, tree_util
from jax.experimental import checkify

from autograph.errors import ConversionError
from autograph.runtime import effects, paths
from autograph.runtime.printing import DeferredFormat, message_text
from autograph.runtime.tracing import caller_location, has_tracer, is_tracer


class StagedAssertionError(AssertionError):
    """A traced ``assert`` that failed when the compiled program ran."""


def _not_a_failed_assert(record) -> bool:
    """Logging filter: JAX logs every exception a debug callback raises, with its
    traceback, before passing it on; a failed traced assert is reported to the caller
    (as ``StagedAssertionError`` or in JAX's run-time error), so its log entry only
    repeats the message with runtime frames, on stderr."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, StagedAssertionError)


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
    traced assert; return otherwise."""
    text = str(error)
    if _MARKER in text:
        raise StagedAssertionError(text.rsplit(_MARKER, 1)[1].strip()) from None


_MARKER = f"{StagedAssertionError.__name__}: "


def assert_stmt(cond, message=None):
    """``assert cond, message()``: Python's assert, or a run-time check if ``cond``
    is traced."""
    if not is_tracer(cond):
        if not cond:
            if message is None:
                raise AssertionError
            raise AssertionError(message_text(message()))
        return
    if paths.is_replaying():
        return
    where = caller_location()
    if jnp.shape(cond) != ():
        raise ConversionError(
            f"the condition of this assert is a traced array of shape "
            f"{tuple(jnp.shape(cond))}, and its truth value is ambiguous. Reduce it to "
            "one value, e.g. `assert jnp.all(c)`.", where.filename, where.lineno)
    mode = effects.current().asserts
    if mode == "drop":
        return
    functional = mode == "checkify" or (mode == "auto" and effects.under_checkify())
    if not functional and effects.under_export():
        raise ConversionError(effects.export_error_text(
            "assert", "convert the function with autograph.convert(f, asserts='drop') or "
            "asserts='checkify' (and wrap it with checkify.checkify), or trace it inside "
            "`with autograph.staged_effects(asserts=...)`; `python -O` removes asserts, as "
            "Python does"), where.filename, where.lineno)
    pred = cond if cond.dtype == bool else cond != 0
    reached = paths.condition()
    if reached is not None:   # under vmap, only the examples whose path is here
        pred = jnp.logical_or(pred, jnp.logical_not(reached))
    text = message() if message is not None else "assertion failed"
    source = linecache.getline(where.filename, where.lineno).strip()
    suffix = _escape(f" [{where}: {source}]" if source else f" [{where}]")
    if has_tracer(text):
        if not isinstance(text, DeferredFormat):
            text = DeferredFormat("{}", ((text,), {}), percent=False)
        fmt, values = "{}" + suffix, (text,)
    else:
        fmt, values = _escape(str(text)) + suffix, ()
    _STAGED_ASSERTS[0] += 1
    if functional:
        checkify.check(pred, fmt, *values)
    else:
        leaves, treedef = tree_util.tree_flatten(values)
        check = _check_on_host(fmt, treedef)
        lax.cond(pred, lambda: None,
                 lambda: jax.debug.callback(check, pred, *leaves))


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _check_on_host(fmt, treedef):
    def check(pred, *leaves):
        if not np.all(np.asarray(pred)):
            values = tree_util.tree_unflatten(treedef, leaves)
            raise StagedAssertionError(fmt.format(*values))
    return check
