"""Read a live function's source and parse it with gast, keeping the user's lines.

Every node of the returned tree carries the line and column it has in the user's
file, so code compiled from the tree reports the user's own locations in
tracebacks, in pdb and in JAX's source information.
"""

from __future__ import annotations

import ast
import inspect
import linecache
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


def parse_function(fn) -> ParsedFunction:
    """Parse the definition of the live function ``fn``; decorators are dropped.

    Raises ``ConversionError`` when the source cannot be read or is not a ``def``.
    """
    code = fn.__code__
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


def _source_lines(fn, filename):
    try:
        lines, first_lineno = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        where = (f"{filename!r}" if filename.startswith("<")
                 else "a file that can no longer be read")
        raise ConversionError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: it was defined "
            f"in {where} ({e}). autograph converts functions from their source; define the "
            "function in a .py file or a notebook cell, or call it unconverted with "
            "autograph.do_not_convert.", None, None) from None
    if not lines:
        raise ConversionError(f"the source of {fn.__qualname__} is empty")
    return lines, first_lineno


def _indent_of(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def source_line(filename: str, lineno: int) -> str:
    """The text of one line of the user's file (empty if unavailable)."""
    return linecache.getline(filename, lineno).rstrip("\n")
