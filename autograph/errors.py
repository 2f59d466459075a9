"""Errors raised by autograph, each naming the user's own file and line."""

from __future__ import annotations

import linecache


class ConversionError(Exception):
    """A construct that autograph cannot convert or stage.

    The message names the user's file and line, shows the source line with a
    caret under the construct, says what went wrong and what to do instead.
    """

    def __init__(self, message: str, filename: str | None = None,
                 lineno: int | None = None, col_offset: int | None = None):
        self.raw_message = message
        self.filename = filename
        self.lineno = lineno
        self.col_offset = col_offset
        super().__init__(format_located(message, filename, lineno, col_offset))


class StagingTypeError(ConversionError, TypeError):
    """A staged variable whose type, shape or structure differs between the
    branches of an ``if`` or across a loop iteration.

    It is a ``TypeError`` too, so code that catches JAX's own type errors still
    catches it.
    """


def format_located(message: str, filename: str | None, lineno: int | None,
                   col_offset: int | None = None) -> str:
    """Prefix ``message`` with ``file:line`` and show that source line with a caret
    (under ``col_offset``, or under the statement's start when it is not known)."""
    if filename is None or lineno is None:
        return message
    text = f"{filename}:{lineno}: {message}"
    line = linecache.getline(filename, lineno)
    if line.strip():
        stripped = line.rstrip("\n")
        text += f"\n    {stripped.strip()}"
        indent = len(stripped) - len(stripped.lstrip())
        caret_at = 0 if col_offset is None else max(col_offset - indent, 0)
        text += "\n    " + " " * caret_at + "^"
    return text


# -- errors raised while a converted function runs or traces --------------------------
#
# Generated code is compiled with the user's file and line numbers, so Python's own
# traceback already names the user's lines. At the boundary of a converted function
# (``api.convert``'s wrapper) two things are added to an exception passing through:
# the runtime's own frames are dropped from the traceback (as JAX drops its
# internal frames; ``JAX_TRACEBACK_FILTERING=off`` keeps them), and JAX errors that
# staged control flow makes likely get a note in our words: the user's line, what
# went wrong there and what to change. The exception object and its type stay.

_NOTED = "__autograph_noted__"
_NOTE_PREFIX = "autograph: "


def _package_dirs() -> tuple:
    import os

    import autograph
    import autograph.converters
    import autograph.runtime
    return tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (autograph, autograph.runtime, autograph.converters))


def _runtime_dir() -> str:
    import os

    import autograph.runtime
    return os.path.dirname(os.path.abspath(autograph.runtime.__file__)) + os.sep


def _library_dirs() -> tuple:
    """Folders whose frames are never the user's: jax, numpy, the standard library, ours."""
    import os
    import sysconfig

    import jax
    import numpy
    dirs = [os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (jax, numpy)]
    try:
        import jaxlib
        dirs.append(os.path.dirname(os.path.abspath(jaxlib.__file__)) + os.sep)
    except ImportError:  # pragma: no cover
        pass
    dirs.append(os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep)
    return (*dirs, *_package_dirs())


def _filtering_off() -> bool:
    import jax
    return getattr(jax.config, "jax_traceback_filtering", None) == "off"


def filter_runtime_frames(tb):
    """``tb`` without the frames of ``autograph.runtime`` (the operators between the
    user's statement and the user's branch or loop body)."""
    import types

    runtime = _runtime_dir()
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(frames):
        if entry.tb_frame.f_code.co_filename.startswith(runtime):
            continue
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def at_boundary(error: BaseException, is_converted) -> None:
    """What a converted function's wrapper does to an exception passing through it:
    add the explanation (once) and drop the runtime's frames from its traceback.
    ``is_converted(code)`` tells whether a code object is generated code."""
    if not getattr(error, _NOTED, False):
        try:
            setattr(error, _NOTED, True)
        except AttributeError:  # pragma: no cover - exceptions without a __dict__
            return
        note = explain(error, is_converted)
        if note:
            error.add_note(note)
    if error.__traceback__ is not None and not _filtering_off():
        error.with_traceback(filter_runtime_frames(error.__traceback__))



_STAGED_CONSTRUCTS = {"_staged_cond": None, "_staged_while": "while loop",
                      "_staged_range": "for loop", "_staged_scan": "for loop"}
_STAGED_AS = {"if": "lax.cond", "conditional expression": "lax.cond",
              "while loop": "lax.while_loop", "for loop": "a staged loop (fori_loop/scan)"}


def explain(error: BaseException, is_converted) -> str | None:
    """A note for ``error`` in our words, or None when we have nothing to add."""
    import jax

    entries = _entries(error.__traceback__)
    user = _innermost_user(entries)
    if user is None:
        return None
    region = _enclosing_region(entries, user)
    concrete = (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
                jax.errors.TracerArrayConversionError)
    if isinstance(error, concrete):
        return _explain_concrete(error, entries[user], region, is_converted)
    if region is not None and _is_raise(entries[user]) and not _under_python_if(entries, user):
        return _explain_raise(entries[user], region)
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return _explain_leak(entries[user], region)
    return None


def _entries(tb) -> list:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _innermost_user(entries):
    libraries = _library_dirs()
    for i in range(len(entries) - 1, -1, -1):
        filename = entries[i].tb_frame.f_code.co_filename
        if not filename.startswith(libraries) and not filename.startswith("<frozen"):
            return i
    return None


def _enclosing_region(entries, user):
    """``(construct, Location)`` of the innermost staged branch or loop whose tracing
    led to the user's frame ``entries[user]``, or None."""
    runtime = _runtime_dir()
    for entry in reversed(entries[:user]):
        frame = entry.tb_frame
        if not frame.f_code.co_filename.startswith(runtime):
            continue
        if frame.f_code.co_name in _STAGED_CONSTRUCTS:
            local = frame.f_locals
            where = local.get("where")
            construct = local.get("construct") or _STAGED_CONSTRUCTS[frame.f_code.co_name]
            if where is not None and construct:
                return construct, where
    return None


def _under_python_if(entries, user) -> bool:
    """Whether the user's frame is a branch that an ``if`` ran as Python (its
    condition was a Python value): then its ``raise`` ran because it held."""
    runtime = _runtime_dir()
    for entry in reversed(entries[:user]):
        code = entry.tb_frame.f_code
        if code.co_filename.startswith(runtime):
            return code.co_name in ("if_stmt", "if_exp")
    return False


def _position(entry):
    """``(lineno, col, end_col)`` of the instruction that raised in ``entry``'s frame."""
    code = entry.tb_frame.f_code
    positions = list(code.co_positions())
    index = entry.tb_lasti // 2
    if 0 <= index < len(positions):
        lineno, end_lineno, col, end_col = positions[index]
        if lineno is not None:
            return lineno, col, end_col if end_lineno == lineno else None
    return entry.tb_lineno, None, None


def _segment(entry) -> str | None:
    lineno, col, end_col = _position(entry)
    if col is None or end_col is None:
        return None
    line = linecache.getline(entry.tb_frame.f_code.co_filename, lineno)
    return line[col:end_col] or None


def _located(entry) -> str:
    lineno, col, _ = _position(entry)
    filename = entry.tb_frame.f_code.co_filename
    text = format_located("", filename, lineno, col)
    head, _, rest = text.partition("\n")
    name = _function_name(entry)
    return f"{head.rstrip(': ')} (in {name})" + ("\n" + rest if rest else "")


def _function_name(entry) -> str:
    return entry.tb_frame.f_code.co_name


def _is_case_line(entry) -> bool:
    """Whether the instruction that raised is on a ``case`` line of a ``match``."""
    lineno, _, _ = _position(entry)
    line = linecache.getline(entry.tb_frame.f_code.co_filename, lineno)
    return line.lstrip().startswith("case ")


def _is_raise(entry) -> bool:
    import dis
    for instruction in dis.get_instructions(entry.tb_frame.f_code):
        if instruction.offset == entry.tb_lasti:
            return instruction.opname in ("RAISE_VARARGS", "RERAISE")
    return False


def _region_text(region) -> str:
    construct, where = region
    return (f"It runs inside the {construct} at {where}, which autograph staged with "
            f"{_STAGED_AS.get(construct, 'JAX')} because its condition or iterable is "
            f"traced; inside it, the variables the {construct} carries are traced values "
            "too, not Python numbers.")


def _explain_concrete(error, entry, region, is_converted) -> str:
    import ast

    import jax

    segment = _segment(entry) or ""
    try:
        expr = ast.parse(segment.strip(), mode="eval").body if segment else None
    except SyntaxError:
        expr = None
    converted = is_converted(entry.tb_frame.f_code)
    called = (expr.func.id if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
              else None)
    if called in ("int", "float", "complex"):
        what = (f"Python's `{called}()` needs a concrete number, which a traced value only "
                "has when the program runs. Keep the value traced and change its type with "
                f"`.astype(...)` (e.g. `x.astype(jnp.int32)`), or pass it as a static "
                "argument.")
    elif isinstance(error, jax.errors.TracerIntegerConversionError):
        what = ("A traced value is used where Python needs an int (`int()`, `range()`, "
                "an index into a Python list or tuple, a shape). Keep that value a Python "
                "int (compute it from static arguments, e.g. with static_argnums), or use "
                "array indexing (`x[i]` on a jax array) and `jnp` functions.")
    elif isinstance(error, jax.errors.TracerArrayConversionError):
        what = ("A traced value is passed to NumPy (or `np.asarray`/`float()`), which needs "
                "a concrete array. Use the `jax.numpy` function instead.")
    elif isinstance(expr, ast.Compare) and len(expr.ops) > 1:
        what = (f"`{segment.strip()}` is a chained comparison: Python evaluates it as "
                "`a < b and b < c`, and that `and` needs the truth value of a traced array. "
                "Write `(a < b) & (b < c)` or `jnp.logical_and(a < b, b < c)`.")
    elif called in ("bool", "min", "max", "sorted", "any", "all"):
        name = called
        alternative = {"bool": "drop the `bool(...)`: a converted `if`/`while` takes the "
                               "traced condition itself",
                       "min": "use `jnp.minimum`", "max": "use `jnp.maximum`",
                       "sorted": "use `jnp.sort`", "any": "use `jnp.any`",
                       "all": "use `jnp.all`"}[name]
        what = (f"Python's `{name}()` needs the truth value of a traced array, which "
                f"only exists when the program runs; {alternative}.")
    elif (isinstance(error, jax.errors.TracerBoolConversionError) and not converted
          and not linecache.getlines(entry.tb_frame.f_code.co_filename)):
        what = (f"`{_function_name(entry)}` could not be converted by autograph because its "
                "source is unavailable (it was made by exec or eval, typed at a prompt that "
                "keeps no source, or its file can no longer be read), so it runs as it is and "
                "its `if`/`while`/`and`/`or` on a traced value cannot be staged. Define it in "
                "a .py file or a notebook cell, or write that condition with jnp.where / "
                "lax.cond.")
    elif isinstance(error, jax.errors.TracerBoolConversionError) and _is_case_line(entry):
        what = ("A `match` statement compares its subject with each `case` pattern (and "
                "tests its guard) in Python, which needs a concrete value; here it is traced. "
                "autograph stages `if`/`elif`, not `match`: write these cases as an "
                "`if`/`elif` chain on the traced value (staged with lax.cond), or use "
                "lax.switch, or match on a static value.")
    elif isinstance(error, jax.errors.TracerBoolConversionError) and not converted:
        what = (f"`{_function_name(entry)}` is not converted by autograph (it is marked "
                "do_not_convert, is called from a function converted with "
                "recursive=False, or is library code), so its `if`/`while`/`and`/`or` on "
                "a traced value cannot be staged. Convert it with autograph.convert, or "
                "write that condition with jnp.where / lax.cond.")
    elif isinstance(error, jax.errors.TracerBoolConversionError):
        what = ("A traced value is used as a Python bool here, in a construct autograph "
                "does not stage (an explicit bool(), a comprehension's `if`, a "
                "`while` in a lambda, ...). Use jnp.where / jnp.logical_and / lax.cond, or "
                "move the condition into an `if` or `while` statement.")
    else:
        what = ("A traced value is used where JAX needs a concrete one (a shape, a slice "
                "bound, a Python bool or int). Compute that value from static "
                "arguments, or use an operation that takes traced values (jnp.where, "
                "lax.dynamic_slice, a fixed-size mask).")
    text = f"{_NOTE_PREFIX}{_located(entry)}\n{what}"
    if region is not None:
        text += " " + _region_text(region)
    return text


def _explain_raise(entry, region) -> str:
    construct, where = region
    return (f"{_NOTE_PREFIX}{_located(entry)}\nThis `raise` is inside the {construct} at "
            f"{where}, which autograph staged with {_STAGED_AS.get(construct, 'JAX')} "
            "because its condition or iterable is traced. A staged branch or loop body is "
            "traced whatever the condition's value, so the `raise` runs while tracing, "
            "not when the condition holds. To check a traced value at run time, use "
            "`jax.experimental.checkify.check` (or an `assert`, which autograph stages), "
            "or compute a fallback value with jnp.where.")


def _explain_leak(entry, region) -> str:
    text = (f"{_NOTE_PREFIX}{_located(entry)}\nA traced value escaped the staged code "
            "that made it: a `global` or `nonlocal` variable, an attribute, or a list "
            "outside the branch or loop was given a value computed inside it. Return the "
            "value from the function (or carry it as a local variable) instead.")
    if region is not None:
        text += " " + _region_text(region)
    return text
