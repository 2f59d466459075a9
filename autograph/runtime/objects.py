"""Objects a staged region mutates: their new state written back into them, in place.

Python mutates objects in place: ``self.count[...] += 1`` or ``stats[k] += v``
inside a branch changes the object the caller holds. A staged branch or loop
carries the object as a pytree instead, and ``lax`` hands back a new one; so
after the region the new leaves are written back into the *original* object
(``write_back``): attribute set, item set, a Flax NNX ``Variable``'s value set,
the object keeping its identity (a part that cannot change in place, a tuple say,
is replaced in its parent). An object that is not a pytree at all (a plain
Python object with attributes) is carried as the pytree of its array-valued
attributes (``attributes``/``set_attributes``).

Objects that a staged region only reaches through a closure and that hide state
of their own (Flax NNX modules, ``Variable``s, ``Rngs``: a ``BatchNorm`` updating
its statistics, a ``Dropout`` drawing from its random stream) are found by
``stateful_cells``; the region carries them too.
"""

from __future__ import annotations

import functools
import sys
import types

import jax
import numpy as np
from jax import tree_util

from autograph.call_policy import is_library_file
from autograph.runtime.trace_context import ended
from autograph.runtime.tracing import Tracer


class _Replace(Exception):
    """The value at this path cannot be set in place: replace its parent."""


def write_back(original, new):
    """``original`` holding ``new``'s leaves, changed in place where it can be, and
    returned; ``new`` when ``original`` cannot hold them (an array, a number, a
    tuple, or a different structure): then the variable is rebound, as before."""
    if original is new or is_immutable(original):
        return new
    try:
        if tree_util.tree_structure(original) != tree_util.tree_structure(new):
            return new
        leaves = tree_util.tree_flatten_with_path(new)[0]
    except Exception:  # noqa: BLE001 - not comparable as pytrees: rebind
        return new
    try:
        for path, leaf in leaves:
            if _get(original, path) is not leaf:
                _set(original, new, path, leaf)
    except _Replace:
        return new
    return original


def leaves(value) -> list:
    """The pytree leaves of ``value``."""
    return tree_util.tree_leaves(value)


def is_immutable(value) -> bool:
    """Values no assignment can change in place."""
    return isinstance(value, (jax.Array, Tracer, np.generic, bool, int, float, complex, str,
                              bytes, tuple, frozenset, type(None)))


def _get(obj, path):
    for key in path:
        obj = _child(obj, key)
    return obj


def _child(obj, key):
    if isinstance(key, tree_util.DictKey):
        return obj[key.key]
    if isinstance(key, tree_util.SequenceKey):
        return obj[key.idx]
    if isinstance(key, tree_util.GetAttrKey):
        return getattr(obj, key.name)
    raise _Replace


def _set(root, new_root, path, value):
    if not path:
        raise _Replace
    parent, key = _get(root, path[:-1]), path[-1]
    try:
        if isinstance(key, tree_util.DictKey) and isinstance(parent, dict):
            parent[key.key] = value
        elif isinstance(key, tree_util.SequenceKey) and isinstance(parent, list):
            parent[key.idx] = value
        elif isinstance(key, tree_util.GetAttrKey) and not is_immutable(parent):
            setattr(parent, key.name, value)
        else:
            raise _Replace
    except (_Replace, AttributeError, TypeError):
        _set(root, new_root, path[:-1], _get(new_root, path[:-1]))


# -- plain objects ---------------------------------------------------------------------


def is_plain_object(value) -> bool:
    """An object with attributes that JAX takes as one leaf (not a pytree, not an
    array): a staged region carries its array-valued attributes instead."""
    if is_immutable(value) or isinstance(value, (np.ndarray, list, dict, type, _CODE_TYPES)):
        return False
    if not hasattr(value, "__dict__"):
        return False
    try:
        leaves = tree_util.tree_leaves(value)
    except Exception:  # noqa: BLE001 - a pytree whose flattening fails: not carried
        return False
    return len(leaves) == 1 and leaves[0] is value


_CODE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
               types.ModuleType)


def _carriable(value) -> bool:
    try:
        leaves = tree_util.tree_leaves(value)
    except Exception:  # noqa: BLE001 - no pytree JAX can flatten (dict keys that do not sort)
        return False
    return all(isinstance(leaf, (jax.Array, Tracer, np.ndarray, np.generic, bool, int, float,
                                 complex)) and not _escaped(leaf) for leaf in leaves)


def _escaped(leaf) -> bool:
    """A tracer of a trace that has ended: what a ``jit`` that set an attribute of a
    module global left there. Carrying it would fail; left alone, only a read of it
    fails, as under ``jax.jit`` of the original."""
    return isinstance(leaf, Tracer) and ended(leaf)


def attributes(obj) -> dict:
    """The array-valued attributes of a plain object, as a dict (a pytree)."""
    return {name: value for name, value in vars(obj).items() if _carriable(value)}


def set_attributes(obj, values: dict):
    for name, value in values.items():
        setattr(obj, name, value)


# -- objects with state of their own, reached through closures --------------------------


def _stateful_types():
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return ()
    return tuple(t for t in (getattr(nnx, "Pytree", None), getattr(nnx, "Object", None),
                             getattr(nnx, "Variable", None)) if isinstance(t, type))


def stateful_cells(*functions, mutable=False, plain_objects=False):
    """``[(name, cell)]`` of the closure cells of ``functions`` (a block's helper
    functions, whose closures hold every variable the block reads from the
    function around it) holding objects with hidden mutable state (Flax NNX
    modules, variables, random streams), each cell once. With ``mutable``, also
    those holding any object a function the block calls may change in place: a
    dict or list of arrays, a plain object with array attributes; with
    ``plain_objects``, those holding such a plain object (a method the block calls,
    ``counter.bump()``, may set its attributes). The closures of the user's own
    functions those cells hold are searched too, for objects and plain objects (a
    helper ``def add(v): acc.total += v`` that the block calls changes ``acc``)."""
    kinds = _stateful_types()
    if not kinds and not mutable and not plain_objects:
        return []
    found, seen = [], set()
    pending = [(fn, True) for fn in functions
               if getattr(fn, "state_names", None) is None]   # else already carrying
    visited = {id(fn) for fn, _ in pending}
    for fn, direct in pending:   # grows as helpers are found
        code = getattr(fn, "__code__", None)
        if code is None:
            continue
        if plain_objects or mutable:
            _global_objects(fn, found, seen, pending, visited)
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
            if id(cell) in seen:
                continue
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if type(value) is types.FunctionType:
                _follow(value, pending, visited)
                continue
            if (isinstance(value, kinds) or mutable and direct and _mutable_state(value)
                    or (plain_objects or mutable) and _plain_with_arrays(value)):
                seen.add(id(cell))
                found.append((name, cell))
    return found


def _global_objects(fn, found, seen, pending, visited):
    """Add to ``found`` the module globals ``fn``'s code names that hold a plain
    object of the user's with array attributes (``O.n = O.n + 1`` on a module's
    ``O`` changes it as it would a closure's), each as a ``GlobalCell``; the user's functions among
    those globals join ``pending``, to be searched in turn."""
    module = getattr(fn, "__globals__", None)
    if module is None:
        return
    for name in _global_names(fn.__code__):
        value = module.get(name, _ABSENT)
        if type(value) is types.FunctionType:
            _follow(value, pending, visited)
            continue
        key = ("global", id(module), name)
        if key not in seen and _plain_with_arrays(value) and is_users_class(type(value)):
            seen.add(key)
            found.append((name, GlobalCell(module, name)))


def _follow(fn, pending, visited):
    """Queue the user's function ``fn`` (a helper the block may call) to be searched."""
    if (id(fn) not in visited and len(visited) < _MAX_HELPERS
            and not is_library_file(fn.__code__.co_filename)):
        visited.add(id(fn))
        pending.append((fn, False))


def is_users_class(cls) -> bool:
    """Whether ``cls`` is a class of the user's, not a library's (a module's
    ``logging.Logger`` fills its own cache when asked: not carried, not followed);
    a module with no file (a program ``exec``'d) counts as the user's, and so does
    ``types.SimpleNamespace``, which holds only what the user put in it."""
    if cls is types.SimpleNamespace:
        return True
    filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return cls.__module__ != "builtins" if filename is None \
        else not is_library_file(filename)


_ABSENT = object()


@functools.lru_cache(maxsize=4096)
def _global_names(code) -> tuple:
    """The global names ``code`` and the code nested in it may read (its
    ``co_names``, attribute names included: only those bound in the module count)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if type(const) is types.CodeType:
            names.update(_global_names(const))
    return tuple(sorted(names))


class GlobalCell:
    """A module global seen as a closure cell (``cell_contents`` reads, sets and
    deletes the module's binding), so that a staged region carries an object a
    module global holds as it carries one a closure cell holds."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    @property
    def cell_contents(self):
        try:
            return self.module[self.name]
        except KeyError:
            raise ValueError("Cell is empty") from None

    @cell_contents.setter
    def cell_contents(self, value):
        self.module[self.name] = value

    @cell_contents.deleter
    def cell_contents(self):
        try:
            del self.module[self.name]
        except KeyError:
            raise ValueError("Cell is empty") from None


# How many of the user's helper functions ``stateful_cells`` searches per block.
_MAX_HELPERS = 64


def _plain_with_arrays(value) -> bool:
    return is_plain_object(value) and bool(attributes(value))


def _mutable_state(value) -> bool:
    """A container or plain object holding arrays that code may change in place."""
    if isinstance(value, (dict, list)):
        return bool(value) and _carriable(value)
    return _plain_with_arrays(value)
