"""``print``: Python's print, or ``jax.debug.callback`` for traced arguments.

``print(x, y, sep=', ', end='')`` becomes ``ag__.print_(x, y, sep=', ', end='')``.
With no traced argument it *is* Python's ``print`` (same text, same file, same
errors). With traced arguments the text is written when the compiled program
runs, laid out as Python's ``print`` would lay it out (``sep``, ``end``,
``file``, ``flush`` honoured; each value as ``str`` of its NumPy value), in program
order (an ordered effect, like ``jax.debug.print(..., ordered=True)``). Under
``vmap`` each example prints its own line.

Inside a staged computation (``jit``, a staged loop or branch), a ``print`` of
Python values only is staged too, so that every ``print`` appears when and as
often as the program runs, in program order (the original under ``jax.jit``
would print those once, while tracing, before any traced value).
"""

from __future__ import annotations

import builtins
import sys

import jax
import numpy as np
from jax import tree_util
from jax._src import core as jax_core

from autograph.runtime import paths
from autograph.runtime.tracing import has_tracer


def print_(*args, **kwargs):
    """``print(*args, **kwargs)``; traced arguments are printed when the program runs."""
    if not has_tracer((args, kwargs)) and not _staging():
        return builtins.print(*args, **kwargs)
    if paths.is_replaying():
        return None
    sep, end, file, flush = _options(**kwargs)
    leaves, treedef = tree_util.tree_flatten(args)
    traced = [i for i, leaf in enumerate(leaves) if has_tracer(leaf)]

    def emit(reached, *values):
        if not np.all(reached):   # under vmap: an example whose path is not here
            return
        full = list(leaves)
        for i, value in zip(traced, values, strict=True):
            full[i] = np.asarray(value)
        shown = tree_util.tree_unflatten(treedef, full)
        target = sys.stdout if file is None else file
        builtins.print(*shown, sep=sep, end=end, file=target, flush=flush)

    reached = paths.condition()
    jax.debug.callback(emit, True if reached is None else reached,
                       *[leaves[i] for i in traced], ordered=True)
    return None


def _staging() -> bool:
    """Whether the current code is being traced into a staged program (``jit``)."""
    try:
        return jax_core.unsafe_am_i_under_a_jit()
    except AttributeError:  # a JAX without it: Python values print at trace time
        return False


def _options(sep=None, end=None, file=None, flush=False):
    for name, value in (("sep", sep), ("end", end)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be None or a string, not {type(value).__name__}")
    return sep, end, file, flush
