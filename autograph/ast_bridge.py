"""``ast`` <-> ``gast`` trees, as ``gast.ast_to_gast`` / ``gast.gast_to_ast`` make them.

gast's translators are ``ast.NodeTransformer``s that build every node through its
constructor from a dict of visited fields; converting a function's tree both ways
was about a tenth of a cold conversion. These make the same trees (the same node
types, fields and locations: ``tests/autograph/test_ast_bridge.py`` compares the
dumps over the standard library) by filling each new node's ``__dict__``
directly, with gast's own special cases written out for the node types gast
treats specially on this Python. A node type gast treats specially that is not
written out here is handed to gast's own translator.

    tree = ast_bridge.to_gast(ast.parse(source))      # as gast.ast_to_gast
    code = compile(ast_bridge.to_ast(tree), ...)     # as gast.gast_to_ast

``to_located_ast`` is ``to_ast`` followed by ``ast.fix_missing_locations``, whose
walk it makes only where the conversion met a node missing part of its location
(in a converted function, none but where a converter left one unplaced).
"""

from __future__ import annotations

import ast
import sys
import threading

import gast
from gast import ast3

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_AST = ast.AST        # gast's node classes derive from it too
# The Pythons whose gast special cases are written out here (gast 0.7).
_WRITTEN_FOR = ((3, 11), (3, 12))


def to_gast(node):
    """The gast tree of the ``ast`` tree ``node`` (``gast.ast_to_gast(node)``)."""
    return _convert(node, _TO_GAST)


def to_ast(node):
    """The ``ast`` tree of the gast tree ``node`` (``gast.gast_to_ast(node)``)."""
    return _convert(node, _TO_AST)


def to_located_ast(node):
    """``fill_missing_locations(to_ast(node))``: the fill's walk is made only where
    a node of the converted tree lacks part of its location (the conversion checks
    each node it makes, and where every one is located the fill changes nothing)."""
    tree, missing = to_ast_noting_locations(node)
    if missing:
        fill_missing_locations(tree)
    return tree


def to_ast_noting_locations(node):
    """``(to_ast(node), whether a node of it lacks part of its location)``: where it
    does, ``fill_missing_locations`` of the tree it is put in would change it."""
    state = _LOCATIONS
    state.missing = False
    tree = _convert(node, _TO_AST)
    return tree, state.missing


def fill_missing_locations(tree):
    """``ast.fix_missing_locations(tree)``, without a generator and a recursive call
    per node: each node missing a location takes its parent's. (Per class, found
    once: whether it has a location, and its fields; operator and context leaves,
    which have neither, are not visited.)"""
    stack = [(tree, 1, 0, 1, 0)]
    pop, push = stack.pop, stack.append
    plans, leaves, node_type = _LOCATION_PLANS, _AST_LEAVES, ast.AST
    while stack:
        node, lineno, col, end_lineno, end_col = pop()
        cls = node.__class__
        plan = plans.get(cls)
        if plan is None:
            plan = plans[cls] = ("lineno" in cls._attributes, cls._fields)
        located, fields = plan
        d = node.__dict__
        if located:
            value = d.get("lineno")
            if value is None and "lineno" not in d:
                node.lineno = lineno
            else:
                lineno = value
            value = d.get("end_lineno")
            if value is None:
                node.end_lineno = end_lineno
            else:
                end_lineno = value
            if "col_offset" not in d:
                node.col_offset = col
            else:
                col = d["col_offset"]
            value = d.get("end_col_offset")
            if value is None:
                node.end_col_offset = end_col
            else:
                end_col = value
        for name in fields:
            value = d.get(name)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, lineno, col, end_lineno, end_col))
            elif isinstance(value, node_type) and value.__class__ not in leaves:
                push((value, lineno, col, end_lineno, end_col))
    return tree


_LOCATION_PLANS: dict = {}
_AST_LEAVES = frozenset(
    leaf for base in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    for leaf in base.__subclasses__() if not leaf._fields and not leaf._attributes)

# Per thread: whether ``to_ast`` made a node that ``fill_missing_locations`` would
# change (one missing its start, or with no end), since ``to_located_ast`` began.
_LOCATIONS = threading.local()


def _unlocated(values) -> bool:
    """Whether a new ``ast`` node whose ``__dict__`` is ``values`` is one the fill
    would change."""
    return (values.get("end_col_offset") is None or values.get("end_lineno") is None
            or "lineno" not in values or "col_offset" not in values)


def _checked(new):
    """``new`` (a located ``ast`` node), noted if the fill would change it."""
    if _unlocated(new.__dict__):
        _LOCATIONS.missing = True
    return new


class _Direction:
    """One direction: the target module, its special cases, gast's translator, and
    per source class the function that converts its nodes."""

    def __init__(self, target, translator, special, shared_leaves=False,
                 checks_locations=False):
        self.target = target
        self.translator = translator
        gast_special = {name[6:] for name in vars(translator) if name.startswith("visit_")}
        if sys.version_info[:2] not in _WRITTEN_FOR:
            special = {}
        # gast's special cases on this Python: ours where written, else gast's.
        self.special = {name: special.get(name, self._gast) for name in gast_special}
        # A node with no fields and no attributes (Load, Add...) converted to one
        # object per class: for ``to_ast``, whose trees are compiled and printed.
        self.shared_leaves = shared_leaves
        # Note each located node missing part of its location (``to_located_ast``).
        self.checks_locations = checks_locations
        self.handlers = {}    # source class -> function converting its nodes
        self.generic = {}     # source class -> its ``_generic_of`` (for ``_generic``)

    def _gast(self, node):
        if self.checks_locations:
            _LOCATIONS.missing = True    # (its nodes are not checked: fill them)
        return self.translator().visit(node)

    def handler(self, cls):
        """The function converting nodes of class ``cls`` (made on first use)."""
        found = self.special.get(cls.__name__)
        if found is None:
            target = getattr(self.target, cls.__name__, None)
            if target is None:
                found = _none           # (gast drops a node its target module lacks)
            elif self.shared_leaves and not cls._fields and not cls._attributes:
                found = _shared(target())
            else:
                found = _generic_of(cls, target, self)
        self.handlers[cls] = found
        return found


def _none(node):
    return None


def _shared(leaf):
    return lambda node: leaf


def _convert(node, direction):
    handler = direction.handlers.get(node.__class__)
    if handler is None:
        handler = direction.handler(node.__class__)
    return handler(node)


def _generic(node, direction):
    """What gast's ``generic_visit`` makes of ``node``."""
    cls = node.__class__
    convert = direction.generic.get(cls)
    if convert is None:
        target = getattr(direction.target, cls.__name__, None)
        if target is None:
            return None
        convert = direction.generic[cls] = _generic_of(cls, target, direction)
    return convert(node)


def _generic_of(cls, target, direction):
    """The function making what gast's ``generic_visit`` makes of a node of class
    ``cls``: the node of class ``target``, its fields converted, its location
    copied. Written out per class, its fields (each as ``_FIELD_LINES``) and
    attributes unrolled: this runs for most nodes of every tree, both ways."""
    fields, attributes = cls._fields, cls._attributes
    check = direction.checks_locations and "lineno" in target._attributes
    lines = ["def convert(node):",
             "    new = target.__new__(target)",
             "    values = new.__dict__",
             "    own = node.__dict__"]
    for field in fields:
        lines += [line.replace("FIELD", repr(field)) for line in _FIELD_LINES]
    # ``getattr(node, attr)`` of each attribute, without raising where a node lacks
    # one: the instance's value, else the class's (a default), else none.
    defaults = {}
    for i, attr in enumerate(attributes):
        default = getattr(cls, attr, _MISSING)
        if default is _MISSING:
            lines += [f"    if {attr!r} in own:",
                      f"        values[{attr!r}] = own[{attr!r}]"]
        else:
            defaults[f"default_{i}"] = default
            lines += [f"    values[{attr!r}] = own.get({attr!r}, default_{i})"]
    if check:
        lines += ['    if (values.get("end_col_offset") is None',
                  '            or values.get("end_lineno") is None',
                  '            or "lineno" not in values or "col_offset" not in values):',
                  "        state.missing = True"]
    lines.append("    return new")
    namespace = {"target": target, "handlers": direction.handlers,
                 "make_handler": direction.handler, "AST": _AST, "value_of": _value,
                 "direction": direction, "state": _LOCATIONS, **defaults}
    exec(compile("\n".join(lines), f"<ast_bridge {cls.__name__}>", "exec"), namespace)
    return namespace["convert"]


# One field of ``_generic_of``'s function (FIELD: the field's name).
_FIELD_LINES = (
    "    if FIELD in own:",
    "        value = own[FIELD]",
    "        if value.__class__ is list:",
    "            if value:",
    "                value = [(handlers.get(v.__class__) or make_handler(v.__class__))(v)",
    "                         if isinstance(v, AST) else value_of(v, direction)",
    "                         for v in value]",
    "            else:",
    "                value = []",
    "        elif isinstance(value, AST):",
    "            value = (handlers.get(value.__class__) or make_handler(value.__class__))(",
    "                value)",
    "        values[FIELD] = value",
)


_MISSING = object()


def _value(value, direction):
    if isinstance(value, _AST):
        return _convert(value, direction)
    if value.__class__ is list:
        return [_value(v, direction) for v in value]
    return value


def _copy_location(new, old):
    """``ast.copy_location(new, old)``."""
    for attr in _LOCATION:
        if attr in old._attributes and attr in new._attributes:
            value = getattr(old, attr, None)
            if value is not None or (hasattr(old, attr) and attr.startswith("end_")):
                setattr(new, attr, value)
    return new


def _gast_copy_location(new, old):
    """``gast.copy_location(new, old)``."""
    for attr in _LOCATION:
        if attr in old._attributes and attr in new._attributes and hasattr(old, attr):
            setattr(new, attr, getattr(old, attr))
    return new


# -- ast -> gast ----------------------------------------------------------------------

def _g(value):
    return _value(value, _TO_GAST)


def _gast_name(node):
    # gast.Name(node.id, _g(node.ctx), None, None) with the location copied, written
    # out: names are the most frequent nodes.
    new = _GAST_NAME.__new__(_GAST_NAME)
    values = new.__dict__
    values["id"] = node.id
    values["ctx"] = _convert(node.ctx, _TO_GAST)
    values["annotation"] = values["type_comment"] = None
    _copy_name_location(values, node)
    return new


def _copy_name_location(values, old):
    """``_copy_location`` into a name's, parameter's or assignment's ``__dict__``
    ``values`` (both kinds of name and assignment, and ``ast.arg``, have every
    location attribute), read from ``old``'s own ``__dict__`` (their classes have no
    start and a None end by default: ``_NAME_DEFAULTS_KNOWN``)."""
    own = old.__dict__
    value = own.get("lineno")
    if value is not None:
        values["lineno"] = value
    value = own.get("col_offset")
    if value is not None:
        values["col_offset"] = value
    values["end_lineno"] = own.get("end_lineno")
    values["end_col_offset"] = own.get("end_col_offset")


def _copy_name_location_by_getattr(values, old):
    """``_copy_name_location`` where the name classes' defaults are not as known."""
    for attr in _START:
        value = getattr(old, attr, None)
        if value is not None:
            values[attr] = value
    for attr in _END:
        try:
            values[attr] = getattr(old, attr)
        except AttributeError:
            pass


_GAST_NAME, _AST_NAME = gast.Name, ast.Name
_START, _END = ("lineno", "col_offset"), ("end_lineno", "end_col_offset")
_NAME_DEFAULTS_KNOWN = all(
    not hasattr(cls, "lineno") and not hasattr(cls, "col_offset")
    and getattr(cls, "end_lineno", 0) is None and getattr(cls, "end_col_offset", 0) is None
    for cls in (_GAST_NAME, _AST_NAME, ast.arg, gast.Assign, ast.Assign))
if not _NAME_DEFAULTS_KNOWN:
    _copy_name_location = _copy_name_location_by_getattr   # noqa: F811


def _gast_arg(node):
    # gast.Name(node.arg, gast.Param(), ...) with the location copied, written out.
    new = _GAST_NAME.__new__(_GAST_NAME)
    values = new.__dict__
    values["id"] = node.arg
    values["ctx"] = gast.Param()
    values["annotation"] = _g(node.annotation)
    values["type_comment"] = _g(node.type_comment)
    _copy_name_location(values, node)
    return new


def _gast_except_handler(node):
    if not node.name:
        return _generic(node, _TO_GAST)
    return _copy_location(gast.ExceptHandler(
        _g(node.type), gast.Name(node.name, gast.Store(), None, None), _g(node.body)), node)


def _gast_function(kind):
    def convert(node):
        return _gast_copy_location(kind(
            _g(node.name), _g(node.args), _g(node.body), _g(node.decorator_list),
            _g(node.returns), _g(node.type_comment), []), node)
    return convert


def _gast_class(node):
    return _gast_copy_location(gast.ClassDef(
        _g(node.name), _g(node.bases), _g(node.keywords), _g(node.body),
        _g(node.decorator_list), []), node)


# -- gast -> ast ----------------------------------------------------------------------

def _a(value):
    return _value(value, _TO_AST)


def _ast_name(node):
    # ast.Name(node.id, _a(node.ctx)) with the location copied, written out.
    new = _AST_NAME.__new__(_AST_NAME)
    values = new.__dict__
    values["id"] = node.id
    ctx = node.ctx
    leaf = _AST_CONTEXTS.get(ctx.__class__)     # (one shared leaf per class)
    if leaf is None:
        leaf = _AST_CONTEXTS[ctx.__class__] = _convert(ctx, _TO_AST)
    values["ctx"] = leaf
    _copy_name_location(values, node)
    if (values.get("end_col_offset") is None or values.get("end_lineno") is None
            or "lineno" not in values or "col_offset" not in values):    # (_unlocated)
        _LOCATIONS.missing = True
    return new


_AST_CONTEXTS: dict = {}     # gast context class -> the ast leaf ``to_ast`` makes of it


def _ast_except_handler(node):
    if not node.name:
        return _generic(node, _TO_AST)
    return _checked(_copy_location(
        ast.ExceptHandler(_a(node.type), node.name.id, _a(node.body)), node))


def _ast_assign(node):
    # ast.Assign(_a(node.targets), _a(node.value)) with the location copied, written
    # out (its classes' location defaults are the names', ``_NAME_DEFAULTS_KNOWN``).
    new = _AST_ASSIGN.__new__(_AST_ASSIGN)
    values = new.__dict__
    values["targets"] = _a(node.targets)
    values["value"] = _a(node.value)
    _place(values, node)
    return new


def _place(values, old) -> None:
    """``_copy_name_location(values, old)``, noting a location the fill would change."""
    _copy_name_location(values, old)
    if _unlocated(values):
        _LOCATIONS.missing = True


_AST_ASSIGN = ast.Assign


def _ast_function(kind):
    def convert(node):
        return _checked(_copy_location(kind(
            _a(node.name), _a(node.args), _a(node.body), _a(node.decorator_list),
            _a(node.returns), _a(node.type_comment)), node))
    return convert


def _ast_class(node):
    return _checked(_copy_location(ast.ClassDef(
        _a(node.name), _a(node.bases), _a(node.keywords), _a(node.body),
        _a(node.decorator_list)), node))


def _ast_arg(node):
    # ast.arg(node.id, ...) with the location copied, written out.
    if node is None:
        return None
    new = _AST_ARG.__new__(_AST_ARG)
    values = new.__dict__
    values["arg"] = _a(node.id)
    values["annotation"] = _a(node.annotation)
    values["type_comment"] = _a(node.type_comment)
    _place(values, node)
    return new


_AST_ARG = ast.arg


def _ast_arguments(node):
    return ast.arguments(
        [_ast_arg(a) for a in node.posonlyargs], [_ast_arg(a) for a in node.args],
        _ast_arg(node.vararg), [_ast_arg(a) for a in node.kwonlyargs],
        _a(node.kw_defaults), _ast_arg(node.kwarg), _a(node.defaults))


_TO_GAST = _Direction(gast, ast3.Ast3ToGAst, {
    "Name": _gast_name, "arg": _gast_arg, "ExceptHandler": _gast_except_handler,
    "FunctionDef": _gast_function(gast.FunctionDef),
    "AsyncFunctionDef": _gast_function(gast.AsyncFunctionDef), "ClassDef": _gast_class})
_TO_AST = _Direction(ast, ast3.GAstToAst3, shared_leaves=True, checks_locations=True,
                     special={
    "Name": _ast_name, "ExceptHandler": _ast_except_handler, "Assign": _ast_assign,
    "FunctionDef": _ast_function(ast.FunctionDef),
    "AsyncFunctionDef": _ast_function(ast.AsyncFunctionDef), "ClassDef": _ast_class,
    "arguments": _ast_arguments})
