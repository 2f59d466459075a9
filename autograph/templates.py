"""Code templates: converters write what they emit as Python source with placeholders.

    nodes = templates.replace(
        '''
        def body_name(state):
            body
            return state
        state = ag__.while_stmt(test_name, body_name, state)
        ''',
        body_name='loop_body', state=['n', 'steps'], body=node.body, ...)

A placeholder is a name in the template. What replaces it depends on what is given:
- a ``str``: the name is renamed (also a function's name or a parameter);
- a gast expression: it takes the name's place, in the name's load/store context;
- a list of statements: an expression statement holding just the name is replaced
  by them (an empty list removes it);
- a list of names (``str``) or expressions where the template has a name
  standing for several: parameters, tuple elements, call arguments. A name used as
  a bare value (``return state``) becomes a tuple for several names, the name
  itself for one, and a statement ``return state`` or ``state = call`` with no
  names is shortened to ``return`` / ``call``.

Every replacement given must be used, so a typo in a placeholder fails loudly.

The placeholder ``ag__`` stands for the runtime: each ``ag__.name`` a template
makes is annotated ``annos.RUNTIME = 'name'``, so later converters recognise the
runtime calls earlier ones made (``annos.runtime_operator``) by annotation, not by
the runtime's name in the code.
"""

from __future__ import annotations

import functools
import textwrap

import gast

from autograph.analysis import annos
from autograph.walk import LEAVES, NODE_FIELDS, walk

RUNTIME_PLACEHOLDER = "ag__"
_LOCATION_FIELDS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


@functools.cache
def _parse(template: str):
    module = gast.parse(textwrap.dedent(template))
    for node in walk(module):
        for field in _LOCATION_FIELDS:
            if hasattr(node, field):
                setattr(node, field, None)
    return module.body


def replace(template: str, *, moved=(), **replacements) -> list:
    """The statements of ``template`` with its placeholders replaced.

    An expression given is copied where it is inserted, so the caller's stays as it
    was; ``moved`` names the placeholders whose expression the caller hands over
    (it is in no tree and the caller does not use it again): the template's first
    use of it takes it as it is, without a copy."""
    replacer = _Replacer(replacements, moved)
    result = _builder(template, frozenset(replacements))(replacer)  # (copies as it replaces)
    unused = set(replacements) - replacer.used
    if unused:
        raise ValueError(f"placeholders not in the template: {sorted(unused)}")
    return result


def replace_expr(template: str, **replacements):
    """Like ``replace`` for a template that is a single expression."""
    stmts = replace(template, **replacements)
    if len(stmts) != 1 or not isinstance(stmts[0], gast.Expr):
        raise ValueError("the template is not a single expression")
    return stmts[0].value


def name(identifier: str, ctx=None) -> gast.Name:
    """A ``gast.Name`` node (load context unless ``ctx`` is given)."""
    # (gast.Name's constructor, written out: names are most of what templates make)
    new = _NAME.__new__(_NAME)
    values = new.__dict__
    values["id"] = identifier
    values["ctx"] = ctx or _LOAD.__new__(_LOAD)
    values["annotation"] = values["type_comment"] = None
    return new


_NAME, _LOAD = gast.Name, gast.Load


def copy_tree(value):
    """A deep copy of a gast tree (or list of trees), annotations included; much
    faster than ``copy.deepcopy``, which matters for conversion time."""
    if isinstance(value, gast.AST):
        cls = value.__class__
        new = cls.__new__(cls)
        fields = new.__dict__
        for k, v in value.__dict__.items():
            fields[k] = copy_tree(v) if isinstance(v, _TREE) else v
        return new
    if isinstance(value, list):
        return [copy_tree(v) if isinstance(v, _TREE) else v for v in value]
    return value


_TREE = (gast.AST, list)


def set_location(nodes, origin) -> None:
    """Give every node of ``nodes`` that has no location the location of ``origin``.

    Nodes that have a location are the user's own code: they and everything below
    them are left as they are.
    """
    loc = {f: getattr(origin, f, None) for f in _LOCATION_FIELDS}
    if loc["end_lineno"] != loc["lineno"]:
        # Generated code stands for the construct's first line (`while n != 1:`).
        # (The end column stays valid: left unset, compile() would inherit one from
        # an enclosing line and reject the range once ifs nest four deep.)
        loc["end_lineno"], loc["end_col_offset"] = loc["lineno"], loc["col_offset"]
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    pop, push, extend = stack.pop, stack.append, stack.extend
    located, fields_of, leaves = _LOCATED, NODE_FIELDS, LEAVES
    while stack:
        node = pop()
        cls = node.__class__
        has_location = located.get(cls)
        if has_location is None:
            has_location = located[cls] = "lineno" in cls._attributes
        if has_location:
            if node.__dict__.get("lineno") is not None:
                continue
            node.__dict__.update(loc)
        # (walk.child_nodes, inlined)
        values = node.__dict__
        for field in fields_of[cls]:
            value = values.get(field)
            if value.__class__ is list:
                extend([item for item in value
                        if isinstance(item, _AST) and item.__class__ not in leaves])
            elif isinstance(value, _AST) and value.__class__ not in leaves:
                push(value)


_LOCATED: dict = {}    # node class -> whether it has a location


# Where a placeholder given a list stands for several items rather than a tuple.
_SEQUENCES = {(gast.arguments, "args"), (gast.Tuple, "elts"), (gast.List, "elts"),
              (gast.Call, "args")}


def _with_ctx(node, ctx):
    if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript, gast.Starred)):
        node.ctx = ctx
    if isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = ctx
        for elt in node.elts:
            _with_ctx(elt, ctx)
    if isinstance(node, gast.Starred):
        _with_ctx(node.value, ctx)
    return node


def _as_expr(value, ctx):
    if isinstance(value, str):
        return name(value, ctx)
    return _with_ctx(copy_tree(value), ctx)


class _Replacer:
    """The placeholders of one use of a template: what ``_builder``'s function asks
    for each placeholder it reaches (which ones were used; a moved expression is
    taken as it is once, then copied)."""

    def __init__(self, replacements, moved=()):
        self.replacements = replacements
        self.used = set()
        self.movable = set(moved)     # (``replace``'s ``moved`` not yet inserted)

    def lookup(self, identifier):
        if identifier in self.replacements:
            self.used.add(identifier)
            return True, self.replacements[identifier]
        return False, None

    def name(self, node):
        """The template's name ``node`` (a placeholder) replaced by what it stands for."""
        found, value = self.lookup(node.id)
        ctx = node.ctx.__class__
        ctx = ctx.__new__(ctx)     # (a context has no fields: its constructor sets none)
        if not found:
            return _copy_name(node)
        if isinstance(value, (list, tuple)):
            if len(value) == 1:
                return _as_expr(value[0], ctx)
            elts = [_as_expr(v, ctx) for v in value]
            return gast.Tuple(elts=elts, ctx=ctx)
        if node.id in self.movable and not isinstance(value, str):
            self.movable.discard(node.id)
            return _with_ctx(value, ctx)
        return _as_expr(value, ctx)


_AST = gast.AST


# -- templates compiled ----------------------------------------------------------------
#
# A template is used with the same placeholders each time: the walk of its nodes that
# copies them and replaces the placeholders is done once per (template, placeholders),
# written out as one function (``_builder``) that builds the copy in one expression,
# the fixed parts inline and each placeholder through the ``_Replacer``. Each template
# node is copied once, as it is reached (fields in its order); an expression a
# placeholder stands for is copied where it is inserted (``moved``: taken once as it
# is); inserted values are not revisited.


@functools.cache
def _builder(template: str, keys: frozenset):
    """A function of a ``_Replacer`` giving ``template``'s statements (``_parse``'s,
    which stay as they are: shared by every use) with the placeholders ``keys``
    replaced."""
    writer = _BuilderWriter(keys)
    code = writer.statements(_parse(template))
    namespace = {"K": tuple(writer.constants), **_BUILDER_HELPERS}
    exec(compile(f"def build(R):\n    return {code}\n", "<template>", "exec"),  # noqa: S102
         namespace)
    return namespace["build"]


class _BuilderWriter:
    """Writes the expression that builds a copy of template nodes (``_builder``)."""

    def __init__(self, keys):
        self.keys = keys
        self.constants = []    # the objects the code refers to, as K[i]

    def ref(self, value) -> str:
        if value is None or value.__class__ in (str, int, bool):
            return repr(value)
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def _placeholder(self, node, cls) -> str | None:
        """The placeholder ``node`` is (a name of class ``cls`` among the keys), or None."""
        if node.__class__ is cls and isinstance(node, gast.Name) and node.id in self.keys:
            return node.id
        return None

    def statements(self, stmts) -> str:
        """The statements ``stmts``, as a list display: a placeholder standing alone
        (``body``) splices the statements given; ``return state`` and ``state =
        call`` with an empty list of names become ``return`` and ``call``."""
        parts = []
        for stmt in stmts:
            cls = stmt.__class__
            spliced = (self._placeholder(stmt.value, gast.Name)
                       if cls is gast.Expr else None)
            emptied = (self._placeholder(stmt.value, gast.Name)
                       if cls is gast.Return else None)
            dropped = (self._placeholder(stmt.targets[0], gast.Name)
                       if cls is gast.Assign and len(stmt.targets) == 1 else None)
            code = self.node(stmt)
            if spliced is not None:     # `body`: the statements given, spliced
                code = (f"*(_s if (_s := _splice(R, {spliced!r})) is not None "
                        f"else [{code}])")
            elif emptied is not None:   # `return state` with no names: `return`
                code = f"(_empty_return() if _empty(R, {emptied!r}) else {code})"
            elif dropped is not None:   # `state = call` with no names: `call`
                code = (f"(_expression(({self.node(stmt.value)})) "
                        f"if _empty(R, {dropped!r}) else {code})")
            parts.append(code)
        return "[" + ", ".join(parts) + "]"

    def node(self, node) -> str:
        """A copy of ``node`` with its placeholders replaced; each ``ag__.name``
        annotated ``annos.RUNTIME``; a function renamed if its name is a
        placeholder."""
        cls = node.__class__
        if cls is gast.Name:
            return (f"R.name({self.ref(node)})" if node.id in self.keys
                    else f"_copy_name({self.ref(node)})")
        fields = []
        for field, old in node.__dict__.items():
            if old.__class__ is list:
                if old and isinstance(old[0], gast.stmt):
                    code = self.statements(old)
                elif (cls, field) in _SEQUENCES:
                    code = self.sequence(old)
                else:
                    code = "[" + ", ".join(self.node(x) if isinstance(x, _AST)
                                           else self.ref(x) for x in old) + "]"
            elif old.__class__ in LEAVES:
                code = f"_leaf({self.ref(old.__class__)})"
            elif isinstance(old, _AST):
                code = self.node(old)
            else:
                code = self.ref(old)
            fields.append(f"{field!r}: {code}")
        code = f"_new({self.ref(cls)}, {{{', '.join(fields)}}})"
        if cls is gast.Attribute and node.value.__class__ is gast.Name and (
                node.value.id == RUNTIME_PLACEHOLDER):
            return f"_runtime({code})"
        if cls is gast.FunctionDef or cls is gast.AsyncFunctionDef:
            return f"_definition(R, {code}, {node.name!r})"
        return code

    def sequence(self, elts) -> str:
        """A list of expressions (parameters, elements, arguments), where a
        placeholder given a list stands for several."""
        parts = []
        for elt in elts:
            if isinstance(elt, gast.Name):
                parts.append(f"*_items(R, {self.ref(elt)})" if elt.id in self.keys
                             else f"_copy_name({self.ref(elt)})")
            elif isinstance(elt, _AST):
                parts.append(self.node(elt))
            else:
                parts.append(self.ref(elt))
        return "[" + ", ".join(parts) + "]"


def _new(cls, fields):
    new = cls.__new__(cls)
    new.__dict__.update(fields)
    return new


def _leaf(cls):
    return cls.__new__(cls)     # (a context or an operator: no fields)


def _copy_name(node):
    """A copy of a template's name that is no placeholder."""
    ctx = node.ctx.__class__
    ctx = ctx.__new__(ctx)
    new = _NAME.__new__(_NAME)
    new.__dict__.update(node.__dict__)
    new.ctx = ctx
    return new


def _runtime(node):
    annos.set(node, annos.RUNTIME, node.attr)
    return node


def _definition(replacer, new, name):
    found, value = replacer.lookup(name)
    if found:
        new.name = value
    # A generated helper is no generator: the statements it is given are of a
    # function that is none (converters leave a generator as it is).
    annos.set(new, annos.STAYS_PYTHON, False)
    return new


def _splice(replacer, name):
    found, value = replacer.lookup(name)
    if found and isinstance(value, list) and (not value or isinstance(value[0], gast.stmt)):
        return list(value)
    return None


def _empty(replacer, name) -> bool:
    found, value = replacer.lookup(name)
    return found and isinstance(value, list) and not value


def _empty_return():
    return gast.Return(value=None)


def _expression(value):
    return gast.Expr(value=value)


def _items(replacer, elt):
    found, value = replacer.lookup(elt.id)
    if found and isinstance(value, (list, tuple)):
        return [_as_expr(v, elt.ctx.__class__()) for v in value]
    return [replacer.name(elt)]


_BUILDER_HELPERS = {
    "_new": _new, "_leaf": _leaf, "_copy_name": _copy_name, "_runtime": _runtime,
    "_definition": _definition, "_splice": _splice, "_empty": _empty,
    "_empty_return": _empty_return, "_expression": _expression, "_items": _items}
