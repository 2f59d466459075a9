"""Read a live function's source and parse it with gast, keeping the user's lines.

Every node of the returned tree carries the line and column it has in the user's
file, so code compiled from the tree reports the user's own locations in
tracebacks, in pdb and in JAX's source information.

The source is parsed as it stands in the file: an indented definition (a method,
a nested function) is parsed inside ``if 1:``, which absorbs its indentation, so
neither its columns nor the contents of its multi-line strings change. A lambda
whose line does not parse alone (one entry of a multi-line dict literal) is found
in a parse of its whole file, made once per version of the file and shared by
every lambda of it. Before a definition is used it is checked against the
function's code object (see ``autograph.fingerprint``): a file edited since its
module was imported raises a ``ConversionError`` rather than converting the
edited text.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import re
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass

import gast

from autograph import ast_bridge, ast_in_place, fingerprint, source_lines
from autograph.errors import ConversionError
from autograph.walk import child_nodes, walk_list


@dataclass
class ParsedFunction:
    """A function's definition parsed from its source file."""

    node: gast.FunctionDef
    filename: str
    source: str          # the source text of the definition, as in the file
    is_lambda: bool = False   # ``node`` is ``def <lambda>(args): return body``
    # ``list(walk(node))`` where the parse took it (the tree is as parsed), else None.
    nodes: list | None = None


def parse_function(fn, lines=None) -> ParsedFunction:
    """Parse the definition of the live function ``fn``; decorators are dropped.

    A lambda is parsed into ``def <lambda>(args): return body``; several lambdas on
    one line are told apart by the source positions of their code. Raises
    ``ConversionError`` when the source cannot be read, is not a ``def``, or is no
    longer the source of ``fn`` (the file changed since it was imported).
    ``lines``: the file's lines as ``file_lines(fn)`` gave them (read if omitted).
    """
    if lines is None:
        lines = file_lines(fn)
    if fn.__code__.co_name == "<lambda>":
        return _parse_lambda(fn, lines)
    return _parse_def(fn, lines)


def has_source(fn) -> bool:
    """Whether the source file of ``fn`` can be read (a file, or a linecache entry such
    as a notebook cell's)."""
    return bool(linecache.getlines(fn.__code__.co_filename))


def source_line(filename: str, lineno: int) -> str:
    """The text of one line of the user's file (empty if unavailable)."""
    return linecache.getline(filename, lineno).rstrip("\n")


# -- definitions ----------------------------------------------------------------------

# A line where a ``def`` (or its first decorator) starts.
_DEF_START = re.compile(r"\s*(@|def\s|async\s+def\s)")


def _parse_def(fn, lines) -> ParsedFunction:
    code = fn.__code__
    filename, first = code.co_filename, code.co_firstlineno
    if not _DEF_START.match(lines[first - 1]):
        raise _changed_since_import(fn, f"line {first} does not start a definition")
    block = _definition_lines(lines, code) or _block(lines, first)
    try:
        statements = _parse_lines(block, first, filename)
    except SyntaxError as e:
        raise ConversionError(
            f"could not parse the source of {fn.__qualname__}: {e.msg}. Define it with "
            "`def` in a file, or mark it with autograph.do_not_convert.",
            filename, first) from None
    if not statements or not isinstance(statements[0], (ast.FunctionDef,
                                                        ast.AsyncFunctionDef)):
        raise _changed_since_import(fn, f"line {first} starts no function")
    definition = statements[0]
    if ast_in_place.AVAILABLE:
        # (the parse is used once: its nodes become the gast tree, after the check)
        nodes = ast_in_place.walk_as_gast(definition)
        warns = _compile_warns(nodes, _AST_KINDS)
    else:
        node = ast_bridge.to_gast(definition)
        nodes = walk_list(node)     # (decorators included: they are compiled too)
        warns = _compile_warns(nodes)
    if warns or not fingerprint.compiles_to(code, definition, _module_names(fn)):
        problem = fingerprint.mismatch(code, definition, definition.decorator_list)
        if problem:
            raise _changed_since_import(fn, problem)
    if ast_in_place.AVAILABLE:
        node, nodes = ast_in_place.to_gast(definition, nodes)
    if node.decorator_list:
        node.decorator_list = []
        nodes = None
    _mangle_private_names(node, code)
    return ParsedFunction(node=node, filename=filename, source="".join(block),
                          nodes=nodes)


def _module_names(fn):
    """The names ``fn``'s code uses that its module binds to modules (by importing
    them, as a rule: ``fingerprint.compiles_to``)."""
    found = []
    globals_ = fn.__globals__
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        found += [name for name in code.co_names
                  if isinstance(globals_.get(name), types.ModuleType)]
        stack.extend(c for c in code.co_consts if c.__class__ is types.CodeType)
    return sorted(set(found))


def _compile_warns(nodes, kinds=None) -> bool:
    """Whether compiling the tree whose walk is ``nodes`` may show a
    ``SyntaxWarning`` (``x is 1``, ``(a, b)(c)``, ``1[0]``, ``assert (x, 'm')``):
    the compile ``fingerprint.compiles_to`` makes would show it again. ``kinds``:
    ``_AST_KINDS`` for a walk of an ``ast`` tree (``_GAST_KINDS``, the default, of
    a gast tree)."""
    compare, call, subscript, assert_, tuple_, constant, identity, plain = (
        kinds or _GAST_KINDS)
    for sub in nodes:
        cls = sub.__class__
        if cls is compare:
            if any(op.__class__ in identity for op in sub.ops) and not all(
                    x.__class__ in plain or (x.__class__ is constant
                                             and _is_singleton(x.value))
                    for x in (sub.left, *sub.comparators)):
                return True
        elif cls is call:
            if sub.func.__class__ not in plain:
                return True
        elif cls is subscript:
            if sub.value.__class__ not in plain:
                return True
        elif cls is assert_ and sub.test.__class__ is tuple_:
            return True
    return False


def _is_singleton(value) -> bool:
    return value is None or value is True or value is False or value is Ellipsis


# The node types ``_compile_warns`` looks for, of gast and of ast: Compare, Call,
# Subscript, Assert, Tuple, Constant, the identity tests, the plain operands.
_GAST_KINDS, _AST_KINDS = (
    (m.Compare, m.Call, m.Subscript, m.Assert, m.Tuple, m.Constant,
     frozenset((m.Is, m.IsNot)), frozenset((m.Name, m.Attribute, m.Call, m.Subscript)))
    for m in (gast, ast))


def _definition_lines(lines, code):
    """The lines of ``code``'s definition, found without tokenizing: from its first
    line to the last line any of its instructions (or its nested code's) spans,
    provided the next line of code after them is not indented under the ``def``
    (then the definition goes on with lines that compile to nothing, such as a
    final ``else: pass``, and ``None`` is returned: tokenize it)."""
    first = code.co_firstlineno
    last = first
    stack = [code]
    while stack:
        current = stack.pop()
        for _, end_line, _, _ in current.co_positions():
            if end_line is not None and end_line > last:
                last = end_line
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    if last > len(lines):
        return None
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    for line in itertools.islice(lines, last, None):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(line) - len(stripped) > indent:
            return None
        break
    return lines[first - 1:last]


def _block(lines, first):
    """The lines of the block starting at line ``first`` (a definition with its
    decorators, or the statement holding a lambda)."""
    try:
        return inspect.getblock(lines[first - 1:])
    except (IndentationError, SyntaxError):
        return lines[first - 1:first]


def _parse_lines(lines, first_lineno, filename="<unknown>"):
    """The statements of ``lines`` (starting at line ``first_lineno`` of ``filename``)
    with the lines and columns they have in the file. Indented lines are parsed
    inside ``if 1:`` rather than dedented: dedenting would change the contents of
    multi-line strings, and fail on a string or a continuation line at column 0.
    Raises ``SyntaxError`` when they do not parse on their own."""
    text = "".join(lines)
    offset = first_lineno - 1
    wrapped = bool(lines) and lines[0][:1] in (" ", "\t", "\f")
    if wrapped:
        text = "if 1:\n" + text
        offset -= 1
    if offset >= 0:
        # Blank lines first put every node on its line at once (cheaper than
        # ast.increment_lineno's walk), and a SyntaxError names the file's line.
        tree = ast.parse("\n" * offset + text, filename=filename)
    else:
        tree = ast.parse(text, filename=filename)
        ast.increment_lineno(tree, offset)
    return tree.body[0].body if wrapped else tree.body


def _mangle_private_names(node, code):
    """Write the private names (``__x``) of a definition inside a class as Python
    compiled them there (``_C__x``): the converted code is compiled outside the
    class, where the compiler would leave them unmangled and ``self.__x`` would
    look up an attribute that does not exist."""
    prefix = _private_name_prefix(code)
    if prefix is None:
        return
    for sub in _outside_nested_class_bodies(node):
        for field in ("id", "attr", "arg", "name", "rest"):
            value = getattr(sub, field, None)
            if (isinstance(value, str) and sub is not node
                    and not isinstance(sub, gast.alias)):
                setattr(sub, field, _mangled(value, prefix))
        for field in ("names", "kwd_attrs"):
            value = getattr(sub, field, None)
            if isinstance(value, list) and value and isinstance(value[0], str):
                setattr(sub, field, [_mangled(name, prefix) for name in value])


def _outside_nested_class_bodies(node):
    """The nodes of ``node`` except those in the bodies of classes defined in it,
    whose private names the compiler mangles with their own class's name."""
    stack = [node]
    while stack:
        sub = stack.pop()
        yield sub
        if isinstance(sub, gast.ClassDef) and sub is not node:
            stack.extend([*sub.bases, *sub.keywords, *sub.decorator_list])
            continue
        stack.extend(child_nodes(sub))


def _private_name_prefix(code):
    """``_C`` for code defined (at any depth) in the body of class ``C``, or ``None``."""
    parts = code.co_qualname.split(".")[:-1]
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == "<locals>" or parts[i + 1:i + 2] == ["<locals>"]:
            continue                  # a function's scope, not a class's
        name = parts[i].lstrip("_")
        return "_" + name if name else None
    return None


def _mangled(name, prefix):
    if name.startswith("__") and not name.endswith("__") and "." not in name:
        return prefix + name
    return name


def _changed_since_import(fn, reason):
    code = fn.__code__
    return ConversionError(
        f"the source file of {fn.__qualname__} changed since its module was imported "
        f"({reason}), so its source is no longer the code Python runs. Reload the module "
        "(importlib.reload, or restart the interpreter or kernel) and convert it again.",
        code.co_filename, code.co_firstlineno)


def file_lines(fn):
    """The lines of ``fn``'s file, from ``linecache`` (refreshed if the file changed).

    ``linecache`` directly, not ``inspect``: ``inspect`` would follow ``__wrapped__``
    to the function a decorator wraps, and ``inspect.getmodule`` scans every loaded
    module.
    """
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = source_lines.read(filename)
    if lines is None:
        lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        where = (f"{filename!r}" if filename.startswith("<")
                 else f"{filename}, which can no longer be read")
        raise ConversionError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: it was defined "
            f"in {where} (by exec, python -c, or an interactive prompt that keeps no "
            "source). autograph converts functions from their source: define the function "
            "in a .py file or a notebook cell, or call it unconverted with "
            "autograph.do_not_convert.", None, None)
    if not 0 < code.co_firstlineno <= len(lines):
        raise _changed_since_import(
            fn, f"the file has {len(lines)} lines, the function starts on line "
                f"{code.co_firstlineno}")
    return lines


# -- lambdas --------------------------------------------------------------------------

def _parse_lambda(fn, lines) -> ParsedFunction:
    code = fn.__code__
    filename, first = code.co_filename, code.co_firstlineno
    if "lambda" not in lines[first - 1]:
        raise _changed_since_import(fn, f"line {first} holds no lambda")
    # The statement holding the lambda, parsed alone, unless its file's parse is at
    # hand. A line may parse alone yet hold only the start of the lambda (its body
    # goes on below): then the lambda is looked up in a parse of the whole file.
    by_line = FILE_LAMBDAS.kept(filename, lines)
    lam = None
    if by_line is NOT_KEPT:
        try:
            statements = _parse_lines(_block(lines, first), first, filename)
            lam = _find_lambda(_lambdas_in(statements, first), code, by_names=False)
        except SyntaxError:     # the lambda's line does not parse alone
            pass
    if lam is None or fingerprint.mismatch(code, lam):
        if by_line is NOT_KEPT:
            by_line = FILE_LAMBDAS.lambdas_by_line(filename, lines)
        if by_line is None:
            raise ConversionError(
                f"could not parse the source around the lambda {fn.__qualname__}. Define "
                "it with `def`, or mark it with autograph.do_not_convert.", filename, first)
        lam = _find_lambda(by_line.get(first, ()), code)
        if lam is None:
            raise ConversionError(
                f"could not tell which lambda on this line is {fn.__qualname__} (its code "
                "has no source positions). Define it with `def`, or give the lambdas "
                "different parameter names.", filename, first)
        problem = fingerprint.mismatch(code, lam)
        if problem:
            raise _changed_since_import(fn, problem)
    node = ast_bridge.to_gast(lam)
    _mangle_private_names(node, code)
    ret = gast.Return(value=node.body)
    fdef = gast.FunctionDef(name="<lambda>", args=node.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(fdef, attr, getattr(node, attr))
        setattr(ret, attr, getattr(node.body, attr))
    return ParsedFunction(node=fdef, filename=filename, source=_segment(lines, lam),
                          is_lambda=True)


def _lambdas_in(statements, lineno):
    return [n for statement in statements for n in ast.walk(statement)
            if isinstance(n, ast.Lambda) and n.lineno == lineno]


def _find_lambda(candidates, code, by_names=True):
    """The lambda among ``candidates`` (on the code's first line) whose body holds
    every source position of ``code``; else (``by_names``) the only one with the
    code's parameter names; else ``None``."""
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
    if not by_names:
        return None
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    by_names = [n for n in candidates if tuple(
        a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs) == names]
    return by_names[0] if len(by_names) == 1 else None


def _segment(lines, node) -> str:
    """The source text of ``node`` (its columns are UTF-8 byte offsets)."""
    first = lines[node.lineno - 1].encode()
    if node.lineno == node.end_lineno:
        return first[node.col_offset:node.end_col_offset].decode()
    middle = "".join(lines[node.lineno:node.end_lineno - 1])
    last = lines[node.end_lineno - 1].encode()[:node.end_col_offset]
    return first[node.col_offset:].decode() + middle + last.decode()


NOT_KEPT = object()


class FileLambdas:
    """The lambdas of whole source files by line: each version of a file (each
    ``linecache`` entry) is parsed once, however many of its lambdas are converted.

    Holds the lambda subtrees only (not the file's whole tree), for the most
    recently used files up to ``max_files`` files and ``max_lines`` lines in all.
    Thread-safe: two threads may both parse a file they miss; the last one kept.
    """

    def __init__(self, max_files: int = 8, max_lines: int = 200_000):
        self.max_files = max_files
        self.max_lines = max_lines
        self.parses = 0           # whole-file parses so far (for tests and benchmarks)
        self._lock = threading.Lock()
        self._entries = OrderedDict()   # filename -> (lines, {line: [ast.Lambda]} | None)

    def kept(self, filename: str, lines: list[str]):
        """What ``lambdas_by_line`` gives if it needs no parse for it, else
        ``NOT_KEPT``."""
        with self._lock:
            entry = self._entries.get(filename)
            if entry is not None and entry[0] is lines:
                self._entries.move_to_end(filename)
                return entry[1]
        return NOT_KEPT

    def lambdas_by_line(self, filename: str, lines: list[str]):
        """``{line: [ast.Lambda starting there]}`` of the file whose current
        ``linecache`` lines are ``lines``; ``None`` if the file does not parse."""
        index = self.kept(filename, lines)
        if index is not NOT_KEPT:
            return index
        try:
            tree = ast.parse("".join(lines), filename=filename)
        except (SyntaxError, ValueError):
            index = None
        else:
            index = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Lambda):
                    index.setdefault(node.lineno, []).append(node)
        with self._lock:
            self.parses += 1
            self._entries[filename] = (lines, index)
            self._entries.move_to_end(filename)
            total = sum(len(kept) for kept, _ in self._entries.values())
            while len(self._entries) > 1 and (len(self._entries) > self.max_files
                                              or total > self.max_lines):
                _, (dropped, _) = self._entries.popitem(last=False)
                total -= len(dropped)
        return index

    def clear(self):
        with self._lock:
            self._entries.clear()


FILE_LAMBDAS = FileLambdas()
