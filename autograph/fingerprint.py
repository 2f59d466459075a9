"""Does a parsed definition match the code Python is running?

Source is read from the file on disk (through ``linecache``), the code object
from memory: after the file is edited without re-importing the module, the
lines at ``co_firstlineno`` may hold another function, or the same function
edited. Converting that source would run code other than the function the user
holds, so ``mismatch(code, node)`` compares what the code object remembers of
its source with the parsed definition:

- the first line and the name (a ``def``) or the parameters (a lambda);
- the parameter names, in order;
- the source positions of every instruction: each spans exactly what a node of
  the definition spans (an edit that moves or resizes code breaks this: an
  operand grown in place, ``n += k`` made ``n += k * 2``, too); an instruction
  of a method call, which the compiler places from the method's name when the
  call spans lines, starts or ends where a node does; and
  where a name, an attribute or a constant sits at exactly an instruction's
  position, it is the one the instruction uses (an edit in place breaks this);
- the names the code uses (globals, attributes, locals, cells) and its
  constants (after CPython's constant folding), each found in the definition.

The compiler's own additions are allowed for (``e = None; del e`` after
``except ... as e``, the pieces of ``'%s' % (x,)`` compiled like an f-string,
``''.join`` of long f-strings, string annotations of nested definitions), so a
function whose source is unchanged always matches: every function of the
standard library and of jax, numpy and scipy does.

Everything is taken from the code objects of the function and of the functions,
lambdas and comprehensions nested in it. A code object compiled from a tree
that a tool rewrote (pytest's assertion rewriting adds names such as
``@py_assert1``) is checked on its positions only.

``compiles_to(code, node, module_names)`` is a cheaper test, tried first: whether
compiling the definition gives a code object equal to ``code`` (code objects
compare their instructions, names, constants, first line and positions: an equal
one was compiled from this very source). Where it is not equal (the definition
was compiled in a context this compile does not rebuild: a class's private names,
a tool's rewriting), ``mismatch`` decides.
"""

from __future__ import annotations
import __future__

import ast
import dis
import inspect
import itertools
import opcode
import operator
import re
import sys
import types

__all__ = ["compiles_to", "mismatch"]


def mismatch(code: types.CodeType, node: ast.AST, decorators=()) -> str | None:
    """Why the definition ``node`` (an ``ast.FunctionDef``, ``AsyncFunctionDef`` or
    ``Lambda``, with its ``decorators``) is not the source of ``code``, or ``None``
    when it is."""
    first = min([node.lineno] + [d.lineno for d in decorators])
    if first != code.co_firstlineno:
        return f"its definition starts on line {first}, not {code.co_firstlineno}"
    if not isinstance(node, ast.Lambda) and node.name != code.co_name:
        return f"the definition there is '{node.name}'"
    params = _parameter_names(node.args)
    expected = _code_parameter_names(code)
    if len(params) != len(expected) or not all(
            _same_name(c, p) for c, p in zip(expected, params, strict=True)):
        return f"its parameters are ({', '.join(params)}), not ({', '.join(expected)})"
    source = _SourceFacts(node, decorators)
    for sub in _code_objects(code):
        problem = source.explain(sub)
        if problem:
            return problem
    return None


def compiles_to(code: types.CodeType, node: ast.AST, module_names=()) -> bool:
    """Whether compiling the definition ``node`` (an ``ast.FunctionDef`` or
    ``AsyncFunctionDef``, decorators included) gives a code object equal to ``code``:
    then ``node`` is its source. False where the compile gives another (or fails):
    ask ``mismatch``. ``module_names``: the names the module bound by importing
    them (the compiler calls a method of an imported module by an attribute load,
    not a method load). A function nested in another is compiled inside a function
    binding its free variables. The caller makes sure the compile warns of nothing
    (a ``SyntaxWarning`` would be shown again)."""
    flags = code.co_flags
    freevars = code.co_freevars
    body = [node]
    if flags & inspect.CO_NESTED:
        inner = [node]
        if freevars:
            targets = [_placed(ast.Name(id=name, ctx=ast.Store())) for name in freevars]
            inner.insert(0, _placed(ast.Assign(targets=targets,
                                               value=_placed(ast.Constant(value=None)))))
        body = [_placed(ast.FunctionDef(
            name="_", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                         kwonlyargs=[], kw_defaults=[], kwarg=None,
                                         defaults=[]),
            body=inner, decorator_list=[], returns=None, type_comment=None))]
    elif freevars:
        return False          # (a method's ``__class__``: not rebuilt here)
    if module_names:
        body.insert(0, _placed(ast.Import(names=[_placed(ast.alias(name=name))
                                                 for name in module_names])))
    try:
        module = compile(ast.Module(body=body, type_ignores=[]), code.co_filename, "exec",
                         flags=flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return False
    stack = [module]
    while stack:
        for const in stack.pop().co_consts:
            if const.__class__ is types.CodeType:
                if const.co_firstlineno == code.co_firstlineno and (
                        const.co_name == code.co_name):
                    return const == code
                stack.append(const)
    return False


def _placed(node):
    """``node`` at line 1, column 0 (the compile wraps the definition in it)."""
    node.lineno = node.end_lineno = 1
    node.col_offset = node.end_col_offset = 0
    return node


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _parameter_names(args: ast.arguments) -> list[str]:
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _code_parameter_names(code: types.CodeType) -> list[str]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS)
    count += bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])


def _same_name(in_code: str, in_source: str) -> bool:
    """Whether ``in_code`` is ``in_source``, perhaps mangled (``_C__x`` for ``__x``)."""
    return in_code == in_source or (in_source.startswith("__") and in_code.endswith(in_source)
                                    and in_code.startswith("_"))


def _code_objects(code):
    """``code`` and the code objects nested in it, at any depth."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


# Instructions naming a variable or an attribute (their argval is the name).
_NAME_OPS = frozenset({
    "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_GLOBAL", "STORE_GLOBAL",
    "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "LOAD_DEREF", "STORE_DEREF",
    "DELETE_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE", "LOAD_ATTR", "STORE_ATTR",
    "DELETE_ATTR", "LOAD_METHOD", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR",
    "LOAD_SUPER_ATTR", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"})

# Instructions of a method call, which a call spanning lines places from the
# method's name on (not a node's span): checked by their start or end alone. The
# POP_TOP discarding such a call's result (an expression statement) takes its place,
# and so does a function's implicit ``return None`` after it.
_METHOD_CALL_OPS = frozenset({"LOAD_METHOD", "LOAD_ATTR", "PRECALL", "CALL", "CALL_KW",
                              "KW_NAMES", "POP_TOP", "LOAD_CONST", "RETURN_VALUE",
                              "RETURN_CONST"})

# Names a class body loads and stores where the compiler likes (its cell for
# ``super()``/``__class__``, its module and qualified name).
_CLASS_BODY_NAMES = frozenset({"__class__", "__classcell__", "__module__", "__qualname__"})

# Fields of AST nodes holding names (not string constants, not type comments).
_NOT_NAMES = frozenset({"value", "kind", "type_comment"})

# The node types ``_SourceFacts._add`` learns more from than their span and names.
_KINDS = frozenset({
    ast.Constant, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple, ast.DictComp, ast.Match,
    ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.MatchAs, ast.MatchStar,
    ast.MatchMapping, ast.JoinedStr, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef})


# Node class -> (whether it has a location, its fields): found once (``_walk``).
_WALK_PLANS: dict = {}


def _leaf_classes(cls=ast.AST):
    """The node classes without fields and attributes under ``cls`` (``Load``,
    ``Add``, ``Eq``...): nothing in them for ``_walk`` to learn."""
    found = set()
    for sub in cls.__subclasses__():
        if not sub._fields and not sub._attributes and not sub.__subclasses__():
            found.add(sub)
        found |= _leaf_classes(sub)
    return found


_LEAVES = frozenset(_leaf_classes())


class _SourceFacts:
    """What the definition holds: node positions, identifiers, constants."""

    def __init__(self, node, decorators):
        self.starts, self.ends, self.spans = set(), set(), set()
        self.names, self.constants = set(), set()
        self.name_at = {}          # span -> the name a Name or Attribute node there holds
        self.constants_at = {}     # span -> keys of the Constant nodes there
        self.implicit_stores = set()   # names the compiler stores where it likes
        # Strings the compiler makes of format strings (``'%s: %s' % (a, b)`` and
        # long f-strings), placed at the positions of any of their parts.
        self.made_strings = set()
        self.ints_made_by_compiler = False   # sequence patterns, import levels
        for top in (node, *decorators):
            self._walk(top)

    def _walk(self, top):
        """Every node under ``top`` (``ast.walk``'s order), with the names its fields
        hold (identifiers, not string constants): one pass, no generators. (Per
        class, found once: whether it has a location, and its fields.)"""
        todo = [top]
        starts, ends, spans, name_at = self.starts, self.ends, self.spans, self.name_at
        add_name, kinds, plans, node_type = self._add_name, _KINDS, _WALK_PLANS, ast.AST
        leaves = _LEAVES
        name_class, attribute_class, constant_class = ast.Name, ast.Attribute, ast.Constant
        names = self.names
        for sub in todo:        # (the list grows as the walk goes: breadth first)
            cls = sub.__class__
            plan = plans.get(cls)
            if plan is None:
                plan = plans[cls] = ("end_col_offset" in cls._attributes, cls._fields)
            located, fields = plan
            d = sub.__dict__
            span = None
            if located:
                end_col = d.get("end_col_offset")
                if end_col is not None:
                    start, end = (d["lineno"], d["col_offset"]), (d["end_lineno"], end_col)
                    starts.add(start)
                    ends.add(end)
                    span = start + end
                    spans.add(span)
                    if cls is name_class:
                        name_at[span] = d["id"]
                    elif cls is attribute_class:
                        name_at[span] = d["attr"]
            if cls is name_class:
                names.add(d["id"])     # (its one name, no dot; its context a leaf)
                continue
            if cls in kinds:
                self._add(sub, span)
                if cls is constant_class:
                    continue           # (its fields hold no name)
            for field in fields:
                value = d.get(field)
                if value.__class__ is list:
                    if value and isinstance(value[0], str):
                        for name in value:
                            add_name(name)
                    else:
                        todo += [v for v in value if isinstance(v, node_type)
                                 and v.__class__ not in leaves]
                elif isinstance(value, node_type):
                    if value.__class__ not in leaves:
                        todo.append(value)
                elif isinstance(value, str) and field not in _NOT_NAMES:
                    add_name(value)

    def _add(self, sub, span):
        """What a node of one of the ``_KINDS`` tells beyond its span and names."""
        if isinstance(sub, ast.Constant):
            keys = set(_constant_keys(sub.value))
            self.constants |= keys
            if span is not None:
                self.constants_at.setdefault(span, set()).update(keys)
            if isinstance(sub.value, str) and "%" in sub.value:
                self.made_strings.update(_constant_keys(_percent_format_parts(sub.value)))
        elif isinstance(sub, (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple)):
            folded = _folded(sub)
            if folded is not _NOT_FOLDED:
                self.constants.update(_constant_keys(folded))
        elif isinstance(sub, ast.DictComp):
            # Python 3.12 inlines comprehensions and places MAP_ADD at ``key: value``.
            self.spans.add((sub.key.lineno, sub.key.col_offset,
                            sub.value.end_lineno, sub.value.end_col_offset))
        elif isinstance(sub, (ast.Match, ast.Import, ast.ImportFrom)):
            self.ints_made_by_compiler = True
        elif isinstance(sub, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and sub.name:
            self.implicit_stores.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            self.implicit_stores.add(sub.rest)
        elif isinstance(sub, ast.JoinedStr):       # long f-strings: ''.join([...])
            self.names.add("join")
            self.made_strings.add(("str", "''"))
        elif isinstance(sub, ast.arg) and sub.annotation is not None:
            self._add_annotation(sub.annotation)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.returns:
            self._add_annotation(sub.returns)

    def _add_annotation(self, annotation):
        """Under ``from __future__ import annotations`` a nested definition's
        annotations are strings among the enclosing code's constants."""
        self.constants.add(("str", repr(ast.unparse(annotation))))
        self.constants.add(("str", "'return'"))

    def _add_name(self, name):
        self.names.add(name)
        if "." in name:                      # import a.b.c binds a
            self.names.update(name.split("."))

    def explain(self, code) -> str | None:
        """Why ``code`` (the function's or a nested one) was not compiled from this
        definition, or ``None``."""
        problem = (self._explain_decoded(code) if _DECODED
                   else self._explain_instructions(instructions(code)))
        if problem:
            return problem
        names = code.co_names + code.co_varnames + code.co_cellvars + code.co_freevars
        if not all(name.isidentifier() for name in names):
            return None                       # compiled from a tree a tool rewrote
        for name in names:
            if not self._has_name(name):
                return f"the running code uses the name '{name}', which the source does not"
        if not code.co_flags & inspect.CO_OPTIMIZED:
            return None                       # a class body: its constants are the compiler's
        for value in code.co_consts:
            for key in _constant_keys(value):
                if key not in self.constants and key not in self.made_strings and (
                        not self._compiler_constant(key)):
                    return (f"the running code holds the constant {key[1]}, which the "
                            "source does not")
        return None

    def _explain_instructions(self, found):
        """Why the instructions ``found`` (``instructions``' triples) were not
        compiled from this definition: an instruction placed where no node of the
        source is, or using a name or constant other than the node at its place."""
        spans, starts, ends = self.spans, self.starts, self.ends
        name_ops, name_at, constants_at = _NAME_OPS, self.name_at, self.constants_at
        for opname, position, argval in found:
            if None in position or position[2] == position[3] == 0:
                continue                      # no position, or the compiler's own
            line, end_line, col, end_col = position
            span = (line, col, end_line, end_col)
            if span not in spans and (
                    opname not in _METHOD_CALL_OPS
                    or ((line, col) not in starts and (end_line, end_col) not in ends)):
                return _placed_elsewhere(line, col)
            if opname in name_ops:
                held = name_at.get(span)
                if held is None or held == argval:
                    continue                  # (what ``_differs_at`` finds first)
            elif opname != "LOAD_CONST" or span not in constants_at:
                continue                      # (no name or constant: nothing to differ)
            problem = self._differs_at(span, opname, argval)
            if problem:
                return problem
        return None

    def _explain_decoded(self, code):
        """``_explain_instructions(instructions(code))`` over the code units as
        ``_units`` reads them: an instruction's name and argument are looked up only
        where its place does not settle it (most instructions name no variable and
        load no constant)."""
        spans, starts, ends = self.spans, self.starts, self.ends
        name_ops, name_at, constants_at = _NAME_OPS, self.name_at, self.constants_at
        opnames, kinds = dis.opname, _ARG_KIND
        for op, arg, (line, end_line, col, end_col) in _units(code):
            if (line is None or end_line is None or col is None or end_col is None
                    or col == end_col == 0):
                continue                      # no position, or the compiler's own
            span = (line, col, end_line, end_col)
            if span not in spans and (
                    opnames[op] not in _METHOD_CALL_OPS
                    or ((line, col) not in starts and (end_line, end_col) not in ends)):
                return _placed_elsewhere(line, col)
            kind = kinds.get(op)
            if kind is None:
                continue      # (neither a name nor a constant: nothing to differ)
            opname, argval = opnames[op], _argval(code, kind, arg)
            if opname in name_ops:
                held = name_at.get(span)
                if held is None or held == argval:
                    continue                  # (what ``_differs_at`` finds first)
            elif opname != "LOAD_CONST" or span not in constants_at:
                continue
            problem = self._differs_at(span, opname, argval)
            if problem:
                return problem
        return None

    def _differs_at(self, span, opname, argval):
        """Why the name or constant an instruction (``opname``, ``argval``) uses is
        not the one the node at its own span of the source holds, or ``None`` (also
        where no such node is)."""
        if opname in _NAME_OPS:
            held = self.name_at.get(span)
            name = argval
            if opname.startswith(("STORE", "DELETE")) and (
                    name in self.implicit_stores):
                return None     # ``e = None; del e`` after ``except ... as e``, captures
            if name in _CLASS_BODY_NAMES:
                return None     # a class body's own bookkeeping, placed at its last line
            if isinstance(name, str) and not name.isidentifier():
                return None     # a tool's rewrite (pytest's ``@py_assert1``)
            if held is not None and isinstance(name, str) and not _same_name(name, held):
                return (f"the running code uses '{name}' at line {span[0]}, column "
                        f"{span[1] + 1}, where the source has '{held}'")
        elif opname == "LOAD_CONST" and span in self.constants_at:
            keys = set(_constant_keys(argval))
            if not keys <= self.constants_at[span] | self.made_strings:
                return (f"the running code has the constant {argval!r} at line "
                        f"{span[0]}, column {span[1] + 1}, where the source has another")
        return None

    def _has_name(self, name):
        if name in self.names or (name.startswith("__") and name.endswith("__")):
            return True
        return any(name[i:i + 2] == "__" and _same_name(name, name[i:])
                   and name[i:] in self.names for i in range(1, len(name) - 2))

    def _compiler_constant(self, key):
        kind, text = key
        if kind == "str":
            return text[1:-1] in self.names or ".<locals>." in text
        return kind == "int" and self.ints_made_by_compiler and abs(int(text)) <= 256


def _placed_elsewhere(line, col) -> str:
    return (f"the running code has an expression at line {line}, column {col + 1} that "
            "the source does not")


def instructions(code):
    """``(opname, (line, end line, column, end column), argval)`` of each instruction
    of ``code``, as ``dis.get_instructions`` gives them (``argval`` of the
    instructions naming a variable or an attribute, and of ``LOAD_CONST``; None for
    the others). Read straight from the bytecode on the Python whose layout is
    written out here (``_decoded``: about a third of the time ``dis`` takes, which
    also formats every argument), through ``dis`` on the others."""
    if _DECODED:
        return _decoded(code)
    return [(i.opname, tuple(i.positions), i.argval if i.opname in _ARGVAL_OPS else None)
            for i in dis.get_instructions(code)]


# The instructions whose argument ``explain`` reads.
_ARGVAL_OPS = _NAME_OPS | {"LOAD_CONST"}
# Python 3.11's bytecode, as ``dis._unpack_opargs`` and ``dis._get_instructions_bytes``
# read it: two bytes an instruction, inline cache entries after some (no instruction,
# and a position each), EXTENDED_ARG prefixes; ``co_code`` holds no specialised
# instructions. tests/autograph/test_fingerprint_decode.py checks it against ``dis``.
_DECODED = sys.version_info[:2] == (3, 11)
if _DECODED:
    _CACHE_ENTRIES = tuple(opcode._inline_cache_entries)
    _ARG_KIND = {}    # opcode -> how its argval is found
    for _op in range(256):
        _name = dis.opname[_op]
        if _name not in _ARGVAL_OPS:
            continue
        if _op in dis.hasconst:
            _ARG_KIND[_op] = "const"
        elif _op == dis.opmap["LOAD_GLOBAL"]:
            _ARG_KIND[_op] = "global"
        elif _op in dis.hasname:
            _ARG_KIND[_op] = "name"
        elif _op in dis.haslocal or _op in dis.hasfree:
            _ARG_KIND[_op] = "local"


def _decoded(code):
    opnames, kinds = dis.opname, _ARG_KIND
    return [(opnames[op], position,
             None if (kind := kinds.get(op)) is None else _argval(code, kind, arg))
            for op, arg, position in _units(code)]


def _units(code):
    """``(opcode, argument, position)`` of each instruction of ``code`` (argument
    None for one that takes none), as ``dis`` reads them (Python 3.11)."""
    raw = code.co_code
    # (one position per code unit; none past the end, as ``next(positions, ...)``)
    positions = itertools.chain(code.co_positions(), itertools.repeat(_NO_POSITION))
    caches = _CACHE_ENTRIES
    have_argument, extended = dis.HAVE_ARGUMENT, dis.EXTENDED_ARG
    out, extended_arg, skip = [], 0, 0
    for i, position in zip(range(0, len(raw), 2), positions, strict=False):
        if skip:
            skip -= 1
            continue
        op = raw[i]
        skip = caches[op]
        arg = None
        if op >= have_argument:
            arg = raw[i + 1] | extended_arg
            extended_arg = (arg << 8) if op == extended else 0
            if extended_arg >= 1 << 31:
                extended_arg -= 1 << 32
        else:
            extended_arg = 0
        out.append((op, arg, position))
    return out


def _argval(code, kind, arg):
    """The value the argument ``arg`` of an instruction of ``_ARG_KIND`` ``kind`` names."""
    if kind == "const":
        return code.co_consts[arg]
    if kind == "name":
        return code.co_names[arg]
    if kind == "global":
        return code.co_names[arg >> 1]
    return code._varname_from_oparg(arg)


_NO_POSITION = (None, None, None, None)


def _constant_keys(value):
    """Comparable keys of the leaves of a constant (the elements of a tuple or
    frozenset); ``None``, ``...``, booleans and code objects have none."""
    if isinstance(value, (tuple, frozenset)):
        for item in value:
            yield from _constant_keys(item)
    elif isinstance(value, (str, bytes, int, float, complex)) and not isinstance(value, bool):
        yield (type(value).__name__, repr(value))


# A literal percent sign, or a conversion of ``'...' % (a, b)`` that CPython
# compiles like an f-string.
_PERCENT_SPEC = re.compile(r"%%|%(-?)(\d*)(?:\.(\d+))?[sra]")


def _percent_format_parts(text: str) -> tuple:
    """The constants CPython makes of the format string ``text`` when it compiles
    ``text % (a, b)`` like an f-string: the literal pieces and the format specs."""
    parts, piece, at = [], "", 0
    for match in _PERCENT_SPEC.finditer(text):
        piece += text[at:match.start()]
        at = match.end()
        if match.group() == "%%":
            piece += "%"
            continue
        parts.append(piece)
        piece = ""
        _, width, precision = match.groups()
        tail = f".{precision}" if precision else ""
        parts += [width + tail, f">{width}{tail}"]
    parts.append(piece + text[at:])
    return tuple(parts)


_NOT_FOLDED = object()
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
          ast.Not: operator.not_}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
           ast.MatMult: operator.matmul}
_SIZE_LIMIT = 4096   # CPython folds nothing bigger (and neither do we: no huge values)


def _folded(node):
    """The value CPython's constant folding gives ``node``, or ``_NOT_FOLDED``."""
    if isinstance(node, ast.Constant):
        return node.value
    try:
        if isinstance(node, ast.UnaryOp):
            operand = _folded(node.operand)
            if operand is _NOT_FOLDED:
                return _NOT_FOLDED
            return _UNARY[type(node.op)](operand)
        if isinstance(node, ast.BinOp):
            left, right = _folded(node.left), _folded(node.right)
            if left is _NOT_FOLDED or right is _NOT_FOLDED or not _small_result(
                    node.op, left, right):
                return _NOT_FOLDED
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load):
            items = tuple(_folded(e) for e in node.elts)
            return _NOT_FOLDED if _NOT_FOLDED in items else items
        if isinstance(node, ast.Subscript):
            value, index = _folded(node.value), _folded(node.slice)
            if value is _NOT_FOLDED or index is _NOT_FOLDED:
                return _NOT_FOLDED
            return value[index]
    except Exception:  # noqa: BLE001 - what raises is not folded (CPython keeps it too)
        return _NOT_FOLDED
    return _NOT_FOLDED


def _small_result(op, left, right) -> bool:
    """Whether computing ``left op right`` stays small (as CPython's folding limits)."""
    ints = isinstance(left, int) and isinstance(right, int)
    if isinstance(op, ast.Pow) and ints:
        return abs(right) <= _SIZE_LIMIT and left.bit_length() * right <= _SIZE_LIMIT
    if isinstance(op, ast.LShift) and ints:
        return 0 <= right <= _SIZE_LIMIT and left.bit_length() + right <= _SIZE_LIMIT
    if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)):
        return False                     # CPython does not fold %-formatting
    if isinstance(op, ast.Mult):
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, tuple)) and isinstance(n, int):
                return len(seq) * n <= _SIZE_LIMIT
    return True
