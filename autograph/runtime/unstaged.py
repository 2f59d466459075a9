"""Expressions that autograph leaves to Python, refused at the user's line where
an operand is traced (``converters/unstaged_expressions.py`` puts these calls in).

Python decides them with a concrete value, which a traced one only has when the
compiled program runs: JAX's own error there (``TracerBoolConversionError``, a
``TypeError`` from a tracer's ``__format__``) would say what JAX could not do, not
what to write instead.
"""

from __future__ import annotations

from autograph.errors import ConversionError
from autograph.runtime.tracing import caller_location, has_tracer, is_tracer


def comprehension_test(condition):
    """The ``if`` of a list, set or dict comprehension (or of a generator
    expression): ``condition`` itself, for Python to take the truth of, or a
    ``ConversionError`` at the user's line where it is traced."""
    if is_tracer(condition):
        where = caller_location()
        raise ConversionError(
            "the `if` of this comprehension tests a traced value, and a comprehension "
            "runs as Python: which items it keeps would be decided while tracing, before "
            "the value exists, and a traced value cannot decide how many items there "
            "are. sum(), len(), any() and all() of a comprehension whose item only "
            "computes (builtins, math, NumPy or jax functions) are staged; otherwise, for "
            "a sum, count or any of the kept items write a `for` loop with an `if` "
            "(autograph stages it); to keep items, keep them all and select with "
            "jnp.where or a mask (`jnp.where(xs > 0, xs, 0)`).",
            where.filename, where.lineno)
    return condition


def formattable(value):
    """A field of an f-string (``f"{x}"``, ``f"{x:.3f}"``), or an operand of
    ``"...".format(x)`` or ``"..." % x``, used as a value (not printed): ``value``
    itself, or a ``ConversionError`` at the user's line where it holds a traced value,
    since the text would be made while tracing, before the value exists (the
    tracer's text, ``JitTracer(~float32[])``, or a ``TypeError``)."""
    if has_tracer(value):
        where = caller_location()
        raise ConversionError(
            "this f-string (or `.format`, or `%`) formats a traced value, and its text "
            "would be made while tracing, when the value does not exist yet (only inside "
            "print(...) and assert or raise messages does autograph format at run time). "
            "Print it (`print(f\"...\")` or jax.debug.print(\"{x:.3f}\", x=x)), or "
            "format it outside the compiled function, from its result.",
            where.filename, where.lineno)
    return value
