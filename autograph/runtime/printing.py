"""``print``: Python's print, or ``jax.debug.callback`` for traced arguments.

``print(x, y, sep=', ', end='')`` becomes ``ag__.print_(x, y, sep=', ', end='')``.
With no traced argument it *is* Python's ``print`` (same text, same file, same
errors). With traced arguments the text is written when the compiled program
runs, laid out as Python's ``print`` would lay it out (``sep``, ``end``,
``file``, ``flush`` honoured; each value as the ``jax.Array`` it is when the
program runs), in program order (an ordered effect, like ``jax.debug.print(...,
ordered=True)``). Under ``vmap`` each example prints its own line.

Inside a staged computation (``jit``, a staged loop or branch), a ``print`` of
Python values only is staged too, so that every ``print`` appears when and as
often as the program runs, in program order (the original under ``jax.jit``
would print those once, while tracing, before any traced value).

Formatting. An f-string, ``'...'.format(...)`` or ``'...' % ...`` that is an
argument of ``print`` (or an ``assert`` message) becomes ``ag__.format_(template,
*values)`` / ``ag__.percent_format(template, values)``. With Python values these
are the formatted ``str``, exactly. With traced values they are a
``DeferredFormat``: the template and the values, formatted by the callback when
the values are concrete, so ``f"{loss:.3f}"`` prints what Python prints for the
value. The template is tried on placeholder values of the same shape and dtype
while tracing, so a format spec that cannot apply (``{x:d}`` of a float) raises
at the user's line, as Python would.
"""

from __future__ import annotations

import builtins
import operator
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util

from autograph.errors import ConversionError
from autograph.runtime import (
    deferred_writes,
    effects,
    handlers,
    paths,
    python_ints,
    regions,
    write_counts,
)
from autograph.runtime.located_output import located
from autograph.runtime.trace_context import under_jit
from autograph.runtime.tracing import caller_location, has_tracer, is_tracer, user_frame


def print_(*args, **kwargs):
    """``print(*args, **kwargs)``; traced arguments are printed when the program runs."""
    traced = has_tracer((args, kwargs))
    if not traced and not _staging():
        return builtins.print(*args, **kwargs)
    sep, end, file, flush = _options(**kwargs)

    where = caller_location()
    args = _typed(args)
    if file is None and handlers.entered_while_tracing("stdout"):
        file = sys.stdout   # the stream a `with redirect_stdout(...)` traced now set
    deferred_writes.note(file, where)
    numbers = [_python_numbers(arg) for arg in args]
    # NumPy's print options a `with np.printoptions(...)` traced now set
    options = np.get_printoptions() if handlers.entered_while_tracing("printoptions") \
        else None

    def show(*shown):
        target = sys.stdout if file is None else file
        _check_open(target, "print", where)
        shown = [arg if marks is None else tree_util.tree_map(_as_number, arg, marks)
                 for arg, marks in zip(shown, numbers, strict=True)]
        if options is None:
            builtins.print(*shown, sep=sep, end=end, file=target, flush=flush)
            return
        with np.printoptions(**options):
            builtins.print(*shown, sep=sep, end=end, file=target, flush=flush)

    return _when_run(show, args, {}, traced, "print")


def _typed(values) -> tuple:
    """``values``, each traced scalar that stands for a Python number of a known type
    (``python_ints.python_type``: ``m = 0`` that a staged ``if`` stepped), or of one
    of two that a staged ``if``'s traced condition decided (``python_ints.Either``:
    ``k = 3``, ``k = 4.0`` in one branch), as a ``_Typed``: shown as that number.
    A weakly typed traced scalar no region noted (``m * 2`` of such an ``m``) is
    shown as the Python number of its dtype's kind, as a list shows it
    (``_python_numbers``): ``repr`` of it is ``5.0``, not ``Array(5., dtype=float32)``."""
    if not any(is_tracer(v) for v in values):
        return tuple(values)
    out = []
    for value in values:
        kind = python_ints.python_type(value)
        if isinstance(kind, python_ints.Either):
            value = _Typed((value, kind.flag), (kind.if_true, kind.if_false))
        elif isinstance(kind, type):
            value = _Typed((value,), (kind,))
        elif isinstance(kind, python_ints.Mixed) and not kind.array and len(kind.types) > 1:
            where = caller_location()
            raise ConversionError(
                "this prints a Python number whose type (one of "
                f"{', '.join(sorted(t.__name__ for t in kind.types))}) a staged `if` "
                "decided and a staged loop or `if` carried on, so which it is cannot be "
                "told when the program runs. Give the variable "
                "one type on every path (`m = 3.0`, not `m = 3` on one path and "
                "`m = 1.5` on the other).", where.filename, where.lineno)
        elif kind is None and is_tracer(value) and jnp.ndim(value) == 0 \
                and jax.typeof(value).weak_type:
            value = _Typed((value,), (python_ints.KIND_TYPES[np.dtype(value.dtype).kind],))
        out.append(value)
    return tuple(out)


@tree_util.register_pytree_node_class
class _Typed:
    """A traced scalar, and the traced flag that says which of two Python number
    types it stands for (or the one type): its text (``str``, ``repr``,
    ``format``) is that Python number's."""

    __slots__ = ("arrays", "types")

    def __init__(self, arrays, types):
        self.arrays, self.types = tuple(arrays), tuple(types)

    def _number(self):
        value = np.asarray(self.arrays[0])
        kind = self.types[0] if len(self.types) == 1 or bool(np.asarray(self.arrays[1])) \
            else self.types[1]
        return kind(value.item()), value

    def __str__(self):
        number, value = self._number()
        # a float32 shows its shortest digits (1.1, not the float64 1.100000023841858)
        return str(value) if type(number) is float else str(number)

    def __repr__(self):
        number, value = self._number()
        return str(value) if type(number) is float else repr(number)

    def __format__(self, spec):
        return format(self._number()[0], spec)

    # ``'%d' % m``, ``'%.2f' % m``, ``'%x' % m``: as of the Python number
    def __float__(self):
        return float(self._number()[0])

    def __int__(self):
        return int(self._number()[0])

    def __index__(self):
        return operator.index(self._number()[0])

    def tree_flatten(self):
        return self.arrays, self.types

    @classmethod
    def tree_unflatten(cls, types, arrays):
        return cls(arrays, types)


def _python_numbers(arg):
    """For a list, tuple or dict argument of ``print``, which of its leaves are
    traced weakly typed scalars (Python numbers in the original, which a list
    shows as ``1.5``, not ``Array(1.5, dtype=float32)``); None for other arguments
    (``print(x)`` shows a scalar array as its number already)."""
    if not isinstance(arg, (list, tuple, dict)):
        return None
    try:
        return tree_util.tree_map(
            lambda leaf: is_tracer(leaf) and jnp.ndim(leaf) == 0 and jax.typeof(leaf).weak_type,
            arg)
    except Exception:  # noqa: BLE001 - not a pytree JAX can map (dict keys that do not sort)
        return None


def _as_number(leaf, is_number):
    return _Number(leaf) if is_number else leaf


class _Number:
    """A scalar array shown as the Python number it stands for, inside a list."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return str(self.value)

    __str__ = __repr__


def call_when_run(f, /, *args, **kwargs):
    """``f(*args, **kwargs)`` for ``f`` a call that writes text outside the program
    (``log.info(...)``, ``warnings.warn(...)``, ``sys.stdout.write(...)``:
    ``autograph/output_calls.py``): made when the program runs, as ``print`` is, where
    it is staged or its arguments are traced; else now, as Python makes it. Returns
    what Python's call returns (``write_counts.result_of``: a write's count)."""
    traced = has_tracer((args, kwargs))
    if not traced and not _staging():
        return f(*args, **kwargs)

    what = getattr(f, "__qualname__", "this call")
    where = caller_location()
    # (a warning or log record names the user's line, not this module's)
    placed = located(f, user_frame(sys._getframe(1)))
    if f is warnings.warn and handlers.entered_while_tracing("warnings"):
        if not traced and regions.depth() == 0:
            return placed(*args, **kwargs)   # as jax.jit of the original: while tracing
        raise ConversionError(
            "this warnings.warn is inside a `with warnings.catch_warnings()` the traced "
            "function entered, and it is staged (its arguments are traced, or it is in "
            "a staged branch or loop), so the warning would be issued when the compiled "
            "program runs, after the `with` has ended: the `with` would neither record "
            "nor filter it. Issue the warning outside the staged code, or return a flag "
            "and warn after the call.", where.filename, where.lineno)
    deferred_writes.note_call(f, where)
    made_now = []   # the result of a call made while tracing (jax.export of a Python text)

    def call(*shown, **shown_kwargs):   # a deferred f-string argument is its text
        _check_open(getattr(f, "__self__", None), what, where)
        result = placed(*(str(a) if type(a) is DeferredFormat else a for a in shown),
                        **shown_kwargs)
        if tracing:
            made_now.append(result)

    tracing = True
    _when_run(call, args, kwargs, traced, what)
    tracing = False
    if made_now:
        return made_now[0]
    # What Python's call returns (a write's count), where known while tracing.
    return write_counts.result_of(f, args, kwargs, where)


def _check_open(stream, what, where):
    """Raise, naming the user's line, where the stream a staged ``print`` or write
    goes to was closed before the compiled program ran: a file the function opens
    in a ``with`` block is closed when the block ends, while tracing."""
    if getattr(stream, "closed", False) is True:
        raise ValueError(
            f"{where.filename}:{where.lineno}: this {what} is made when the compiled "
            f"program runs, and {stream!r} was closed by then (a file the function "
            "opens in a `with` block is closed when the block ends, while tracing). "
            "Open the file outside the function and pass it in, or return the "
            "values and write them after the call.")


def _when_run(call, args, kwargs, traced, what):
    """``call(*args, **kwargs)`` as an ordered callback, with the traced leaves as
    they are when the program runs (only for the examples whose path reaches it,
    under ``vmap``)."""
    if paths.is_replaying():
        return None
    if effects.current().prints == "drop":
        return None
    if effects.under_export():
        if not traced:   # what jax.jit of the original does: call it while tracing
            return call(*args, **kwargs)
        where = caller_location()
        raise ConversionError(effects.export_error_text(
            what, "convert the function with autograph.convert(f, prints='drop'), or "
            "trace it inside `with autograph.staged_effects(prints='drop'):`"),
            where.filename, where.lineno)
    leaves, treedef = tree_util.tree_flatten((args, kwargs))
    positions = [i for i, leaf in enumerate(leaves) if is_tracer(leaf)]

    def show(values):
        full = list(leaves)
        for i, value in zip(positions, values, strict=True):
            full[i] = value
        shown_args, shown_kwargs = tree_util.tree_unflatten(treedef, full)
        call(*shown_args, **shown_kwargs)

    def show_if_reached(reached, *values):
        if np.all(np.asarray(reached)):   # under vmap: an example whose path is here
            show(values)

    operands = [leaves[i] for i in positions]
    reached = paths.condition()
    if reached is None:
        jax.debug.callback(lambda *values: show(values), *operands, ordered=True)
    else:
        jax.debug.callback(show_if_reached, reached, *operands, ordered=True)
    return None


def format_(template, *args, **kwargs):
    """``template.format(*args, **kwargs)``, deferred to run time for traced values.

    The converter writes an f-string argument of ``print`` as this call with an
    equivalent ``str.format`` template (``f"{x!r:>8}"`` is ``format_('{!r:>8}', x)``)
    and ``'...'.format(...)`` as ``format_('...', ...)``.
    """
    if not isinstance(template, str) or not has_tracer((args, kwargs)):
        return template.format(*args, **kwargs)
    return DeferredFormat(template, (_typed(args), kwargs), percent=False).checked()


def percent_format(template, values):
    """``template % values``, deferred to run time for traced values."""
    if not isinstance(template, str) or not has_tracer(values):
        return template % values
    values = _typed(values) if type(values) is tuple else _typed((values,))[0]
    return DeferredFormat(template, values, percent=True).checked()


@tree_util.register_pytree_node_class
class DeferredFormat:
    """A string formatting whose values include traced arrays, done when they are
    concrete: ``str()`` of it is the formatted text. A pytree whose leaves are the
    values' arrays (so a staged ``print``, ``assert`` or ``checkify.check`` carries
    them to run time); its other values stay in the tree's static part."""

    __slots__ = ("template", "percent", "_treedef", "_static", "_positions", "_arrays",
                 "_numbers")

    def __init__(self, template: str, values, percent: bool):
        leaves, self._treedef = tree_util.tree_flatten(values)
        self.template, self.percent = template, percent
        self._numbers = _numbers_of_fields(values, percent)
        self._positions = tuple(i for i, leaf in enumerate(leaves)
                                if isinstance(leaf, jax.Array))
        arrays = set(self._positions)
        self._static = _Static(tuple(None if i in arrays else leaf
                                     for i, leaf in enumerate(leaves)))
        self._arrays = tuple(leaves[i] for i in self._positions)

    def values(self, arrays=None):
        """The values, with ``arrays`` in place of the array leaves when given."""
        leaves = list(self._static.items)
        for i, array in zip(self._positions, self._arrays if arrays is None else arrays,
                            strict=True):
            leaves[i] = array
        return tree_util.tree_unflatten(self._treedef, leaves)

    def render(self, arrays=None) -> str:
        """The formatted text (of ``arrays`` in place of the array leaves, if given)."""
        values = _shown_fields(self.values(arrays), self._numbers, self.percent)
        if self.percent:
            return self.template % values
        args, kwargs = values
        return self.template.format(*args, **kwargs)

    def checked(self):
        """``self``, after formatting placeholder values of the same shapes and dtypes:
        a spec that cannot apply to the values raises now, at the user's line."""
        try:
            with jax.ensure_compile_time_eval():
                placeholders = [jnp.zeros(jnp.shape(a), jnp.result_type(a))
                                for a in self._arrays]
        except Exception:  # noqa: BLE001 - an exotic dtype (keys): no trial
            return self
        self.render(placeholders)
        return self

    def __str__(self):
        return self.render()

    def __format__(self, spec):
        return format(self.render(), spec)

    def __repr__(self):
        return repr(self.render())

    def tree_flatten(self):
        return self._arrays, (self.template, self.percent, self._treedef, self._static,
                              self._positions, self._numbers)

    @classmethod
    def tree_unflatten(cls, aux, arrays):
        new = object.__new__(cls)
        (new.template, new.percent, new._treedef, new._static, new._positions,
         new._numbers) = aux
        new._arrays = tuple(arrays)
        return new


def _numbers_of_fields(values, percent):
    """``_python_numbers`` of each field of a formatting: of ``values``'s items for
    ``%`` with a tuple, else of ``values``; of each argument for ``str.format``
    (held in a ``_Static``: the tree's static part compares it by identity)."""
    if percent:
        if type(values) is tuple:
            return _Static(tuple(_python_numbers(v) for v in values))
        return _Static(_python_numbers(values))
    args, kwargs = values
    return _Static((tuple(_python_numbers(a) for a in args),
                    {k: _python_numbers(v) for k, v in kwargs.items()}))


def _shown_fields(values, numbers, percent):
    """``values`` with the weakly typed scalars inside list, tuple and dict fields
    shown as numbers (``_Number``)."""
    marks = numbers.items

    def shown(value, mark):
        return value if mark is None else tree_util.tree_map(_as_number, value, mark)

    if percent:
        if type(values) is tuple:
            return tuple(shown(v, m) for v, m in zip(values, marks, strict=True))
        return shown(values, marks)
    args, kwargs = values
    arg_marks, kwarg_marks = marks
    return (tuple(shown(a, m) for a, m in zip(args, arg_marks, strict=True)),
            {k: shown(v, kwarg_marks[k]) for k, v in kwargs.items()})


class _Static:
    """The non-array values of a ``DeferredFormat``, in its tree's static part
    (compared by identity: they may be unhashable)."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


def message_text(message):
    """An assert message as the text Python would put in the ``AssertionError``
    (a ``DeferredFormat`` is formatted now, with whatever its values are)."""
    return message.render() if isinstance(message, DeferredFormat) else message


def _staging() -> bool:
    """Whether the current code is being traced into a staged program (``jit``)."""
    return under_jit()


def _options(sep=None, end=None, file=None, flush=False):
    for name, value in (("sep", sep), ("end", end)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be None or a string, not {type(value).__name__}")
    return sep, end, file, flush
