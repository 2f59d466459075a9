"""What the boundary of a converted function adds to an exception passing through.

Generated code is compiled with the user's file and line numbers, so Python's own
traceback already names the user's lines. At the boundary of a converted function
(``api.convert``'s wrapper) two things are added: the runtime's own frames are
dropped from the traceback (as JAX drops its internal frames;
``JAX_TRACEBACK_FILTERING=off`` keeps them), and JAX errors that staged control
flow makes likely get a note in our words: the user's line, what went wrong there
and what to change. The exception object and its type stay.

Which staged branch or loop the error came out of is recorded on the exception by
the runtime itself (``runtime/regions.py``), as are returns of different types
meeting in a staged ``if`` (``runtime/returns.py``); nothing here depends on the
names of the runtime's functions. This runs once per error, never while tracing:
it reads the user's source lines and the generated code's instructions (to name
the failing instruction and the ``return`` lines), but never parses source
(CPython's parser is not safe while other threads parse).
"""

from __future__ import annotations

import dis
import functools
import inspect
import io
import linecache
import os
import tokenize
import types

import jax

import autograph.runtime as runtime_package
from autograph.call_policy import is_library_file
from autograph.errors import ConversionError, format_located
from autograph.runtime.regions import regions_of
from autograph.runtime.returns import mismatch_of

_NOTED = "__autograph_noted__"
_NOTE_PREFIX = "autograph: "
_STAGED_AS = {"if": "lax.cond", "conditional expression": "lax.cond",
              "while loop": "lax.while_loop", "for loop": "a staged loop (fori_loop/scan)"}


def at_boundary(error: BaseException, is_converted) -> BaseException | None:
    """What a converted function's wrapper does to an exception passing through it:
    add the explanation (once) and drop the runtime's frames from its traceback.
    ``is_converted(code)`` tells whether a code object is generated code. Returns
    the error to raise instead, if any: a ``GeneratorStagingError`` for a traced
    value used as a bool inside a generator function (which runs as Python)."""
    replacement = None
    if not getattr(error, _NOTED, False):
        try:
            setattr(error, _NOTED, True)
        except AttributeError:  # pragma: no cover - exceptions without a __dict__
            return None
        replacement = _generator_refusal(error, is_converted)
        note = explain(error, is_converted) if replacement is None else None
        if note:
            error.add_note(note)
    if error.__traceback__ is not None and not _filtering_off():
        error.with_traceback(filter_runtime_frames(error.__traceback__))
    if replacement is not None:
        setattr(replacement, _NOTED, True)
    return replacement


class GeneratorStagingError(ConversionError, jax.errors.TracerBoolConversionError):
    """A traced value used as a Python bool inside a generator function, which
    autograph runs as Python: a ``ConversionError`` at the generator's line, and
    still the ``TracerBoolConversionError`` that ``jax.jit`` of the original raises."""

    def __init__(self, message, filename, lineno, col_offset=None):
        self.raw_message = message
        self.filename, self.lineno, self.col_offset = filename, lineno, col_offset
        Exception.__init__(self, format_located(message, filename, lineno, col_offset))


def _generator_refusal(error, is_converted) -> GeneratorStagingError | None:
    if not isinstance(error, jax.errors.TracerBoolConversionError) or isinstance(
            error, ConversionError):
        return None
    entries = _entries(error.__traceback__)
    user = _innermost_user(entries)
    if user is None:
        return None
    code = entries[user].tb_frame.f_code
    if not code.co_flags & inspect.CO_GENERATOR or is_converted(code):
        return None
    lineno, col, _ = _position(entries[user])
    consumer = next((e for e in reversed(entries[:user])
                     if not _is_library(e) and e.tb_frame.f_code is not code), None)
    where = "" if consumer is None else (
        f" (it is consumed at {consumer.tb_frame.f_code.co_filename}:{consumer.tb_lineno})")
    return GeneratorStagingError(
        f"`{code.co_name}` is a generator function{where}: autograph runs generators "
        "as Python, unconverted (a staged computation cannot stop part-way to yield), "
        "so this condition on a traced value cannot be staged. Do the work in the "
        "function that consumes it: a loop there (`for x in xs: if x > 0: ...`, staged), "
        "a generator expression reduced by sum/any/all/max/min (`sum(x for x in xs if "
        "x > 0)`), or a mask (`jnp.where(xs > 0, xs, 0)`).",
        code.co_filename, lineno, col)


def filter_runtime_frames(tb):
    """``tb`` without the frames of ``autograph.runtime`` (the operators between the
    user's statement and the user's branch or loop body)."""
    runtime = _runtime_dir()
    out = None
    for entry in reversed(_entries(tb)):
        if entry.tb_frame.f_code.co_filename.startswith(runtime):
            continue
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def explain(error: BaseException, is_converted) -> str | None:
    """A note for ``error`` in our words, or None when we have nothing to add."""
    entries = _entries(error.__traceback__)
    user = _innermost_user(entries)
    if user is None:
        return None
    mismatch = mismatch_of(error)
    if mismatch is not None:
        return _explain_returns(error, mismatch, entries)
    regions = regions_of(error)
    region = next((r for r in regions if r.staged), None)
    under_python_if = bool(regions) and not regions[0].staged
    concrete = (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
                jax.errors.TracerArrayConversionError)
    if isinstance(error, concrete):
        return _explain_concrete(error, entries, user, region, is_converted)
    if region is not None and _is_raise(entries[user]) and not under_python_if:
        return _explain_raise(entries[user], region)
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return _explain_leak(entries[user], region)
    if isinstance(error, TypeError) and "Tracer.__format__" in str(error):
        return _explain_format(entries[user])
    if (region is not None and not under_python_if and _raised_at_user(entries, user)
            and isinstance(error, _VALUE_ERRORS)
            and not isinstance(error, (ConversionError, jax.errors.JAXTypeError))):
        return _explain_value_error(error, entries[user], region)
    return None


# -- where the user's code is ----------------------------------------------------------

@functools.cache
def _runtime_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(runtime_package.__file__)), "")


def _is_library(entry) -> bool:
    return is_library_file(entry.tb_frame.f_code.co_filename)


def _filtering_off() -> bool:
    return getattr(jax.config, "jax_traceback_filtering", None) == "off"


def _entries(tb) -> list:
    out = []
    while tb is not None:
        out.append(tb)
        tb = tb.tb_next
    return out


def _innermost_user(entries):
    for i in range(len(entries) - 1, -1, -1):
        if not _is_library(entries[i]):
            return i
    return None


def _called_library(entries, user):
    """The library function (not JAX's or NumPy's own) that the user's frame called
    on the way to the error, or None."""
    if user + 1 >= len(entries):
        return None
    frame = entries[user + 1].tb_frame
    module = frame.f_globals.get("__name__", "") or ""
    if module.partition(".")[0] in ("jax", "jaxlib", "numpy", "autograph"):
        return None
    return f"{module}.{frame.f_code.co_name}" if module else frame.f_code.co_name


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


def _is_raise(entry) -> bool:
    for instruction in dis.get_instructions(entry.tb_frame.f_code):
        if instruction.offset == entry.tb_lasti:
            return instruction.opname in ("RAISE_VARARGS", "RERAISE")
    return False


_COMPARISONS = {"<", ">", "<=", ">=", "==", "!=", "in", "is"}
_NOT_A_COMPARISON = {"and", "or", "if", "lambda", ",", ":=", "for"}


def _expression_shape(segment: str):
    """``(name, comparisons)`` of an expression's source: the name it calls when it
    is a call of a plain name (``int(x)``), and how many comparison operators it
    chains at its top level (``0 < x < 1``: 2). Read with the tokenizer, not the
    parser."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(segment).readline)
                  if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER,
                                tokenize.STRING)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None, 0
    depth, comparisons, closes_at = 0, 0, None
    for i, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in ("(", "[", "{"):
            depth += 1
        elif token.type == tokenize.OP and token.string in (")", "]", "}"):
            depth -= 1
            if depth == 0 and closes_at is None:
                closes_at = i
        elif depth == 0 and token.string in _NOT_A_COMPARISON:
            return None, 0
        elif depth == 0 and token.string in _COMPARISONS:
            comparisons += 1
    called = None
    if (len(tokens) >= 3 and tokens[0].type == tokenize.NAME and tokens[1].string == "("
            and closes_at == len(tokens) - 1):
        called = tokens[0].string
    return called, comparisons


# -- the notes ---------------------------------------------------------------------------

def _is_case_line(entry) -> bool:
    """Whether the instruction that raised is on a ``case`` line of a ``match``."""
    lineno, _, _ = _position(entry)
    line = linecache.getline(entry.tb_frame.f_code.co_filename, lineno)
    return line.lstrip().startswith("case ")


def _region_text(region) -> str:
    construct, where = region.construct, region.where
    return (f"It runs inside the {construct} at {where}, which autograph staged with "
            f"{_STAGED_AS.get(construct, 'JAX')} because its condition or iterable is "
            f"traced; inside it, the variables the {construct} carries are traced values "
            "too, not Python numbers.")


def _explain_concrete(error, entries, user, region, is_converted) -> str:
    entry = entries[user]
    segment = (_segment(entry) or "").strip()
    called, comparisons = _expression_shape(segment) if segment else (None, 0)
    converted = is_converted(entry.tb_frame.f_code)
    library = _called_library(entries, user)
    if called in ("int", "float", "complex"):
        what = (f"Python's `{called}()` needs a concrete number, which a traced value only "
                "has when the program runs. Keep the value traced and change its type with "
                f"`.astype(...)` (e.g. `x.astype(jnp.int32)`), or pass it as a static "
                "argument.")
    elif library is not None:
        what = (f"`{library}` is library code, which autograph does not convert: it needs "
                "a concrete (Python) value where it got a traced one. Pass it values "
                "computed from static arguments, or use a function that takes traced "
                "values (jnp, lax).")
    elif isinstance(error, jax.errors.TracerIntegerConversionError):
        what = ("A traced value is used where Python needs an int (`int()`, `range()`, "
                "an index into a Python list or tuple, a shape). Keep that value a Python "
                "int (compute it from static arguments, e.g. with static_argnums), or use "
                "array indexing (`x[i]` on a jax array) and `jnp` functions.")
    elif isinstance(error, jax.errors.TracerArrayConversionError):
        what = ("A traced value is passed to NumPy (or `np.asarray`/`float()`), which needs "
                "a concrete array. Use the `jax.numpy` function instead.")
    elif comparisons > 1:
        what = (f"`{segment}` is a chained comparison: Python evaluates it as "
                "`a < b and b < c`, and that `and` needs the truth value of a traced array. "
                "Write `(a < b) & (b < c)` or `jnp.logical_and(a < b, b < c)`.")
    elif called in ("bool", "min", "max", "sorted", "any", "all"):
        alternative = {"bool": "drop the `bool(...)`: a converted `if`/`while` takes the "
                               "traced condition itself",
                       "min": "use `jnp.minimum`", "max": "use `jnp.maximum`",
                       "sorted": "use `jnp.sort`", "any": "use `jnp.any`",
                       "all": "use `jnp.all`"}[called]
        what = (f"Python's `{called}()` needs the truth value of a traced array, which "
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
                "does not stage (an explicit bool(), `filter` with a lambda, a "
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
    construct, where = region.construct, region.where
    return (f"{_NOTE_PREFIX}{_located(entry)}\nThis `raise` is inside the {construct} at "
            f"{where}, which autograph staged with {_STAGED_AS.get(construct, 'JAX')} "
            "because its condition or iterable is traced. A staged branch or loop body is "
            "traced whatever the condition's value, so the `raise` runs while tracing, "
            "not when the condition holds. To check a traced value at run time, use "
            "`jax.experimental.checkify.check` (or an `assert`, which autograph stages), "
            "or compute a fallback value with jnp.where.")


# What Python raises on values at the user's own line (a list index, a missing key,
# `1 // 0`, `math.log(-1)`): inside a staged region it is raised while tracing.
_VALUE_ERRORS = (LookupError, ArithmeticError, ValueError)


def _raised_at_user(entries, user) -> bool:
    """Whether the user's line itself raised: no frame after it but the runtime's own
    (``math.log`` staged by ``runtime/math_functions.py``, say)."""
    return all(entry.tb_frame.f_code.co_filename.startswith(_runtime_dir())
               for entry in entries[user + 1:])


def _explain_value_error(error, entry, region) -> str:
    construct, where = region.construct, region.where
    return (f"{_NOTE_PREFIX}{_located(entry)}\nThis line raised {type(error).__name__} "
            f"while autograph traced the {construct} at {where}, which it staged with "
            f"{_STAGED_AS.get(construct, 'JAX')} because its condition or iterable is "
            "traced. A staged branch or loop body is traced whatever the condition's "
            "value, so the error is raised while tracing, also for inputs where Python "
            "would not run this line. Decide the line with a Python (static) condition, "
            "or compute the value with jnp (jnp.where, jnp.take, a mask).")


def _explain_format(entry) -> str:
    return (f"{_NOTE_PREFIX}{_located(entry)}\nA traced value is formatted here while "
            "the program is traced, when it has no value yet (JAX's tracers accept no "
            "format spec). autograph defers formatting to run time only inside print(...) "
            "and assert messages, where an f-string, .format or % shows the concrete "
            "values: print the f-string directly, or use jax.debug.print.")


def _explain_leak(entry, region) -> str:
    text = (f"{_NOTE_PREFIX}{_located(entry)}\nA traced value escaped the staged code "
            "that made it: a `global` or `nonlocal` variable, an attribute, or a list "
            "outside the branch or loop was given a value computed inside it. Return the "
            "value from the function (or carry it as a local variable) instead.")
    if region is not None:
        text += " " + _region_text(region)
    return text


def _explain_returns(error, mismatch, entries) -> str | None:
    """Which ``return`` statements give the two types of a return mismatch: the
    stores of the return value in each branch function, or, where a branch has
    none (it passes on an earlier value), those of the generated functions around
    the ``if`` less the other branch's. None when no store is a ``return``: then the
    variable is the user's own."""
    name, filename = mismatch.name, error.filename
    true_lines, false_lines = (_store_lines(code, name) for code in mismatch.branches)
    if not true_lines or not false_lines:
        everywhere = set()
        for entry in entries:
            code = entry.tb_frame.f_code
            if code.co_filename == filename:
                everywhere |= _store_lines(code, name)
        if not true_lines:
            true_lines = everywhere - false_lines
        if not false_lines:
            false_lines = everywhere - true_lines
    true_where, false_where = _where(true_lines, filename), _where(false_lines, filename)
    if true_where is None and false_where is None:
        return None
    first, second = mismatch.types
    return (f"{_NOTE_PREFIX}the function returns {first} "
            f"{true_where or 'from an earlier `return`'} but {second} "
            f"{false_where or 'from an earlier `return`'}.")


def _where(lines, filename):
    parts = []
    for line in sorted(lines):
        text = linecache.getline(filename, line).strip()
        if text.startswith("return"):
            parts.append(f"at line {line} (`{text}`)")
        elif text.startswith(("def ", "async def ")):
            parts.append(f"by falling off the end of the function defined at line {line}")
    return " or ".join(parts) or None


def _store_lines(code, name) -> set:
    """Lines of ``code`` (and the functions nested in it) that assign ``name``."""
    lines = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("STORE_") and instruction.argval == name:
            if instruction.positions is not None and instruction.positions.lineno is not None:
                lines.add(instruction.positions.lineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines |= _store_lines(const, name)
    return lines
