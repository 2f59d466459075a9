"""The public API: ``convert``, ``to_graph``, ``to_code``, ``do_not_convert`` and directives.

(``set_loop_options`` is defined in ``autograph.directives``, with the loop options.)
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, cast, overload

import jax
from jax._src import core as _jax_core
from jax.extend import source_info_util as _source_info_util

from autograph import disk_cache as _disk_cache
from autograph.call_policy import DO_NOT_CONVERT
from autograph.context import ConversionOptions
from autograph.directives import directive
from autograph.directives import set_loop_options as set_loop_options  # the public name
from autograph.error_notes import at_boundary
from autograph.errors import ConversionError
from autograph.runtime import effects as _effects
from autograph.runtime import lists as _lists
from autograph.runtime import recursion as _recursion
from autograph.runtime.checks import reraise_failed_assert, staged_assert_count
from autograph.runtime.tracing import has_tracer
from autograph.transpiler import PythonTwin, Transpiler

_TRANSPILER = Transpiler(disk_cache=_disk_cache.from_environment())

# The convert wrapper's frame is not the user's (see runtime/tracing.py).
_source_info_util.register_exclusion(os.path.abspath(__file__))
# Called where no JAX trace is active, a converted function runs its Python twin
# (``transpiler.PythonTwin``); AUTOGRAPH_PYTHON_TWINS=0 runs the converted code's
# runtime operators instead (their Python paths: for tests of those paths).
_PYTHON_TWINS = os.environ.get("AUTOGRAPH_PYTHON_TWINS", "1").strip().lower() not in (
    "0", "off", "false", "no")
_trace_state_clean = _jax_core.trace_state_clean
_NEAR_LIMIT = _recursion.NESTED
_LENDING = _recursion.ACTIVE
_ORIGINAL = "__autograph_original__"
_OPTIONS = "__autograph_options__"

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])
PrintMode = Literal["callback", "drop"]
AssertMode = Literal["auto", "callback", "checkify", "drop"]


class _Decorator(Protocol):
    """What ``convert(...)`` without a function returns: a decorator that keeps the
    decorated function's signature."""

    def __call__(self, func: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def convert(func: Callable[P, R], *, recursive: bool = True,
            prints: PrintMode | None = None,
            asserts: AssertMode | None = None) -> Callable[P, R]: ...


@overload
def convert(*, recursive: bool = True, prints: PrintMode | None = None,
            asserts: AssertMode | None = None) -> _Decorator: ...


class _Decorating:
    """The default of ``convert``'s ``func``: ``@convert(...)`` with options only."""

    def __repr__(self):
        return "<a decorator>"


_DECORATING = _Decorating()


def convert(func=_DECORATING, *, recursive=True, prints=None, asserts=None):
    """Convert ``func``'s Python control flow so that it stages under JAX tracing.

    Use as ``@convert`` or ``@convert(recursive=False)``. The converted function
    keeps ``func``'s name, docstring and signature. A method, a
    ``functools.partial`` or a callable object (a Flax or Equinox module, say)
    converts the function it runs, bound to the same object (``convert(model)`` is
    ``convert(type(model).__call__)`` bound to ``model``). Called with Python values it
    behaves exactly like ``func``; called with traced values (inside ``jax.jit``,
    ``grad``, ``vmap``...) its ``if``/``while``/``for`` on traced conditions are
    staged into ``lax.cond``/``while_loop``/``fori_loop``/``scan``. Conversion
    happens on the first call and is cached.

        @autograph.convert
        def huber_loss(a, delta=1.0):
            if abs(a) <= delta:
                loss = a * a / 2
            else:
                loss = delta * (abs(a) - delta / 2)
            return loss

        huber_loss(0.5)                        # 0.125, plain Python
        jax.jit(huber_loss)(jnp.float32(3.0))  # 2.5, via lax.cond

    ``prints`` and ``asserts`` choose how a staged ``print``/``assert`` (one of
    traced values) is emitted while this function (and what it calls) is traced;
    see ``staged_effects``. ``None`` keeps the mode in force (by default a print is
    an ordered host callback; an assert a host check that stops the program, or a
    ``checkify.check`` when traced under ``checkify.checkify``).

        serving = autograph.convert(model, prints="drop", asserts="drop")
        jax.export.export(jax.jit(serving))(spec)
    """
    _effects.validate(prints, asserts)
    if func is _DECORATING:
        return functools.partial(convert, recursive=recursive, prints=prints,
                                 asserts=asserts)
    same = functools.partial(convert, recursive=recursive, prints=prints, asserts=asserts)
    options = ConversionOptions(recursive=recursive)
    original = _original(func)
    if getattr(original, DO_NOT_CONVERT, False) or _is_generator_function(original):
        return func
    if inspect.ismethod(func):
        return types.MethodType(same(func.__func__), func.__self__)
    if isinstance(func, functools.partial):
        return functools.partial(same(func.func), *func.args, **func.keywords)
    if not isinstance(original, types.FunctionType):
        call = _python_call(func)
        if call is None:
            raise _not_a_function("autograph.convert", func)
        return types.MethodType(same(call), func)
    converted: list = []
    modes = None if prints is None and asserts is None else (prints, asserts)
    twin = PythonTwin(options)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if (not converted or converted[1] != _TRANSPILER.store_source
                or converted[3] is not original.__defaults__
                or converted[4] is not original.__kwdefaults__):
            # (Defaults are read when the function is called, as Python reads them:
            # a later `f.__defaults__ = ...` is seen.)
            converted[:] = [_TRANSPILER.convert(original, options), _TRANSPILER.store_source,
                            None, original.__defaults__, original.__kwdefaults__]
        python = _PYTHON_TWINS and not converted[1] and _trace_state_clean()
        run = (converted[2] or _twin(converted, original, twin)) if python else converted[0]
        try:
            isinstance(0, _NEAR_LIMIT)     # raises near the recursion limit
        except RecursionError:
            _recursion.lend(sys._getframe(), _TRANSPILER.is_converted_code)
        try:
            if modes is None:
                out = run(*args, **kwargs)
            else:
                with _effects.using(*modes):
                    out = run(*args, **kwargs)
        except Exception as error:  # (free when nothing is raised, unlike a `with`)
            replacement = at_boundary(error, _TRANSPILER.is_converted_code)
            tb = error.__traceback__
            if tb is not None and tb.tb_frame is sys._getframe():
                error.__traceback__ = tb.tb_next   # the traceback the original would have
            if replacement is not None:   # (still of the type the original raises)
                raise replacement.with_traceback(error.__traceback__) from None
            raise  # autograph: the error of the converted code below, unchanged in type
        finally:
            if _LENDING[0]:            # frames lent to the recursion limit: repay them
                _recursion.repay(sys._getframe())
        if not python:
            _lists.check_returned(out, original)
        return out

    setattr(wrapper, _ORIGINAL, original)
    setattr(wrapper, _OPTIONS, options)
    _recursion.ENTRY_CODES.add(wrapper.__code__)
    return wrapper


def _is_generator_function(fn) -> bool:
    """Whether ``fn`` is a generator function: it runs as it is, as converted code
    runs a generator it calls (a staged computation cannot suspend; iterating it in
    Python is what the original does, and a traced condition inside it fails as it
    would there). (An ``async def`` is refused, as before: JAX traces no coroutine.)"""
    code = getattr(fn, "__code__", None)
    return code is not None and bool(code.co_flags & inspect.CO_GENERATOR)


def _twin(converted: list, original, twin_options):
    """The Python twin of ``original`` (``transpiler.PythonTwin``), kept in the
    wrapper's ``converted`` list."""
    converted[2] = _TRANSPILER.convert(original, twin_options)
    return converted[2]


@contextlib.contextmanager
def staged_effects(*, prints: PrintMode | None = None,
                   asserts: AssertMode | None = None) -> Iterator[None]:
    """While the block runs, how a staged ``print`` or ``assert`` is emitted in the
    code traced there (``None`` keeps the mode in force):

    - ``prints="callback"`` (default): an ordered ``jax.debug.callback`` that prints
      Python's exact text when the program runs; ``"drop"``: left out of the
      program (a ``print`` of Python values outside ``jit`` still prints).
    - ``asserts="auto"`` (default): a host check that stops the program and raises,
      or a ``checkify.check`` when the function is traced under
      ``jax.experimental.checkify.checkify``; ``"callback"``: always the host check;
      ``"checkify"``: always a ``checkify.check`` (wrap the function with
      ``checkify.checkify``: a plain ``jit`` of it refuses an unfunctionalized
      check); ``"drop"``: traced asserts are not checked (as ``python -O`` drops
      every assert; an assert of Python values is still checked).

    The modes apply while tracing: a function that ``jax.jit`` has already traced
    for these argument types keeps what it was traced with (make a new ``jax.jit``).

        with autograph.staged_effects(prints="drop", asserts="checkify"):
            exported = jax.export.export(jax.jit(checkify.checkify(step)))(spec)
    """
    with _effects.using(prints, asserts):
        yield


class GraphFunction(Protocol, Generic[P, R]):
    """What ``to_graph`` returns: callable like the function it compiles, with JAX's
    ahead-of-time ``lower``/``trace`` (whose compiled form raises a failed traced
    ``assert`` as ``AssertionError`` too)."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def lower(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Any: ...


def to_graph(func: Callable[P, R], **jit_kwargs: Any) -> GraphFunction[P, R]:
    """``jax.jit`` over ``convert(func)``: the converted function, compiled.

    Keyword arguments go to ``jax.jit`` (``static_argnums``, ``donate_argnums``...).
    A traced ``assert`` that fails while the compiled function runs stops it and
    raises ``AssertionError`` (``StagedAssertionError``) with its message and the
    user's ``file:line`` from the call; a function with traced asserts therefore
    waits for its result, one without returns as soon as it is dispatched. The
    same holds for JAX's ahead-of-time path: ``to_graph(f).lower(x).compile()(x)``.
    ``func`` may be ``convert(f, ...)`` already (its options are kept).
    """
    if func is None or not callable(func):
        raise TypeError(f"autograph.to_graph takes the function to compile; got {func!r:.80}")
    converted = func if hasattr(func, _ORIGINAL) else convert(func)
    compiled = jax.jit(converted, **jit_kwargs)
    has_asserts: list = []   # set once a trace stages an assert: then wait for the result

    @functools.wraps(converted)
    def run(*args, **kwargs):
        before = staged_assert_count()
        try:
            out = compiled(*args, **kwargs)
            if has_asserts or staged_assert_count() != before:
                has_asserts[:] = [True]
                if not has_tracer(out):
                    jax.block_until_ready(out)
        except jax.errors.JaxRuntimeError as error:
            reraise_failed_assert(error)
            raise
        return out

    def staged(method):
        def stage(*args, **kwargs):
            before = staged_assert_count()
            result = method(*args, **kwargs)
            if staged_assert_count() != before:
                has_asserts[:] = [True]
            return _AssertingStage(result, has_asserts)
        return stage

    run.lower = staged(compiled.lower)  # type: ignore[attr-defined]
    run.trace = staged(compiled.trace)  # type: ignore[attr-defined]
    return cast(GraphFunction[P, R], run)


class _AssertingStage:
    """A JAX ahead-of-time stage (``Traced``, ``Lowered``, ``Compiled``) of a
    ``to_graph`` function: its later stages are wrapped too, and calling the
    compiled form raises a failed traced assert as ``AssertionError``, as calling
    the ``to_graph`` function does. Everything else is the stage's own."""

    def __init__(self, stage, has_asserts: list):
        self._stage = stage
        self._has_asserts = has_asserts

    def __getattr__(self, name):
        return getattr(self._stage, name)

    def __repr__(self):
        return repr(self._stage)

    def lower(self, *args, **kwargs):
        return _AssertingStage(self._stage.lower(*args, **kwargs), self._has_asserts)

    def compile(self, *args, **kwargs):
        return _AssertingStage(self._stage.compile(*args, **kwargs), self._has_asserts)

    def __call__(self, *args, **kwargs):
        try:
            out = self._stage(*args, **kwargs)
            if self._has_asserts:
                jax.block_until_ready(out)
        except jax.errors.JaxRuntimeError as error:
            reraise_failed_assert(error)
            raise
        return out


def to_code(func) -> str:
    """The Python source that ``convert(func)`` runs, as a readable string."""
    original = _original(func)
    if inspect.ismethod(original):
        original = _original(original.__func__)
    if isinstance(original, functools.partial):
        original = _original(original.func)
    if not isinstance(original, types.FunctionType):
        call = _python_call(original)
        if call is None:
            raise _not_a_function("autograph.to_code", func)
        original = call
    options = getattr(func, _OPTIONS, ConversionOptions())
    return _TRANSPILER.source(original, options)


def set_debug(*, store_source: bool) -> None:
    """Debugging aid: with ``store_source=True``, functions converted from now on run
    their generated code compiled from its source text, which is kept in memory in
    ``linecache`` under a name like ``<autograph-generated f at file.py:12>``, so
    tracebacks and ``pdb`` show and step through the generated code (nothing is
    written to disk). ``store_source=False`` (the default) goes back to code that
    carries the user's own file and lines."""
    _TRANSPILER.store_source = bool(store_source)


def set_disk_cache(directory: str | os.PathLike | None) -> None:
    """Keep converted code on disk in ``directory`` from now on, so that a restarted
    process converting a function it has seen reads it back instead of converting
    it again; ``None`` turns the disk cache off. By default it is on, in
    ``$AUTOGRAPH_CACHE_DIR`` (else ``~/.cache/autograph``), unless the environment
    variable ``AUTOGRAPH_DISK_CACHE=0`` turns it off (see ``autograph.disk_cache``).

        autograph.set_disk_cache("/scratch/autograph-cache")
    """
    _TRANSPILER.disk_cache = (None if directory is None
                              else _disk_cache.DiskCache(os.fspath(directory)))


def do_not_convert(func: F) -> F:
    """Mark ``func`` to be run as it is, never converted (at any call depth).

    ``func`` is a function, a method, a class or a callable object. Builtins and
    other functions without Python source are never converted: they are returned
    as they are."""
    if func is None or not callable(func):
        raise TypeError("autograph.do_not_convert takes a function (or a class or a "
                        f"callable object) to leave unconverted; got {func!r:.80}")
    target = _original(func)
    target = getattr(target, "__func__", target)
    if isinstance(target, (types.BuiltinFunctionType, types.WrapperDescriptorType,
                           types.MethodDescriptorType, types.MethodWrapperType)):
        return func          # no Python source: never converted anyway
    try:
        setattr(target, DO_NOT_CONVERT, True)
    except (AttributeError, TypeError):  # a frozen dataclass (an Equinox module)...
        raise TypeError(
            f"autograph.do_not_convert cannot mark this {type(target).__name__} object "
            "(it takes no new attributes, and JAX transformations rebuild such objects "
            f"anyway); mark its class: autograph.do_not_convert({type(target).__name__})"
        ) from None
    return func


def do_not_convert_modules(*modules: str) -> None:
    """Never convert functions of ``modules`` (dotted prefixes: ``"mylib"`` covers
    ``mylib.sub``) when converted code calls them; they run as they are.

    jax, numpy, scipy, the standard library and installed packages are never
    converted already.
    """
    _TRANSPILER.policy.never_convert(*modules)


def convert_modules(*modules: str) -> None:
    """Convert the functions of ``modules`` that converted code calls, even where they
    are installed packages (which are otherwise called as they are)."""
    _TRANSPILER.policy.always_convert(*modules)


@directive
def set_element_type(lst, dtype, shape=()):
    """Directive: declare that the list ``lst`` holds arrays of ``dtype`` and ``shape``.

    Needed only where a staged loop cannot learn it from the first append: an
    empty list that a staged loop reads before appending, or whose appended
    values should be cast (``set_element_type(z, jnp.float32)`` before appending
    ints). Write it as a statement before the loop; in converted code it makes the
    list's buffer that dtype and shape. Run as plain Python (no JAX trace active)
    it returns ``lst`` unchanged; under a trace, a Python list that remembers the
    declaration.
    """
    return _lists.set_element_type(lst, dtype, shape)


def stack(lst):
    """The elements of the list ``lst`` stacked into one array along a new first axis.

    For a Python list this is ``jnp.stack(lst)``. For a list grown in a staged loop
    (see ``set_element_type``) it is the list's whole preallocated buffer: for a
    ``for`` loop appending once per iteration, exactly the stacked elements; for a
    ``while`` loop bounded by ``set_loop_options(maximum_iterations=N)`` (or
    appends under a staged ``if``) its capacity, with the entries from
    ``len(lst)`` on filled with zeros (the padding).
    """
    return _lists.stack(lst)


def _original(func):
    return getattr(func, _ORIGINAL, func)


def _python_call(obj):
    """The Python function that calling the object ``obj`` runs (its class's
    ``__call__``), or None (a class, a builtin, a compiled function)."""
    if isinstance(obj, type):
        return None
    call = getattr(type(obj), "__call__", None)  # noqa: B004 - the Python function
    return call if isinstance(call, types.FunctionType) else None


def _not_a_function(api: str, func) -> Exception:
    """The error for ``api`` called with something that has no Python function to
    convert: ``None`` or a non-callable (a ``TypeError``), or a builtin, a class or a
    compiled function (a ``ConversionError``)."""
    if func is None or not callable(func):
        return TypeError(
            f"{api} takes the function to convert; got {func!r:.80}. Decorate the "
            "function (@autograph.convert, or @autograph.convert(recursive=False, ...) "
            "with options), or pass it: autograph.convert(f).")
    hint = ("Builtins and C functions need no conversion: call them from a converted "
            "function.")
    if isinstance(func, type):
        hint = ("Convert the class's methods (decorate them), or convert an instance "
                "to convert its __call__.")
    elif hasattr(func, "__wrapped__"):
        hint = (f"It wraps {func.__wrapped__!r:.60}: convert that first, then wrap it "
                "(jax.jit(autograph.convert(f)), not autograph.convert(jax.jit(f))).")
    return ConversionError(
        f"{api} takes a Python function (or a method, or an object with a Python "
        f"__call__); got {type(func).__name__} {func!r:.80}. {hint}")
