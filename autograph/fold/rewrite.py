"""The recording copy of a user's function: every call goes through the recorder.

Recording runs the user's own recursion over a tree in plain Python, with
placeholders standing for the arrays. To see each call that receives a
placeholder (``cell(p, h_left, h_right)``, ``jnp.tanh(h)``) as one node, the
recording copy routes every call through a hook, and nothing else changes. A call
without keyword arguments goes to its own call site's entry of the list
``__fold_sites__`` (so that each site can be specialised to what it sees,
``recording_sites.py``), one with keywords to ``__fold_call__``:

    def encode(p, node):                  def encode(p, node):
        if node.is_leaf:                      if node.is_leaf:
            return leaf(p, node.word)  ->         return __fold_sites__[0](leaf, p, node.word)
        return cell(p, encode(p, node.l),     return __fold_sites__[3](cell, p,
                    encode(p, node.r))            __fold_sites__[1](encode, p, node.l),
                                                  __fold_sites__[2](encode, p, node.r))

The copy is compiled once per function, with the user's file name and line
numbers, so an error raised while recording names the user's line. Each recorder
binds its own copy to its hooks; free variables are bound to their values then
(a recording is a snapshot of its tree's run).
"""

from __future__ import annotations

import ast
import types
import weakref

import gast

from autograph import parsing
from autograph.errors import ConversionError

HOOK = "__fold_call__"
SITES = "__fold_sites__"     # the calls without keyword arguments: one hook per call site

_factories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _RouteCalls(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``__fold_call__(f, a, *b, k=c)``; the ``i``-th call without
    keyword arguments ``f(a, b)`` -> ``__fold_sites__[i](f, a, b)``. ``arities``: the
    number of positional arguments of each site (None where one is starred)."""

    def __init__(self):
        self.arities: list[int | None] = []

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if node.keywords:
            hook = ast.Name(id=HOOK, ctx=ast.Load())
        else:
            hook = ast.Subscript(value=ast.Name(id=SITES, ctx=ast.Load()),
                                 slice=ast.Constant(len(self.arities)), ctx=ast.Load())
            starred = any(isinstance(a, ast.Starred) for a in node.args)
            self.arities.append(None if starred else len(node.args))
        hook = ast.copy_location(hook, node.func)
        return ast.copy_location(
            ast.Call(func=hook, args=[node.func, *node.args], keywords=node.keywords), node)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node            # a lambda inside the function runs as written

    def visit_FunctionDef(self, node):   # nested definitions run as written
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def site_arities(fn) -> tuple:
    """The positional arity of each call site without keyword arguments in ``fn``'s
    copy, in the order of ``__fold_sites__`` (None where an argument is starred)."""
    return _compiled(fn)[1]


def recording_copy(fn, hook, positional=None):
    """The copy of the Python function ``fn`` whose calls all go through ``hook``;
    those without keyword arguments go through ``positional`` where given (a hook
    without ``**kwargs`` saves a dict per call): one callable for every site, or a
    list with one per site (``site_arities``), read at each call, so that a hook
    may replace itself in the list.

    The copy's code is compiled once per function (``_factory``); each call binds
    a fresh copy to the hooks and the current values of ``fn``'s free variables
    (a function object, no parsing). Raises ``ConversionError`` when the source
    of ``fn`` cannot be read."""
    make, arities = _compiled(fn)
    if positional is None:
        positional = hook
    if not isinstance(positional, list):
        positional = [positional] * len(arities)
    values = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values.append(cell.cell_contents)
        except ValueError:
            raise ConversionError(
                f"autograph.fold: {fn.__qualname__} reads `{name}` before it is assigned",
                fn.__code__.co_filename, fn.__code__.co_firstlineno) from None
    copy = make(hook, positional, *values)
    copy.__defaults__ = fn.__defaults__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _compiled(fn):
    """``fn``'s factory and site arities, compiled on the first call."""
    compiled = _factories.get(fn) if isinstance(fn, types.FunctionType) else None
    if compiled is None:
        compiled = _factories[fn] = _factory(fn)
    return compiled


def _factory(fn):
    """The compiled ``__fold_factory__(hook, sites, *free variables)`` of ``fn``'s
    copy, and its sites' arities."""
    if not isinstance(fn, types.FunctionType):
        raise ConversionError(f"autograph.fold records plain Python functions; got {fn!r}")
    parsed = parsing.parse_function(fn)
    definition = gast.gast_to_ast(parsed.node)
    if not isinstance(definition, ast.FunctionDef):
        raise ConversionError("autograph.fold records `def` functions and lambdas",
                              parsed.filename, fn.__code__.co_firstlineno)
    definition.decorator_list = []
    routed = _RouteCalls()
    definition.body = [routed.visit(statement) for statement in definition.body]
    # Not the user's name: inside the factory it would shadow the function the
    # recursion calls by name (which must stay the original, to be recognised).
    definition.name = "__fold_recording__"
    factory = ast.FunctionDef(
        name="__fold_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=HOOK), ast.arg(arg=SITES)]
                           + [ast.arg(arg=name) for name in fn.__code__.co_freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, parsed.filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(factory_code, fn.__globals__), tuple(routed.arities)
