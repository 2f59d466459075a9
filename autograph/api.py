"""The public API: ``convert``, ``to_graph``, ``to_code``, ``do_not_convert`` and directives."""

from __future__ import annotations

import functools
import inspect
import types

import jax

from autograph.context import ConversionOptions
from autograph.errors import ConversionError, at_boundary
from autograph.runtime import lists as _lists
from autograph.runtime.exceptions import reraise_failed_assert, staged_assert_count
from autograph.runtime.tracing import has_tracer
from autograph.transpiler import Transpiler

_TRANSPILER = Transpiler()
_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_ORIGINAL = "__autograph_original__"
_OPTIONS = "__autograph_options__"


def convert(func=None, *, recursive: bool = True):
    """Convert ``func``'s Python control flow so that it stages under JAX tracing.

    Use as ``@convert`` or ``@convert(recursive=False)``. The converted function
    keeps ``func``'s name, docstring and signature. Called with Python values it
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
    """
    options = ConversionOptions(recursive=recursive)
    if func is None:
        return functools.partial(convert, recursive=recursive)
    original = _original(func)
    if getattr(original, _DO_NOT_CONVERT, False):
        return func
    if inspect.ismethod(func):
        return types.MethodType(convert(func.__func__, recursive=recursive), func.__self__)
    if not isinstance(original, types.FunctionType):
        raise ConversionError(
            f"autograph.convert takes a Python function; got {type(func).__name__} "
            f"{func!r:.80}. Builtins and C functions need no conversion: call them "
            "from a converted function.")
    converted = []

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if not converted or converted[1] != _TRANSPILER.store_source:
            converted[:] = [_TRANSPILER.convert(original, options), _TRANSPILER.store_source]
        try:
            return converted[0](*args, **kwargs)
        except Exception as error:  # (free when nothing is raised, unlike a `with`)
            at_boundary(error, _TRANSPILER.is_converted_code)
            raise  # autograph: the error of the converted code below, unchanged in type

    setattr(wrapper, _ORIGINAL, original)
    setattr(wrapper, _OPTIONS, options)
    return wrapper


def to_graph(func, **jit_kwargs):
    """``jax.jit`` over ``convert(func)``: the converted function, compiled.

    Keyword arguments go to ``jax.jit`` (``static_argnums``, ``donate_argnums``...).
    A traced ``assert`` that fails while the compiled function runs stops it and
    raises ``AssertionError`` (``StagedAssertionError``) with its message and the
    user's ``file:line`` from the call; a function with traced asserts therefore
    waits for its result, one without returns as soon as it is dispatched.
    """
    converted = convert(func)
    compiled = jax.jit(converted, **jit_kwargs)
    has_asserts = []   # set once a trace stages an assert: then wait for the result

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

    run.lower = compiled.lower
    run.trace = compiled.trace
    return run


def to_code(func) -> str:
    """The Python source that ``convert(func)`` runs, as a readable string."""
    original = _original(func)
    if inspect.ismethod(original):
        original = original.__func__
    if not isinstance(original, types.FunctionType):
        raise ConversionError(f"to_code takes a Python function; got {func!r:.80}")
    options = getattr(func, _OPTIONS, ConversionOptions())
    return _TRANSPILER.program(original, options).source


def set_debug(*, store_source: bool) -> None:
    """Debugging aid: with ``store_source=True``, functions converted from now on run
    their generated code compiled from its source text, which is kept in memory in
    ``linecache`` under a name like ``<autograph-generated f at file.py:12>``, so
    tracebacks and ``pdb`` show and step through the generated code (nothing is
    written to disk). ``store_source=False`` (the default) goes back to code that
    carries the user's own file and lines."""
    _TRANSPILER.store_source = bool(store_source)


def do_not_convert(func):
    """Mark ``func`` to be run as it is, never converted (at any call depth)."""
    target = _original(func)
    setattr(getattr(target, "__func__", target), _DO_NOT_CONVERT, True)
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


def set_loop_options(*, maximum_iterations=None, checkpoint=False):
    """Directive, the first statement of a loop body: options for the staged loop.

    ``maximum_iterations=N`` (a Python int) bounds a staged ``while`` loop (or a
    ``for`` over a range with a traced bound) to N iterations and makes it
    reverse-differentiable: ``jax.grad`` goes through it. A loop that would run
    longer stops after N. The bound is not a cost: evaluated (or under ``jvp``,
    ``jacfwd``, ``vmap``) the loop is a ``lax.while_loop`` that stops at its
    condition or at N; in reverse mode the backward pass replays the iterations
    taken as nested scans that skip whole blocks past the stopping point, in
    memory that grows like ``N ** 0.25``, not ``N`` (``runtime/bounded_loops.py``).
    So set it generously. Without it, reverse-mode differentiation of such a loop
    raises a ``ConversionError`` naming the loop (forward mode works either way).
    Loops with a static trip count (``for`` over a Python ``range`` or an array)
    are always reverse-differentiable and ignore the bound.

    ``checkpoint=True`` wraps the loop body in ``jax.checkpoint``: reverse mode then
    keeps only the loop variables of each iteration (of each block, for a bounded
    loop) and recomputes the body's intermediates in the backward pass (less
    memory, about one more forward pass of compute). It changes nothing when the
    loop is not differentiated.

        while err > tol:
            autograph.set_loop_options(maximum_iterations=100, checkpoint=True)
            x, err = newton_step(x)

    Run as plain Python, it does nothing: the loop runs as the original would.
    """
    del maximum_iterations, checkpoint


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
