"""The recording copy of a user's function: every call goes through the recorder.

Recording runs the user's own recursion over a tree in plain Python, with
placeholders standing for the arrays. To see each call that receives a
placeholder (``cell(p, h_left, h_right)``, ``jnp.tanh(h)``) as one node, the
recording copy routes every call through one hook, and nothing else changes:

    def encode(p, node):                      def encode(p, node):
        if node.is_leaf:                          if node.is_leaf:
            return leaf(p, node.word)     ->          return __fold_call__(leaf, p, node.word)
        return cell(p, encode(p, node.l),         return __fold_call__(cell, p,
                    encode(p, node.r))                __fold_call__(encode, p, node.l),
                                                      __fold_call__(encode, p, node.r))

The copy is compiled once per function, with the user's file name and line
numbers, so an error raised while recording names the user's line. Each recorder
binds its own copy to its hook; free variables are bound to their values then
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
POSITIONAL_HOOK = "__fold_call_args__"     # the calls without keyword arguments

_factories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _RouteCalls(ast.NodeTransformer):
    """``f(a, *b, k=c)`` -> ``__fold_call__(f, a, *b, k=c)``; ``f(a, *b)`` ->
    ``__fold_call_args__(f, a, *b)``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = HOOK if node.keywords else POSITIONAL_HOOK
        hook = ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node.func)
        return ast.copy_location(
            ast.Call(func=hook, args=[node.func, *node.args], keywords=node.keywords), node)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node            # a lambda inside the function runs as written

    def visit_FunctionDef(self, node):   # nested definitions run as written
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def recording_copy(fn, hook, positional=None):
    """The copy of the Python function ``fn`` whose calls all go through ``hook``
    (those without keyword arguments through ``positional``, where given: a hook
    without ``**kwargs`` saves a dict per call).

    The copy's code is compiled once per function (``_factory``); each call binds
    a fresh copy to ``hook`` and the current values of ``fn``'s free variables
    (a function object, no parsing). Raises ``ConversionError`` when the source
    of ``fn`` cannot be read."""
    make = _factories.get(fn) if isinstance(fn, types.FunctionType) else None
    if make is None:
        make = _factories[fn] = _factory(fn)
    values = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values.append(cell.cell_contents)
        except ValueError:
            raise ConversionError(
                f"autograph.fold: {fn.__qualname__} reads `{name}` before it is assigned",
                fn.__code__.co_filename, fn.__code__.co_firstlineno) from None
    copy = make(hook, positional or hook, *values)
    copy.__defaults__ = fn.__defaults__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _factory(fn):
    """The compiled ``__fold_factory__(hook, *free variables)`` of ``fn``'s copy."""
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
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=HOOK), ast.arg(arg=POSITIONAL_HOOK)]
                           + [ast.arg(arg=name) for name in fn.__code__.co_freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, parsed.filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(factory_code, fn.__globals__)
