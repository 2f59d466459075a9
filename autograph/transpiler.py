"""The transpiler: parse → analyse → convert → compile → bind, with a cache.

One ``Transpiler`` owns the converter order and the caches. A conversion is cached
per code object (functions sharing code, such as closures made in a loop, share
it) and bound per function object to that function's live globals and closure
cells. The caches hold their keys weakly: a function the user drops is let go.
"""

from __future__ import annotations
import __future__

import ast
import copy
import gc
import threading
import types
import weakref
from dataclasses import dataclass, field

import gast

from autograph import parsing
from autograph import runtime as runtime_module
from autograph.analysis import local_names
from autograph.context import ConversionContext, ConversionOptions, all_identifiers
from autograph.converters import (
    break_statements,
    conditional_expressions,
    continue_statements,
    control_flow,
    lists,
    return_statements,
    slices,
)
from autograph.errors import ConversionError

# The order matters: each converter may rely on the syntax its predecessors removed.
# A converter module may declare NODE_TYPES, the gast node types it rewrites; it is
# skipped for functions that contain none of them.
DEFAULT_CONVERTERS = (
    continue_statements,
    break_statements,
    return_statements,
    lists,
    slices,
    control_flow,
    conditional_expressions,
)

DEFAULT_OPTIONS = ConversionOptions()
_RUNTIME_NAME = "ag__"
_FACTORY_NAME = "__autograph_factory__"
_CONVERTED_NAME = "__autograph_converted__"
_FUTURE_FLAGS = __future__.annotations.compiler_flag


@dataclass
class Program:
    """The converted form of one code object."""

    node: gast.FunctionDef        # the converted definition
    code: types.CodeType          # its compiled code
    filename: str
    runtime_name: str
    _source: str | None = field(default=None, repr=False)

    @property
    def source(self) -> str:
        """The generated source, as ``to_code`` shows it."""
        if self._source is None:
            self._source = ast.unparse(gast.gast_to_ast(self.node)) + "\n"
        return self._source


class Transpiler:
    """Converts functions, caching per code object and per function object."""

    def __init__(self, converters=DEFAULT_CONVERTERS):
        self.converters = tuple(converters)
        self._lock = threading.Lock()
        self._programs = weakref.WeakKeyDictionary()   # code -> {options: Program}
        self._functions = weakref.WeakKeyDictionary()  # function -> {options: function}
        self._runtime_cell = types.CellType(runtime_module)

    def convert(self, fn, options: ConversionOptions = DEFAULT_OPTIONS):
        """The converted function of the plain function ``fn``."""
        per_options = self._functions.get(fn)
        if per_options is not None:
            converted = per_options.get(options)
            if converted is not None:
                return converted
        converted = self._bind(self.program(fn, options), fn)
        with self._lock:
            return self._functions.setdefault(fn, {}).setdefault(options, converted)

    def program(self, fn, options: ConversionOptions = DEFAULT_OPTIONS) -> Program:
        """The converted program of ``fn``'s code, converting it on first use."""
        code = fn.__code__
        per_options = self._programs.get(code)
        if per_options is not None and options in per_options:
            return per_options[options]
        program = self._convert_code(fn, options)
        with self._lock:
            return self._programs.setdefault(code, {}).setdefault(options, program)

    def _convert_code(self, fn, options) -> Program:
        # Building trees allocates many small objects; a cyclic GC pass over the large
        # heap of a process that imported JAX would cost more than the whole conversion.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._convert_code_unguarded(fn, options)
        except RecursionError:
            code = fn.__code__
            raise ConversionError(
                f"'{code.co_name}' nests too deeply to convert (a very long `elif` chain "
                "or deeply nested blocks exhaust Python's recursion limit). Split it into "
                "smaller functions, or replace the `elif` chain by a lookup "
                "(a dict, or jnp.select / lax.switch for traced values).",
                code.co_filename, code.co_firstlineno) from None
        finally:
            if gc_was_enabled:
                gc.enable()

    def _convert_code_unguarded(self, fn, options) -> Program:
        parsed = parsing.parse_function(fn)
        node = parsed.node
        _reject_unsupported_function(node, parsed.filename)
        user_names = all_identifiers(node)
        runtime_name = _RUNTIME_NAME
        while runtime_name in user_names:
            runtime_name += "_"
        shadowing = set(local_names(node)) | set(fn.__code__.co_freevars)
        shadowing |= {n for n in user_names if n in fn.__globals__}
        for sub in gast.walk(node):
            if isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
                shadowing |= local_names(sub)
        ctx = ConversionContext(
            filename=parsed.filename, runtime_name=runtime_name, options=options,
            user_names=user_names, shadowing_names=frozenset(shadowing))
        present = {type(sub) for sub in gast.walk(node)}
        for converter in self.converters:
            triggers = getattr(converter, "NODE_TYPES", None)
            if triggers is None or not present.isdisjoint(triggers):
                node = converter.transform(node, ctx)
        code = _compile(node, parsed.filename, runtime_name, fn.__code__)
        return Program(node=node, code=code, filename=parsed.filename,
                       runtime_name=runtime_name)

    def _bind(self, program: Program, fn):
        """A function running ``program`` with ``fn``'s globals, closure and defaults."""
        cells_by_name = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
        closure = tuple(
            self._runtime_cell if name == program.runtime_name else cells_by_name[name]
            for name in program.code.co_freevars)
        converted = types.FunctionType(program.code, fn.__globals__, fn.__name__,
                                       fn.__defaults__, closure)
        converted.__kwdefaults__ = fn.__kwdefaults__
        converted.__qualname__ = fn.__qualname__
        converted.__doc__ = fn.__doc__
        converted.__module__ = fn.__module__
        converted.__annotations__ = dict(getattr(fn, "__annotations__", {}))
        converted.__dict__.update(fn.__dict__)
        converted.__autograph_converted__ = True
        return converted


def _reject_unsupported_function(node, filename):
    if isinstance(node, gast.AsyncFunctionDef):
        raise ConversionError(
            "async functions cannot be converted: JAX traces ordinary functions. Call "
            "converted functions from the coroutine instead.", filename, node.lineno,
            node.col_offset)
    for stmt in node.body:
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue   # a nested generator does not make this function one
        for sub in _same_scope(stmt):
            if isinstance(sub, (gast.Yield, gast.YieldFrom)):
                raise ConversionError(
                    f"'{node.name}' is a generator (it uses `yield`), which cannot be "
                    "converted: a staged computation returns all its results at once. "
                    "Collect the values in a list and return it, or mark the generator "
                    "with autograph.do_not_convert.", filename, sub.lineno, sub.col_offset)


def _same_scope(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in gast.iter_child_nodes(current)
                     if not isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef,
                                               gast.Lambda, gast.ClassDef)))


def _compile(node, filename, runtime_name, original_code) -> types.CodeType:
    """Compile the converted definition inside a factory whose parameters are the
    runtime and the original free variables, and return the definition's code."""
    params = [runtime_name, *original_code.co_freevars]
    # Defined under a name of its own: under the user's name the definition would
    # shadow the global it reads when it calls itself (recursion).
    node = copy.copy(node)
    node.name = _CONVERTED_NAME
    factory = gast.FunctionDef(
        name=_FACTORY_NAME,
        args=gast.arguments(
            args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                  for p in params],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]),
        body=[node, gast.Return(value=gast.Name(id=node.name, ctx=gast.Load(),
                                                annotation=None, type_comment=None))],
        decorator_list=[], returns=None, type_comment=None, type_params=[])
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(factory, attr, getattr(node, attr))
    module = gast.Module(body=[factory], type_ignores=[])
    tree = ast.fix_missing_locations(gast.gast_to_ast(module))
    flags = original_code.co_flags & _FUTURE_FLAGS
    module_code = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    factory_code = _code_constant(module_code, _FACTORY_NAME)
    code = _code_constant(factory_code, _CONVERTED_NAME)
    return code.replace(co_name=original_code.co_name,
                        co_qualname=original_code.co_qualname)


def _code_constant(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise AssertionError(f"compiled code has no function {name!r}")
