"""Small questions the operators ask about their operands."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import jax
import numpy as np
from jax import tree_util
from jax.extend import source_info_util

Tracer = jax.core.Tracer


def is_tracer(value) -> bool:
    """Whether ``value`` is a JAX tracer: the construct using it must be staged."""
    return isinstance(value, Tracer)


def has_tracer(tree) -> bool:
    """Whether any leaf of the pytree ``tree`` is a JAX tracer."""
    if isinstance(tree, Tracer):
        return True
    return any(isinstance(leaf, Tracer) for leaf in tree_util.tree_leaves(tree))


class FlatTree:
    """A pytree flattened, with the leaves that ``select(leaf)`` picks singled out:
    ``selected`` are those leaves, and ``rebuild(values)`` is the pytree again with
    ``values`` in their place (the others as they were). An abstract trace takes
    the selected leaves as its arguments and rebuilds the rest around them."""

    __slots__ = ("leaves", "treedef", "positions")

    def __init__(self, tree, select):
        self.leaves, self.treedef = tree_util.tree_flatten(tree)
        self.positions = [i for i, leaf in enumerate(self.leaves) if select(leaf)]

    @property
    def selected(self) -> list:
        return [self.leaves[i] for i in self.positions]

    def rebuild(self, values):
        full = list(self.leaves)
        for i, value in zip(self.positions, values, strict=True):
            full[i] = value
        return tree_util.tree_unflatten(self.treedef, full)


@dataclass(frozen=True)
class Location:
    """Where in the user's file a converted statement is."""

    filename: str
    lineno: int

    def __str__(self):
        return f"{self.filename}:{self.lineno}"


_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# JAX places each equation (a jaxpr's source information, the HLO metadata, the
# profiler's names) at the innermost frame outside its own files, and lowering makes
# an MLIR location for every such frame: the runtime's frames are not the user's
# either, so equations the runtime binds name the user's statement, and lowering
# makes fewer locations (0.5-0.7 ms of a first call, benchmarks/first_call.py).
source_info_util.register_exclusion(_RUNTIME_DIR)


def caller_location(depth: int = 2) -> Location:
    """The user's line that called the operator calling this (generated code keeps
    the user's line numbers, so the calling frame is at the user's statement);
    frames of the runtime itself in between are passed over."""
    return frame_location(sys._getframe(depth))


def frame_location(frame) -> Location:
    """The user's line of ``frame``, or of the nearest frame below it that is not the
    runtime's own (an operator such as ``list_append`` calling ``list.append``)."""
    frame = user_frame(frame)
    return Location(frame.f_code.co_filename, frame.f_lineno)


def user_frame(frame):
    """``frame``, or the nearest frame below it that is not the runtime's own."""
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_RUNTIME_DIR):
        frame = frame.f_back
    return frame


def describe(value) -> str:
    """A short type description for messages: ``float32[3]``, ``int32[] (weak)``, ``str``."""
    if isinstance(value, (jax.Array, np.ndarray, np.generic)) or hasattr(value, "aval"):
        aval = jax.typeof(value)
        return _describe_aval(aval)
    if isinstance(value, jax.ShapeDtypeStruct):
        return _describe_aval(value)
    if isinstance(value, (bool, int, float, complex)):
        return f"Python {type(value).__name__}"
    return type(value).__name__


def _describe_aval(aval) -> str:
    dims = ",".join(str(d) for d in aval.shape)
    weak = " (weak)" if getattr(aval, "weak_type", False) else ""
    return f"{np.dtype(aval.dtype).name}[{dims}]{weak}"


def param_names(fn, skip: int = 0) -> tuple:
    """The names of ``fn``'s positional parameters after the first ``skip``: generated
    branch and loop functions take the state variables under their own names (a
    runtime wrapper says them as ``state_names``)."""
    names = getattr(fn, "state_names", None)
    if names is not None:
        return names
    code = fn.__code__
    return code.co_varnames[skip:code.co_argcount]


def types_of(tree):
    """The JAX types (``jax.typeof``: shape, dtype, weak type) of a pytree's leaves, in
    its structure; None where a leaf is no JAX type (a string, a function)."""
    try:
        return tree_util.tree_map(jax.typeof, tree)
    except TypeError:
        return None
