"""Read a live function's source and parse it with gast, keeping the user's lines.

Every node of the returned tree carries the line and column it has in the user's
file, so code compiled from the tree reports the user's own locations in
tracebacks, in pdb and in JAX's source information.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap
from dataclasses import dataclass

import gast

from autograph.errors import ConversionError


@dataclass
class ParsedFunction:
    """A function's definition parsed from its source file."""

    node: gast.FunctionDef
    filename: str
    source: str          # the dedented source of the definition
    is_lambda: bool = False   # ``node`` is ``def <lambda>(args): return body``


def parse_function(fn) -> ParsedFunction:
    """Parse the definition of the live function ``fn``; decorators are dropped.

    A lambda is parsed into ``def <lambda>(args): return body``; several lambdas on
    one line are told apart by the source positions of their code. Raises
    ``ConversionError`` when the source cannot be read or is not a ``def``.
    """
    code = fn.__code__
    if code.co_name == "<lambda>":
        return _parse_lambda(fn)
    filename = code.co_filename
    lines, first_lineno = _source_lines(fn, filename)
    text = "".join(lines)
    indent = _indent_of(text)
    source = textwrap.dedent(text)
    try:
        module = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise ConversionError(
            f"could not parse the source of {fn.__qualname__}: {e.msg}. Define it with "
            "`def` in a file, or mark it with autograph.do_not_convert.",
            filename, code.co_firstlineno) from None
    if not module.body or not isinstance(module.body[0], (ast.FunctionDef,
                                                           ast.AsyncFunctionDef)):
        raise ConversionError(
            f"the source of {fn.__qualname__} is not a `def` statement (lambdas are "
            "converted by calling them from a converted function)",
            filename, code.co_firstlineno)
    ast.increment_lineno(module, first_lineno - 1)
    if indent:
        for node in ast.walk(module):
            if hasattr(node, "col_offset") and node.col_offset is not None:
                node.col_offset += indent
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += indent
    tree = gast.ast_to_gast(module)
    node = tree.body[0]
    node.decorator_list = []
    return ParsedFunction(node=node, filename=filename, source=source)


def has_source(fn) -> bool:
    """Whether the source file of ``fn`` can be read (a file, or a linecache entry such
    as a notebook cell's)."""
    return bool(linecache.getlines(fn.__code__.co_filename))


def _parse_lambda(fn) -> ParsedFunction:
    code = fn.__code__
    filename = code.co_filename
    lines, first_lineno = _source_lines(fn, filename)
    tree = _parse_lines(lines, first_lineno)
    if tree is None:            # the lambda starts inside a longer statement
        tree = _parse_lines(linecache.getlines(filename), 1)
    if tree is None:
        raise ConversionError(
            f"could not parse the source around the lambda {fn.__qualname__}. Define it "
            "with `def`, or mark it with autograph.do_not_convert.",
            filename, code.co_firstlineno)
    lam = _find_lambda(tree, code)
    if lam is None:
        raise ConversionError(
            f"could not tell which lambda on this line is {fn.__qualname__} (its code has "
            "no source positions). Define it with `def`, or give the lambdas different "
            "parameter names.", filename, code.co_firstlineno)
    node = gast.ast_to_gast(lam)
    ret = gast.Return(value=node.body)
    fdef = gast.FunctionDef(name="<lambda>", args=node.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(fdef, attr, getattr(node, attr))
        setattr(ret, attr, getattr(node.body, attr))
    source = ast.get_source_segment("".join(linecache.getlines(filename)), lam) or ""
    return ParsedFunction(node=fdef, filename=filename, source=source, is_lambda=True)


def _parse_lines(lines, first_lineno):
    """Parse source lines keeping their line numbers and columns; ``None`` if they do
    not parse on their own."""
    text = "".join(lines)
    offset = first_lineno - 1
    if lines and lines[0][:1] in (" ", "\t"):
        text = "if 1:\n" + text        # keeps the columns of indented code
        offset -= 1
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, offset)
    return tree


def _find_lambda(tree, code):
    """The ``ast.Lambda`` in ``tree`` whose body holds every source position of ``code``."""
    candidates = [n for n in ast.walk(tree)
                  if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno]
    positions = [(line, col, end_line, end_col)
                 for line, end_line, col, end_col in code.co_positions()
                 if line is not None and col is not None and end_col is not None
                 and (col, end_col) != (0, 0)]
    if positions:
        start = min((p[0], p[1]) for p in positions)
        end = max((p[2], p[3]) for p in positions)
        containing = [n for n in candidates
                      if (n.body.lineno, n.body.col_offset) <= start
                      and end <= (n.body.end_lineno, n.body.end_col_offset)]
        if containing:
            return min(containing, key=lambda n: (n.body.end_lineno - n.body.lineno,
                                                  n.body.end_col_offset - n.body.col_offset))
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    by_names = [n for n in candidates if tuple(
        a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs) == names]
    return by_names[0] if len(by_names) == 1 else None


# A line where a definition starts (what ``inspect.findsource`` looks for).
_DEFINITION_START = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _source_lines(fn, filename):
    """The lines of ``fn``'s definition (decorators included) and its first line number.

    Like ``inspect.getsourcelines(fn.__code__)``: the code object, because ``inspect``
    would follow ``__wrapped__`` to the function a decorator wraps, and read from
    ``linecache`` directly, because ``inspect.getmodule`` scans every loaded module.
    """
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    lnum = fn.__code__.co_firstlineno - 1
    if not lines or lnum >= len(lines):
        where = (f"{filename!r}" if filename.startswith("<")
                 else f"{filename}, which can no longer be read")
        raise ConversionError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: it was defined "
            f"in {where} (by exec, python -c, or an interactive prompt that keeps no "
            "source). autograph converts functions from their source: define the function "
            "in a .py file or a notebook cell, or call it unconverted with "
            "autograph.do_not_convert.", None, None)
    while lnum > 0 and not _DEFINITION_START.match(lines[lnum]):
        lnum -= 1
    try:
        block = inspect.getblock(lines[lnum:])
    except (IndentationError, SyntaxError):
        block = lines[lnum:lnum + 1]
    return block, lnum + 1


def _indent_of(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def source_line(filename: str, lineno: int) -> str:
    """The text of one line of the user's file (empty if unavailable)."""
    return linecache.getline(filename, lineno).rstrip("\n")
