"""``converted_call``: the call operator of generated code.

The calls converter turns ``helper(x, k=1)`` into ``ag__.converted_call(helper)(x, k=1)``
wherever the callee could be the user's own code. At call time this operator
decides what to call: the user's Python functions (plain, nested, closures, lambdas, methods,
static and class methods, ``functools.partial``, objects with ``__call__``, wrappers
made with ``functools.wraps``) run converted; builtins, compiled functions, library
code (jax, numpy, scipy, the standard library, installed packages) and anything
marked ``do_not_convert`` run as they are. As plain Python:

    def converted_call(f, /):
        return convert(f) if is_users_code(f) else f

The call itself happens in the caller's frame, so the stack holds the user's frames
only, as the original's does (``traceback.extract_stack()``, ``sys._getframe(1)``,
``warnings.warn(stacklevel=2)`` see the user's caller).

Conversion is cached per code object; a cached callee costs two dictionary
lookups and the binding of the converted code to the callee's globals and closure.

The operator is made per ``Transpiler`` and per conversion options
(``make_converted_call``), so the callees of a converted function are converted
by the transpiler and with the options that converted the caller. Which callees
are library code the transpiler decides at conversion time, by its ``CallPolicy``
(``autograph/call_policy.py``).
"""

from __future__ import annotations

import builtins
import functools
import importlib
import sys
import types
import weakref
from collections.abc import Callable
from typing import NamedTuple

from autograph.call_policy import AS_IS, is_marked_do_not_convert
from autograph.errors import ConversionError
from autograph.higher_order import HIGHER_ORDER_FUNCTIONS
from autograph.mutating_methods import CHANGING_METHODS
from autograph.mutating_methods import changing_functions as changing_functions_by_id
from autograph.output_calls import function_ids as output_function_ids
from autograph.output_calls import writes_output
from autograph.runtime import deferred_writes, recursion, side_effects, user_managers
from autograph.runtime.printing import call_when_run, print_
from autograph.runtime.trace_context import trace_active


@functools.cache
def _higher_order_ids() -> frozenset:
    """``id`` of each of JAX's higher-order functions (module attributes that live as
    long as the process)."""
    ids = set()
    for module_name, names in HIGHER_ORDER_FUNCTIONS.items():
        module = importlib.import_module(module_name)
        ids.update(id(getattr(module, name)) for name in names if hasattr(module, name))
    return frozenset(ids)


_MAX_TWINS = 4096
# Attributes of the functions ``autograph.convert`` makes (``api.py``).
_ORIGINAL = "__autograph_original__"
_OPTIONS = "__autograph_options__"


def make_converted_call(transpiler, options, argument_options=None, twin_options=None):
    """The ``converted_call`` operator of code converted by ``transpiler`` with ``options``.

    ``argument_options``: what the function arguments of JAX's higher-order
    functions are converted with (default ``options``): a Python twin's calls
    (``transpiler.PythonTwin``) run callees as twins, but a function handed to
    ``jax.jit`` or ``lax.scan`` will be traced, so it is converted fully.
    ``twin_options``: for a twin's operator, ``PythonTwin`` (options -> its options).

    ``transpiler`` provides ``known_callees(options)`` and ``known_callable_kinds()``
    (lock-free lookups of the decisions already taken: the fast path),
    ``callee(fn, options)`` and ``callable_kind(cls)`` (which take them) and
    ``instantiate(program, fn)``.
    """
    if argument_options is None:
        argument_options = options
    decisions = _Decisions.of(transpiler, options, argument_options)
    if argument_options is options:
        operator = _traced_operator(transpiler, decisions)
    else:
        operator = _twin_operator(transpiler, decisions, twin_options)
    operator.__qualname__ = "converted_call"
    recursion.ENTRY_CODES.add(operator.__code__)
    return operator


class _Decisions(NamedTuple):
    """The parts both operators share, as closures over one transpiler and options:
    ``known_callee(id(code))`` and ``known_kind(id(type))``, the decisions already
    taken; ``known_method(f)``, a bound method's target where its function's is
    taken; ``slow_path(f)``, the target found by taking the decision;
    ``call_higher_order(f, *args, **kwargs)``, a JAX higher-order function called
    with its function arguments converted; ``higher_order``, those functions' ids."""

    known_callee: Callable
    known_kind: Callable
    known_method: Callable
    slow_path: Callable
    call_higher_order: Callable
    higher_order: frozenset

    @classmethod
    def of(cls, transpiler, options, argument_options) -> _Decisions:
        known_callee = transpiler.known_callees(options)
        higher_order = _higher_order_ids()
        resolve = _resolver(transpiler)
        call_higher_order = _higher_order_caller(resolve, argument_options)
        return cls(known_callee, transpiler.known_callable_kinds(),
                   _method_finder(transpiler, known_callee),
                   _slow_path(resolve, options, higher_order, call_higher_order),
                   call_higher_order, higher_order)


def _resolver(transpiler):
    """``resolve(f, options)``: what to call in place of ``f`` (its converted form, or
    ``f`` itself), taking the transpiler's decision."""
    instantiate = transpiler.instantiate
    function_type, method_type = types.FunctionType, types.MethodType

    def resolve(f, options):
        if type(f) is function_type:
            if f.__dict__ and is_marked_do_not_convert(f):
                return f
            entry = transpiler.callee(f, options)
            return f if entry is AS_IS else instantiate(entry, f)
        if type(f) is method_type:
            target = resolve(f.__func__, options)
            return f if target is f.__func__ else method_type(target, f.__self__)
        if isinstance(f, functools.partial):
            target = resolve(f.func, options)
            return f if target is f.func else functools.partial(target, *f.args,
                                                                **f.keywords)
        if isinstance(f, staticmethod):
            return resolve(f.__func__, options)
        if is_marked_do_not_convert(f):
            return f
        call = transpiler.callable_kind(type(f))
        if call is AS_IS:
            return f
        target = resolve(call, options)
        return f if target is call else method_type(target, f)

    return resolve


def _higher_order_caller(resolve, argument_options):
    """``call_higher_order(f, *args, **kwargs)``: ``f`` (``jax.jit``, ``lax.scan``...)
    called with its function arguments converted with ``argument_options``."""
    # user function -> converted; made on first use (most operators never meet a
    # higher-order call, and one is made for each fresh transpiler and options)
    converted_arguments = None
    function_type, method_type = types.FunctionType, types.MethodType

    def convert_argument(value):
        """A function argument of a higher-order JAX function, converted; the same
        converted object each time, so ``jax.jit(f)`` keeps hitting its cache."""
        nonlocal converted_arguments
        if type(value) is function_type:
            if converted_arguments is None:
                converted_arguments = weakref.WeakKeyDictionary()
            converted = converted_arguments.get(value)
            if converted is None:
                converted = resolve(value, argument_options)
                if converted is not value:
                    converted_arguments[value] = converted
            return converted
        if isinstance(value, (method_type, functools.partial)):
            return resolve(value, argument_options)
        return value

    def call_higher_order(f, /, *args, **kwargs):
        return f(*[convert_argument(a) for a in args],
                 **{k: convert_argument(v) for k, v in kwargs.items()})

    return call_higher_order


def _method_finder(transpiler, known_callee):
    """``known_method(f)``: what to call for the bound method ``f`` if its function's
    decision is taken, else None."""
    instantiate = transpiler.instantiate
    function_type, method_type = types.FunctionType, types.MethodType

    def known_method(f):
        func = f.__func__
        if type(func) is function_type:
            program = known_callee(id(func.__code__))
            if program is not None:
                if program is AS_IS:
                    return f
                if not func.__dict__ or not is_marked_do_not_convert(func):
                    return method_type(instantiate(program, func), f.__self__)
                return f
        return None

    return known_method


def _slow_path(resolve, options, higher_order, call_higher_order):
    """``slow_path(f)``: the target of ``f`` by taking the decision; a
    ``ConversionError`` without a place gets the converted caller's line."""

    def slow_path(f):
        try:
            target = resolve(f, options)
        except ConversionError as e:
            if e.filename is not None:
                raise
            caller = sys._getframe(2)
            raise ConversionError(
                f"{e.raw_message} (called from converted code here)",
                caller.f_code.co_filename, caller.f_lineno) from None
        if target is f and id(f) in higher_order:
            return functools.partial(call_higher_order, f)
        return target

    return slow_path


def _refusing_replaced_target(f, target, /, *args, **kwargs):
    """``f(target, ...)``, for ``f`` a function that changes ``target`` in place:
    refused (at the user's line) where ``target`` is a list or dict a staged region
    made doubtful (``side_effects.refuse_if_replaced``)."""
    side_effects.refuse_if_replaced(target)
    return f(target, *args, **kwargs)


def _traced_operator(transpiler, decisions: _Decisions):
    """The operator of converted code (not a Python twin's)."""
    known_callee, known_kind, known_method, slow_path, call_higher_order, higher_order = \
        decisions
    instantiate = transpiler.instantiate
    is_converted_code = transpiler.is_converted_code
    near_limit_probe = recursion.NESTED
    function_type, method_type = types.FunctionType, types.MethodType
    builtin_type = types.BuiltinFunctionType
    replaced, changing_methods = side_effects.REPLACED, CHANGING_METHODS
    changing_functions = changing_functions_by_id()
    output_functions = output_function_ids()
    pending_writes, stream_reads = deferred_writes.PENDING, deferred_writes.READS
    builtin_print, partial_type = builtins.print, functools.partial
    logger_changes = deferred_writes.LOGGER_CHANGES
    exit_stack_methods = user_managers.exit_stack_methods()

    def converted_call(f, /):
        """What converted code calls in place of ``f``: ``f`` converted if it is the
        user's code, else ``f`` itself (a JAX higher-order function converts its
        function arguments). The call itself, ``ag__.converted_call(f)(*args)``,
        runs in the caller's frame: no frame of ours stands between the user's."""
        try:
            isinstance(0, near_limit_probe)    # raises near the recursion limit
        except RecursionError:  # lend from the caller's frame: ours is gone by the call
            recursion.lend(sys._getframe(1), is_converted_code)
        if replaced and id(f) in changing_functions:   # heapq.heappush(b, v) on an old list
            return functools.partial(_refusing_replaced_target, f)
        t = type(f)
        if (t is not function_type or id(f) in output_functions) and writes_output(f):
            return functools.partial(call_when_run, f)   # log.info(...): when the program runs
        if t is function_type:
            program = known_callee(id(f.__code__))
            if program is not None:
                if program is AS_IS:
                    if id(f) in higher_order:
                        return functools.partial(call_higher_order, f)
                    return f
                if not f.__dict__ or not is_marked_do_not_convert(f):
                    return instantiate(program, f)
                return f
        elif t is method_type:
            if pending_writes and f.__name__ in logger_changes:
                deferred_writes.refuse_logger_change(f)   # log.setLevel after log.info
            # stack.callback(print, ...) under a trace (in Python its callbacks run as
            # they are, and the stack holds the very objects registered)
            if id(f.__func__) in exit_stack_methods and trace_active():
                return user_managers.registering(f, converted_call)
            target = known_method(f)
            if target is not None:
                return target
        else:
            if f is builtin_print:   # `out = print; out(x)`, `builtins.print(x)`
                return print_
            if t is partial_type and f.func is builtin_print:   # partial(print, sep="")
                return functools.partial(print_, *f.args, **f.keywords)
            if replaced and t is builtin_type and f.__name__ in changing_methods:
                side_effects.refuse_if_replaced(f.__self__)   # b.extend(...) on an old list
            if pending_writes and t is builtin_type and f.__name__ in stream_reads:
                deferred_writes.refuse_read(f)   # buf.getvalue() of a staged print's stream
            if known_kind(id(t)) is AS_IS:
                return f
        return slow_path(f)

    return converted_call


def _twin_operator(transpiler, decisions: _Decisions, twin_options):
    """The operator of a Python twin (no trace active: see the module docstring of
    ``transpiler.PythonTwin``): the same decisions, without the recursion probe (a
    twin adds no frame to the user's, so the user's limit holds as it stands) and
    with builtins and the twins of plain functions found first.

    A twin's calls are often in tight recursion: the twin function made for a
    callee without closure cells is kept, by ``id``, while that callee's code and
    defaults stay the same (it holds no cell that could hold the callee itself)."""
    known_callee, known_kind, known_method, slow_path, call_higher_order, higher_order = \
        decisions
    instantiate = transpiler.instantiate
    function_type, method_type = types.FunctionType, types.MethodType
    builtin_type = types.BuiltinFunctionType
    twins = {}
    weak_ref = weakref.ref

    def remember_twin(f, twin):
        if len(twins) >= _MAX_TWINS:
            twins.clear()
        twins[id(f)] = (weak_ref(f), f.__code__, f.__defaults__, f.__kwdefaults__, twin)

    def convert_wrapper_twin(f):
        """A function ``autograph.convert`` made is called as the twin of the function
        it converts: its wrapper would choose that twin anyway (no trace is active),
        and the user's recursion through it keeps one frame a level, as the
        original's does."""
        hit = twins.get(id(f))
        original = f.__dict__[_ORIGINAL]
        if (hit is None or hit[0]() is not f or hit[2] is not original.__defaults__
                or hit[3] is not original.__kwdefaults__):
            hit = twins[id(f)] = (weak_ref(f), transpiler.convert(
                original, twin_options(f.__dict__[_OPTIONS])),
                original.__defaults__, original.__kwdefaults__)
        return hit[1]

    def python_call(f, /):
        """``converted_call`` of a Python twin."""
        try:
            t = type(f)
            if t is builtin_type:
                if id(f) in higher_order:
                    return functools.partial(call_higher_order, f)
                return f
            if t is function_type:
                if not f.__dict__:
                    hit = twins.get(id(f))
                    if (hit is not None and hit[0]() is f and hit[1] is f.__code__
                            and hit[2] is f.__defaults__ and hit[3] is f.__kwdefaults__):
                        return hit[4]
                elif f.__code__ in recursion.ENTRY_CODES and _ORIGINAL in f.__dict__:
                    return convert_wrapper_twin(f)
                program = known_callee(id(f.__code__))
                if program is not None:
                    if program is AS_IS:
                        if id(f) in higher_order:
                            return functools.partial(call_higher_order, f)
                        return f
                    if not f.__dict__:
                        target = instantiate(program, f)
                        # (A twin calling itself holds ``f``: kept here, it would
                        # keep ``f`` alive.)
                        if f.__closure__ is None and program.self_call_options is None:
                            remember_twin(f, target)
                        return target
                    if not is_marked_do_not_convert(f):
                        return instantiate(program, f)
                    return f
            elif t is method_type:
                target = known_method(f)
                if target is not None:
                    return target
            elif known_kind(id(t)) is AS_IS:
                return f
            return slow_path(f)
        except RecursionError as error:
            # The user's recursion ran out of room in one of this function's calls
            # of C code, whose message says " while calling a Python object"; the
            # original meets the limit entering its own frame. Nothing here may call
            # C code now (no room is left for it): the message is only replaced.
            error.args = recursion.PYTHON_MESSAGE_ARGS
            raise

    return python_call
