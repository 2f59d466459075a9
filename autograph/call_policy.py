"""Which code is the user's, to be converted, and which is library code, run as it is.

The transpiler asks this when converted code calls a function (``converted_call``)
and when it converts a function (``jnp.sin(x)`` needs no ``converted_call``);
tracebacks ask it which frames are the user's. Library code is:

- functions of the packages in ``DEFAULT_LIBRARIES`` (jax, numpy, autograph...) and
  of the modules the user adds with ``autograph.do_not_convert_modules``;
- code in a *library file* (``is_library_file``): the standard library, installed
  packages, frozen modules, and the folders of the ``DEFAULT_LIBRARIES`` packages;
- a function marked with ``autograph.do_not_convert`` (``DO_NOT_CONVERT``), or one
  wrapping such a function.

Modules the user names with ``autograph.convert_modules`` are the user's code even
where they are installed packages. Imports nothing of the project.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import site
import sys
import sysconfig
import threading
import types

# The attribute ``autograph.do_not_convert`` sets on a function.
DO_NOT_CONVERT = "__autograph_do_not_convert__"

# Packages whose functions are never converted, wherever they are installed.
DEFAULT_LIBRARIES = (
    "autograph", "jax", "jaxlib", "numpy", "scipy", "gast", "ml_dtypes", "opt_einsum",
    "flax", "equinox", "optax", "chex", "haiku", "torch", "tensorflow", "pytest",
    "_pytest", "IPython", "ipykernel",
)

# autograph's own subpackages: in a development checkout they live beside, not
# inside, the ``autograph`` folder.
_OWN_SUBPACKAGES = ("autograph.converters", "autograph.runtime")


class AsIs:
    """The decision "call it as it is" (a library function, a builtin, converted code)."""

    def __repr__(self):
        return "AS_IS"


AS_IS = AsIs()


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
def library_dirs() -> tuple:
    """The folders (each ending in a separator) whose code is library code: the
    standard library, installed packages (site-packages, the user site) and the
    folders of the ``DEFAULT_LIBRARIES`` packages, autograph's own included.
    Computed once per process, at its first use (after autograph is imported)."""
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
    for package in DEFAULT_LIBRARIES + _OWN_SUBPACKAGES:
        paths.update(_package_folders(package))
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths) + tuple(
        os.path.join(p, "") for p in paths)


def is_library_file(filename: str | None) -> bool:
    """Whether code defined in ``filename`` is library code by where it lives (see
    ``library_dirs``); builtins (no file) and frozen modules are too."""
    if not filename or filename.startswith("<frozen "):
        return True
    return filename.startswith(library_dirs())


def _package_folders(name: str) -> list:
    """The folders of the installed package ``name`` (none if it is not installed);
    the package is not imported."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [os.path.abspath(p) for p in spec.submodule_search_locations]


class CallPolicy:
    """Which functions are library code, called as they are, never converted.

    Library code is: functions of the packages in ``never`` (jax, numpy, scipy,
    autograph... by default) and functions defined in a library file
    (``is_library_file``). Packages in ``always`` are the user's code even when
    installed. Both take dotted module prefixes: ``"mylib"`` covers ``mylib`` and
    ``mylib.sub``.
    """

    def __init__(self, never=DEFAULT_LIBRARIES, always=()):
        self._never = set(never)
        self._always = set(always)
        self._lock = threading.Lock()
        self._listeners = []

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
        return is_library_file(filename)

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
