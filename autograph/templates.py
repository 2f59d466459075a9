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
    result = replacer.statements(_parse(template))   # (copies as it replaces)
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
    """Builds the statements of a parsed template (``_parse``'s, which stay as they
    are: shared by every use) with the placeholders replaced: each template node is
    copied once, as it is reached."""

    def __init__(self, replacements, moved=()):
        self.replacements = replacements
        self.used = set()
        self.movable = set(moved)     # (``replace``'s ``moved`` not yet inserted)

    def lookup(self, identifier):
        if identifier in self.replacements:
            self.used.add(identifier)
            return True, self.replacements[identifier]
        return False, None

    def statements(self, stmts):
        out = []
        for stmt in stmts:
            replaced = self.statement(stmt)
            out.extend(replaced if isinstance(replaced, list) else [replaced])
        return out

    def statement(self, stmt):
        # `body` standing alone: splice statements.
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Name):
            found, value = self.lookup(stmt.value.id)
            if found and isinstance(value, list) and (
                    not value or isinstance(value[0], gast.stmt)):
                return list(value)
        # `return state` / `state = call(...)` with an empty list of names.
        if isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Name):
            found, value = self.lookup(stmt.value.id)
            if found and isinstance(value, list) and not value:
                return gast.Return(value=None)
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            found, value = self.lookup(stmt.targets[0].id)
            if found and isinstance(value, list) and not value:
                return gast.Expr(value=self.node(stmt.value))
        return self.node(stmt)

    def node(self, node):
        """A copy of the template node ``node`` with its placeholders replaced;
        inserted values are not revisited."""
        cls = node.__class__
        if cls is gast.Name:
            return self.name(node)
        new = cls.__new__(cls)
        fields = new.__dict__
        for field, old in node.__dict__.items():
            if old.__class__ is list:
                if old and isinstance(old[0], gast.stmt):
                    old = self.statements(old)
                elif (cls, field) in _SEQUENCES:
                    old = self.sequence(old)
                else:
                    old = [self.node(x) if isinstance(x, _AST) else x for x in old]
            elif old.__class__ in LEAVES:    # (a context or an operator: no fields)
                leaf = old.__class__
                old = leaf.__new__(leaf)
            elif isinstance(old, _AST):
                old = self.node(old)
            fields[field] = old
        if cls is gast.Attribute and node.value.__class__ is gast.Name and (
                node.value.id == RUNTIME_PLACEHOLDER):
            annos.set(new, annos.RUNTIME, new.attr)
        elif cls is gast.FunctionDef or cls is gast.AsyncFunctionDef:
            found, value = self.lookup(node.name)
            if found:
                new.name = value
            # A generated helper is no generator: the statements it is given are of
            # a function that is none (converters leave a generator as it is).
            annos.set(new, annos.STAYS_PYTHON, False)
        return new

    def sequence(self, elts):
        """A list of expressions, where a placeholder may stand for several."""
        out = []
        for elt in elts:
            if isinstance(elt, gast.Name):
                found, value = self.lookup(elt.id)
                if found and isinstance(value, (list, tuple)):
                    out.extend(_as_expr(v, elt.ctx.__class__()) for v in value)
                else:
                    out.append(self.name(elt))
            elif isinstance(elt, _AST):
                out.append(self.node(elt))
            else:
                out.append(elt)
        return out

    def name(self, node):
        found, value = self.lookup(node.id)
        ctx = node.ctx.__class__
        ctx = ctx.__new__(ctx)     # (a context has no fields: its constructor sets none)
        if not found:
            new = gast.Name.__new__(gast.Name)
            new.__dict__.update(node.__dict__)
            new.ctx = ctx
            return new
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
