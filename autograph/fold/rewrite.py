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
import copy
import inspect
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
    make, arities, _ = _compiled(fn)
    if positional is None:
        positional = hook
    if not isinstance(positional, list):
        positional = [positional] * len(arities)
    copy = make(hook, positional, *_free_values(fn))
    copy.__defaults__ = fn.__defaults__
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def stepping_copy(fn, hook, sites, memo, fallback, running, params):
    """The *stepping* copy of ``fn``: the recording copy (its calls through ``hook``
    and ``sites``) with the recursion step's memo in its own frame, called as a call
    site's hook, ``copy(f, *args)``, so a step of the recursion costs one Python frame,
    not two (the site's and the copy's). A call of another ``f`` goes to
    ``fallback``; a call whose memo entry (``memo[(*ids of args,)]``, or ``memo[id(node)]``
    for a step ``fn(params, node)``: ``recording.memo_key``) is ``running``
    too; a hit returns the entry's result; otherwise the body runs and each return
    stores ``(result, *args)``:

        def encode(p, node):             def __fold_recording__(f, p, node):
            ...                              if f is not FN: return FALLBACK(f, p, node)
            return cell(...)       ->        key = ID(node) if p is P else (ID(p), ID(node))
                                             hit = MEMO.get(key) ... (a hit: its result)
                                             out = __fold_sites__[3](cell, ...)
                                             MEMO[key] = (out, p, node); return out

    None where ``fn`` does not allow it: a generator, ``*args``, a parameter the body
    rebinds. Call it only for calls of all the positional parameters
    (:func:`stepping_arity`)."""
    factory = _compiled(fn)[2]
    if factory is None:
        return None
    return factory(hook, sites, memo, fn, running, fallback, id, memo.get, params,
                   *_free_values(fn))


def stepping_arity(fn):
    """The positional arity of the calls a :func:`stepping_copy` of ``fn`` takes
    (None: it has none)."""
    return fn.__code__.co_argcount if _compiled(fn)[2] is not None else None


def _free_values(fn):
    values = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            values.append(cell.cell_contents)
        except ValueError:
            raise ConversionError(
                f"autograph.fold: {fn.__qualname__} reads `{name}` before it is assigned",
                fn.__code__.co_filename, fn.__code__.co_firstlineno) from None
    return values


def _compiled(fn):
    """``fn``'s factory, site arities and stepping factory, compiled on the first call."""
    compiled = _factories.get(fn) if isinstance(fn, types.FunctionType) else None
    if compiled is None:
        compiled = _factories[fn] = _factory(fn)
    return compiled


def _factory(fn):
    """The compiled ``__fold_factory__(hook, sites, *free variables)`` of ``fn``'s
    copy, its sites' arities, and the factory of its stepping copy (or None)."""
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
    stepping = _stepping(copy.deepcopy(definition), fn)
    make = _compile_factory(definition, fn, parsed.filename, [HOOK, SITES])
    if stepping is not None:
        stepping = _compile_factory(stepping, fn, parsed.filename, [HOOK, SITES, *_STEP])
    return make, tuple(routed.arities), stepping


def _compile_factory(definition, fn, filename, names):
    """``__fold_factory__(*names, *free variables)``, returning ``definition``."""
    factory = ast.FunctionDef(
        name="__fold_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=name) for name in names]
                           + [ast.arg(arg=name) for name in fn.__code__.co_freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(factory_code, fn.__globals__)


# The stepping copy's own names: memo, the function, the running mark, the fallback, id,
# the memo's get, the recording's parameters placeholder.
_STEP = ["__fold_memo__", "__fold_fn__", "__fold_running__", "__fold_fallback__",
         "__fold_id__", "__fold_memo_get__", "__fold_params__"]


def _stepping(definition, fn):
    """``definition`` (the routed copy) made a stepping copy, or None where ``fn``
    does not allow it (see :func:`stepping_copy`)."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_GENERATOR | inspect.CO_COROUTINE
                        | inspect.CO_ASYNC_GENERATOR):
        return None
    params = [a.arg for a in definition.args.posonlyargs + definition.args.args]
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and node.id in params and not isinstance(
                node.ctx, ast.Load):
            return None            # the body rebinds a parameter: the key's objects differ
        if isinstance(node, ast.Nonlocal) and set(node.names) & set(params):
            return None
    # walked above before any rewriting: the definition's own parameters only
    def name(n):
        return ast.Name(id=n, ctx=ast.Load())

    def call(f, *args):
        return ast.Call(func=name(f) if isinstance(f, str) else f, args=list(args),
                        keywords=[])

    args = [name(p) for p in params]
    fallback = ast.Return(value=call("__fold_fallback__", name("__fold_f__"), *args))
    key = ast.Tuple(elts=[call("__fold_id__", a) for a in args], ctx=ast.Load())
    if len(args) == 2:      # a step fn(params, node): keyed by id(node) (memo_key)
        key = ast.IfExp(test=ast.Compare(left=args[0], ops=[ast.Is()],
                                         comparators=[name("__fold_params__")]),
                        body=call("__fold_id__", args[1]), orelse=key)
    prologue = [
        ast.If(test=ast.Compare(left=name("__fold_f__"), ops=[ast.IsNot()],
                                comparators=[name("__fold_fn__")]),
               body=[fallback], orelse=[]),
        ast.Assign(targets=[ast.Name(id="__fold_key__", ctx=ast.Store())], value=key),
        ast.Assign(targets=[ast.Name(id="__fold_hit__", ctx=ast.Store())],
                   value=call("__fold_memo_get__", name("__fold_key__"))),
        ast.If(test=ast.Compare(left=name("__fold_hit__"), ops=[ast.IsNot()],
                                comparators=[ast.Constant(None)]),
               body=[ast.If(test=ast.Compare(left=name("__fold_hit__"), ops=[ast.Is()],
                                             comparators=[name("__fold_running__")]),
                            body=[fallback], orelse=[]),
                     ast.Return(value=ast.Subscript(value=name("__fold_hit__"),
                                                    slice=ast.Constant(0),
                                                    ctx=ast.Load()))],
               orelse=[])]
    body = []
    for statement in definition.body:      # a return becomes three statements
        out = _StoreReturns(args).visit(statement)
        body.extend(out if isinstance(out, list) else [out])
    stored = _StoreReturns(args).store(ast.Constant(None))
    for statement in prologue + stored:
        ast.copy_location(statement, definition)
    definition.body = prologue + body + stored
    first = ast.arg(arg="__fold_f__")
    if definition.args.posonlyargs:
        definition.args.posonlyargs.insert(0, first)
    else:
        definition.args.args.insert(0, first)
    return definition


class _StoreReturns(ast.NodeTransformer):
    """``return x`` -> ``__fold_out__ = x; __fold_memo__[__fold_key__] = (__fold_out__,
    *args); return __fold_out__`` (not inside nested definitions)."""

    def __init__(self, args):
        self.args = args

    def store(self, value):
        out = ast.Name(id="__fold_out__", ctx=ast.Load())
        return [
            ast.Assign(targets=[ast.Name(id="__fold_out__", ctx=ast.Store())], value=value),
            ast.Assign(targets=[ast.Subscript(value=ast.Name(id="__fold_memo__",
                                                             ctx=ast.Load()),
                                              slice=ast.Name(id="__fold_key__",
                                                             ctx=ast.Load()),
                                              ctx=ast.Store())],
                       value=ast.Tuple(elts=[out, *self.args], ctx=ast.Load())),
            ast.Return(value=out)]

    def visit_Return(self, node):
        statements = self.store(node.value or ast.Constant(None))
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef
