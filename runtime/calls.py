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
by the transpiler and with the options that converted the caller. ``CallPolicy``
says which modules count as library code; the user extends it through
``autograph.do_not_convert_modules`` / ``autograph.convert_modules``.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
import threading
import types
import weakref

from autograph.errors import ConversionError
from autograph.higher_order import HIGHER_ORDER_FUNCTIONS

DO_NOT_CONVERT = "__autograph_do_not_convert__"

# Packages whose functions are never converted, wherever they are installed.
DEFAULT_LIBRARIES = (
    "autograph", "jax", "jaxlib", "numpy", "scipy", "gast", "ml_dtypes", "opt_einsum",
    "flax", "equinox", "optax", "chex", "haiku", "torch", "tensorflow", "pytest",
    "_pytest", "IPython", "ipykernel",
)


class AsIs:
    """The decision "call it as it is" (a library function, a builtin, converted code)."""

    def __repr__(self):
        return "AS_IS"


AS_IS = AsIs()


class CallPolicy:
    """Which functions are library code, called as they are, never converted.

    Library code is: functions of the packages in ``never`` (jax, numpy, scipy,
    autograph... by default), functions whose file lies in the standard library or
    in an installed package (site-packages), and frozen modules. Packages in
    ``always`` are the user's code even when installed. Both take dotted module
    prefixes: ``"mylib"`` covers ``mylib`` and ``mylib.sub``.
    """

    def __init__(self, never=DEFAULT_LIBRARIES, always=()):
        self._never = set(never)
        self._always = set(always)
        self._lock = threading.Lock()
        self._listeners = []
        self._library_dirs = _library_dirs()

    def never_convert(self, *modules: str) -> None:
        """Treat the functions of ``modules`` (and their submodules) as library code."""
        with self._lock:
            self._never.update(modules)
            self._always.difference_update(modules)
        self._changed()

    def always_convert(self, *modules: str) -> None:
        """Convert the functions of ``modules`` even if they are installed packages."""
        with self._lock:
            self._always.update(modules)
            self._never.difference_update(modules)
        self._changed()

    def on_change(self, callback) -> None:
        """Call ``callback()`` when the lists change (the transpiler drops its decisions)."""
        self._listeners.append(callback)

    def _changed(self):
        for callback in self._listeners:
            callback()

    def is_library_module(self, module_name: str | None, filename: str | None) -> bool:
        """Whether code of module ``module_name`` defined in ``filename`` is library code."""
        if module_name:
            if _matches(module_name, self._always):
                return False
            if _matches(module_name, self._never):
                return True
        if not filename:
            return True          # builtin or extension modules: nothing to convert
        if filename.startswith("<frozen "):
            return True
        return filename.startswith(self._library_dirs)

    def is_library_function(self, fn: types.FunctionType) -> bool:
        """Whether the Python function ``fn`` is library code."""
        # The module whose globals the code runs in, not ``__module__``, which
        # ``functools.wraps`` copies from the wrapped function.
        return self.is_library_module(fn.__globals__.get("__name__"), fn.__code__.co_filename)

    def is_library_value(self, value) -> bool:
        """Whether a module-level name bound to ``value`` is a library module, function
        or class: calls through it need no ``converted_call`` (``jnp.sin(x)``)."""
        if isinstance(value, types.ModuleType):
            return self.is_library_module(value.__name__, getattr(value, "__file__", None))
        if isinstance(value, types.FunctionType):
            return self.is_library_function(value)
        if isinstance(value, (types.BuiltinFunctionType, type)):
            module = getattr(value, "__module__", None)
            if not module:
                return False
            mod = sys.modules.get(module)
            return self.is_library_module(module, getattr(mod, "__file__", None))
        return False


def _matches(module_name: str, prefixes) -> bool:
    if module_name in prefixes:
        return True
    parts = module_name.split(".")
    return any(".".join(parts[:i]) in prefixes for i in range(1, len(parts)))


@functools.cache
def _library_dirs() -> tuple:
    """Where the standard library and installed packages live (fixed per process)."""
    paths = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            paths.add(path)
    try:
        paths.update(site.getsitepackages())
    except AttributeError:       # some virtualenv builds lack it
        pass
    user_site = getattr(site, "USER_SITE", None)
    if user_site:
        paths.add(user_site)
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths) + tuple(
        os.path.join(p, "") for p in paths)


def is_marked_do_not_convert(f) -> bool:
    """Whether ``f`` or a function it wraps (``__wrapped__``) is marked ``do_not_convert``."""
    seen = 0
    while f is not None and seen < 100:
        try:
            if getattr(f, DO_NOT_CONVERT, False):
                return True
            f = getattr(f, "__wrapped__", None)
        except Exception:        # exotic objects whose attribute access fails
            return False
        seen += 1
    return False


@functools.cache
def _higher_order_ids() -> frozenset:
    """``id`` of each of JAX's higher-order functions (module attributes that live as
    long as the process)."""
    import importlib

    ids = set()
    for module_name, names in HIGHER_ORDER_FUNCTIONS.items():
        module = importlib.import_module(module_name)
        ids.update(id(getattr(module, name)) for name in names if hasattr(module, name))
    return frozenset(ids)


def make_converted_call(transpiler, options):
    """The ``converted_call`` operator of code converted by ``transpiler`` with ``options``.

    ``transpiler`` provides ``callee_entries(options)`` (a dict from ``id(code)`` to
    ``(weakref to code, Program or AS_IS)``, read here without a lock),
    ``callee(fn, options)`` (the slow path that fills it), ``callable_kind`` and
    ``instantiate(program, fn)``.
    """
    entries = transpiler.callee_entries(options)
    type_entries = transpiler.callable_type_entries()
    higher_order = _higher_order_ids()
    converted_arguments = weakref.WeakKeyDictionary()   # user function -> converted
    instantiate = transpiler.instantiate
    function_type = types.FunctionType
    method_type = types.MethodType

    def resolve(f):
        """What to call in place of ``f``: its converted form, or ``f`` itself."""
        if type(f) is function_type:
            if f.__dict__ and is_marked_do_not_convert(f):
                return f
            entry = transpiler.callee(f, options)
            return f if entry is AS_IS else instantiate(entry, f)
        if type(f) is method_type:
            target = resolve(f.__func__)
            return f if target is f.__func__ else method_type(target, f.__self__)
        if isinstance(f, functools.partial):
            target = resolve(f.func)
            return f if target is f.func else functools.partial(target, *f.args,
                                                                **f.keywords)
        if isinstance(f, staticmethod):
            return resolve(f.__func__)
        if is_marked_do_not_convert(f):
            return f
        call = transpiler.callable_kind(type(f))
        if call is AS_IS:
            return f
        target = resolve(call)
        return f if target is call else method_type(target, f)

    def convert_argument(value):
        """A function argument of a higher-order JAX function, converted; the same
        converted object each time, so ``jax.jit(f)`` keeps hitting its cache."""
        if type(value) is function_type:
            converted = converted_arguments.get(value)
            if converted is None:
                converted = resolve(value)
                if converted is not value:
                    converted_arguments[value] = converted
            return converted
        if isinstance(value, (method_type, functools.partial)):
            return resolve(value)
        return value

    def call_higher_order(f, /, *args, **kwargs):
        return f(*[convert_argument(a) for a in args],
                 **{k: convert_argument(v) for k, v in kwargs.items()})

    def converted_call(f, /):
        """What converted code calls in place of ``f``: ``f`` converted if it is the
        user's code, else ``f`` itself (a JAX higher-order function converts its
        function arguments). The call itself, ``ag__.converted_call(f)(*args)``,
        runs in the caller's frame: no frame of ours stands between the user's."""
        t = type(f)
        if t is function_type:
            entry = entries.get(id(f.__code__))
            if entry is not None and entry[0]() is f.__code__:
                program = entry[1]
                if program is AS_IS:
                    if id(f) in higher_order:
                        return functools.partial(call_higher_order, f)
                    return f
                if not f.__dict__ or not is_marked_do_not_convert(f):
                    return instantiate(program, f)
                return f
        elif t is method_type:
            func = f.__func__
            if type(func) is function_type:
                entry = entries.get(id(func.__code__))
                if entry is not None and entry[0]() is func.__code__:
                    program = entry[1]
                    if program is AS_IS:
                        return f
                    if not func.__dict__ or not is_marked_do_not_convert(func):
                        return method_type(instantiate(program, func), f.__self__)
                    return f
        else:
            entry = type_entries.get(id(t))
            if entry is not None and entry[1] is AS_IS and entry[0]() is t:
                return f
        try:
            target = resolve(f)
        except ConversionError as e:
            if e.filename is not None:
                raise
            caller = sys._getframe(1)
            raise ConversionError(
                f"{e.raw_message} (called from converted code here)",
                caller.f_code.co_filename, caller.f_lineno) from None
        if target is f and id(f) in higher_order:
            return functools.partial(call_higher_order, f)
        return target

    converted_call.__qualname__ = "converted_call"
    return converted_call
