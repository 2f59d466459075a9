"""Directives: calls in the user's code that speak to autograph, not to the program.

Run as plain Python a directive does nothing that changes the result. The
directives converter recognises a call to one by what the called name is bound to
when the function is converted (``set_loop_options``, ``autograph.set_loop_options``,
an alias), never by the name alone: a function of the user's that happens to be
called ``set_loop_options`` is an ordinary call. Each directive carries the mark
``DIRECTIVE`` (its name), which ``directive`` sets.

``set_loop_options`` is defined here: its signature is the one definition of the
loop options, which the converter checks and passes on as keywords of the
runtime's loop operators. Imports nothing of the project.
"""

from __future__ import annotations

import inspect
import operator
import types

DIRECTIVE = "__autograph_directive__"


def directive(fn):
    """Mark ``fn`` as the directive of its name (the converter recognises it by this)."""
    setattr(fn, DIRECTIVE, fn.__name__)
    return fn


def directive_name(value) -> str | None:
    """The name of the directive ``value`` is, or None if it is none. (Directives
    are Python functions; nothing else is asked, so no user code runs.)"""
    if type(value) is not types.FunctionType:
        return None
    name = value.__dict__.get(DIRECTIVE)
    return name if isinstance(name, str) else None


@directive
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

    Anywhere else than as the first statement of a loop body (outside a loop, after
    another statement, inside an ``if`` of the body) a converted function refuses
    it with a ``ConversionError``. Run as plain Python, it does nothing: the loop
    runs as the original would.
    """
    del maximum_iterations, checkpoint


# The loop options, in the order of the signature above.
LOOP_OPTIONS = tuple(inspect.signature(set_loop_options).parameters)


def loop_option_error(name: str, value) -> str | None:
    """Why the Python value ``value`` cannot be the loop option ``name``, or None.
    (``maximum_iterations`` follows the runtime's rule for a value known only
    when the loop runs: an int, ``operator.index`` of it, ``>= 0``.)"""
    if name == "maximum_iterations" and value is not None:
        try:
            bound = operator.index(value)
        except TypeError:
            return (f"set_loop_options(maximum_iterations=...) must be an int, got "
                    f"{type(value).__name__}")
        if bound < 0:
            return f"set_loop_options(maximum_iterations=...) must be >= 0, got {bound}"
    if name == "checkpoint" and not isinstance(value, bool):
        return f"set_loop_options(checkpoint=...) must be True or False, got {value!r}"
    return None
