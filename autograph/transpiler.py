"""The transpiler: parse → analyse → convert → compile → bind, with a cache.

One ``Transpiler`` owns the converter order and the caches. A conversion is cached
per code object (functions sharing code, such as closures made in a loop, share
it) and bound per function object to that function's live globals and closure
cells. The caches hold their keys weakly: a function the user drops is let go.

Binding is done on every call (``instantiate``: one ``FunctionType``, about a
microsecond) rather than cached per function: a cached converted function would
hold the original's globals and closure, which often hold the original itself,
and so keep alive the very key a weak cache must let go.

The transpiler also answers ``ag__.converted_call``: whether a callee is the
user's code (``callee``, ``callable_kind``), judged by its ``CallPolicy``, and
gives generated code its runtime namespace (``ag__``), whose ``converted_call``
converts callees with this transpiler and the caller's options.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import collections
import gc
import inspect
import linecache
import operator
import re
import threading
import types
import weakref
from dataclasses import dataclass, field

import gast

from autograph import ast_bridge, ast_in_place, parsing
from autograph import disk_cache as disk_cache_module
from autograph import runtime as runtime_module
from autograph.analysis import annos, first_yield, local_names
from autograph.call_policy import AS_IS, CallPolicy, is_marked_do_not_convert
from autograph.context import UNKNOWN, ConversionContext, ConversionOptions, all_identifiers
from autograph.converters import (
    asserts,
    augmented_assignments,
    break_statements,
    builtin_functions,
    call_trees,
    conditional_expressions,
    continue_statements,
    control_flow,
    directives,
    joined_numbers,
    lists,
    locals_calls,
    logical_expressions,
    print_function,
    raises,
    return_statements,
    slices,
    stdout_assignments,
    try_statements,
    unstaged_expressions,
    with_statements,
)
from autograph.errors import ConversionError
from autograph.guarded_lines import guarded_lines, without_tries
from autograph.headroom import headroom
from autograph.runtime import try_lines
from autograph.runtime.calls import make_converted_call
from autograph.walk import walk, walk_list

# The order matters: each converter may rely on the syntax its predecessors removed.
# A converter module may declare what it rewrites (NODE_TYPES, NAMES: ``_declared``);
# it is skipped for functions that contain none of it. It may also define
# ``needed(nodes, ctx)`` (whether the walk ``nodes`` of the tree holds something it
# rewrites) and ``rewrite(node, ctx, nodes)`` (its ``transform``, given that walk):
# then it is skipped where it is not needed, and the walk, still current, serves
# the next such converter (one walk of the tree less for each).
DEFAULT_CONVERTERS = (
    directives,
    raises,
    try_statements,
    continue_statements,
    break_statements,
    return_statements,
    lists,
    builtin_functions,
    slices,
    call_trees,
    locals_calls,
    augmented_assignments,
    joined_numbers,
    control_flow,
    conditional_expressions,
    logical_expressions,
    asserts,
    stdout_assignments,
    print_function,
    unstaged_expressions,
    with_statements,
)

# What a function's Python twin is converted with (``PythonTwin``): its calls, and
# item assignment (``x[i] = v`` on a JAX array is ``x.at[i].set(v)`` in Python mode
# too; lists, dicts and NumPy arrays still change in place). ``locals_calls`` keeps
# the runtime's name out of what ``locals()`` shows.
PYTHON_TWIN_CONVERTERS = (slices, call_trees, locals_calls)

DEFAULT_OPTIONS = ConversionOptions()
_RUNTIME_NAME = "ag__"
_FACTORY_NAME = "__autograph_factory__"
_CONVERTED_NAME = "__autograph_converted__"
_FUTURE_FLAGS = __future__.annotations.compiler_flag
_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


@dataclass(frozen=True)
class PythonTwin:
    """Options asking for a function's Python twin rather than its converted form.

    Where no JAX trace is active when a converted function is called, nothing it
    computes can be traced (a trace its callees begin, under ``jax.jit`` say, ends
    before they return), and every runtime operator would take its Python path:
    the function's own statements as Python runs them. Its twin is that: the
    user's code compiled as written, its calls alone going through
    ``converted_call`` (so a user's function handed to ``jax.jit``, ``lax.scan``...
    from Python mode is still converted, fully, and callees run as their own
    twins). Both are compiled from the same source: the twin is chosen per call,
    by ``autograph.convert``'s wrapper, when the trace state is clean.
    """

    options: ConversionOptions = DEFAULT_OPTIONS


@dataclass
class Program:
    """The converted form of one code object."""

    # The converted definition, where kept (``store_source``, or once
    # ``Transpiler.tree`` asked for it); else None: ``Transpiler.tree`` converts again
    # to show it. (Kept for every program, the trees would outlive their conversion,
    # and the garbage collection their thousands of objects set off after each
    # conversion, with JAX's callback on every collection, was a twentieth of a cold
    # conversion.)
    node: gast.FunctionDef | None
    code: types.CodeType          # its compiled code
    filename: str
    runtime_name: str
    # Where each free variable of ``code`` comes from: an index into the original
    # function's closure, or -1 for the runtime.
    cell_plan: tuple = ()
    runtime_cell: types.CellType | None = field(default=None, repr=False)
    # How ``instantiate`` builds the closure: a constant tuple when only the runtime
    # is free, else a function of the original closure.
    closure: tuple | None = field(default=None, repr=False)
    closure_of: object = field(default=None, repr=False)
    is_lambda: bool = False
    # A Python twin calling itself by its global name (``call_trees.self_call_names``):
    # the options its callee must have been converted with, else None.
    self_call_options: ConversionOptions | None = field(default=None, repr=False)
    _source: str | None = field(default=None, repr=False)

    @property
    def source(self) -> str:
        """The generated source, as ``to_code`` shows it."""
        if self._source is None:
            if self.node is None:
                raise ValueError("this program keeps no tree: ask Transpiler.source "
                                 "for its source")
            self._source = _unparse(self.node, self.is_lambda)
        return self._source


class IdentityWeakMap:
    """A map keyed by object identity that does not keep its keys alive.

    Code objects compare equal when their bytecode, names and constants are equal
    (even across files), so the caches key on identity, not equality. ``values``
    maps ``id(key)`` to the value. Each entry keeps a weak reference to its key whose
    callback removes the entry when the key dies, before the key's memory, and so
    its ``id``, can be reused: ``values`` only holds entries of live keys, and a
    reader holding a key finds its own entry or none, without a lock. Writers hold
    the owner's lock.
    """

    __slots__ = ("values", "_refs")

    def __init__(self):
        self.values = {}
        self._refs = {}      # id(key) -> weak reference to key (its callback forgets)

    def get(self, key, default=None):
        return self.values.get(id(key), default)

    def setdefault(self, key, value):
        values, refs, ident = self.values, self._refs, id(key)
        if ident in values:
            return values[ident]

        def forget(ref):
            if refs.get(ident) is ref:
                del refs[ident]
                values.pop(ident, None)

        refs[ident] = weakref.ref(key, forget)
        values[ident] = value
        return value

    def clear(self):
        self.values.clear()
        self._refs.clear()

    def __len__(self):
        return len(self.values)


class Transpiler:
    """Converts functions, caching per code object; binds per function object.

    The caches key on code objects and types, weakly and by identity: a function
    the user drops is let go together with its conversion. Readers take no lock;
    writers take ``_lock`` and keep the first result when threads race.
    """

    def __init__(self, converters=DEFAULT_CONVERTERS, policy: CallPolicy | None = None, *,
                 store_source: bool = False,
                 disk_cache: disk_cache_module.DiskCache | None = None):
        self.converters = tuple(converters)
        self.policy = policy if policy is not None else CallPolicy()
        # Debugging: compile from the generated source, kept in linecache (see set_debug).
        self.store_source = store_source
        # Converted code kept across processes (``autograph.disk_cache``); used with
        # the default converters only, and not while ``store_source`` is on.
        self.disk_cache = disk_cache
        self._lock = threading.Lock()
        self._programs = IdentityWeakMap()          # code -> {options: Program}
        self._converted_codes = IdentityWeakMap()   # every code object we compiled -> True
        self._callees = {}        # options -> IdentityWeakMap(code -> Program | AS_IS)
        self._callable_types = IdentityWeakMap()    # type -> its __call__ function | AS_IS
        self._runtime_cells = {}                    # options -> cell holding the runtime
        self.policy.on_change(self._forget_decisions)

    # -- public ------------------------------------------------------------------------

    def convert(self, fn, options: ConversionOptions = DEFAULT_OPTIONS):
        """The converted function of the plain function ``fn`` (a new function object
        bound to ``fn``'s globals, closure and defaults; its conversion is cached)."""
        converted = self.instantiate(self.program(fn, options), fn)
        converted.__doc__ = fn.__doc__
        converted.__module__ = fn.__module__
        converted.__annotations__ = dict(getattr(fn, "__annotations__", {}))
        converted.__dict__.update(fn.__dict__)
        converted.__autograph_converted__ = True
        return converted

    def program(self, fn, options: ConversionOptions = DEFAULT_OPTIONS) -> Program:
        """The converted program of ``fn``'s code, converting it on first use."""
        return self._program_of(fn, options)

    def _program_of(self, fn, options, keep_tree=False) -> Program:
        """``program``; ``keep_tree``: a conversion made now keeps its tree."""
        code = fn.__code__
        key = (options, self.store_source)
        per_options = self._programs.get(code)
        if per_options is not None:
            program = per_options.get(key)
            if program is not None:
                return program
        program = self._convert_code(fn, options, keep_tree)
        with self._lock:
            per_options = self._programs.setdefault(code, {})
            program = per_options.setdefault(key, program)
            for sub in _code_objects(program.code):
                self._converted_codes.setdefault(sub, True)
            return program

    def source(self, fn, options: ConversionOptions = DEFAULT_OPTIONS) -> str:
        """The generated source of ``fn``'s conversion, as ``to_code`` shows it."""
        self.tree(fn, options)
        return self.program(fn, options).source

    def tree(self, fn, options: ConversionOptions = DEFAULT_OPTIONS):
        """The converted definition of ``fn`` (a gast tree). A conversion keeps its
        tree where this (or ``source``, or ``store_source``) made it; for one made
        otherwise, or read from the disk cache, ``fn`` is converted again (without
        the disk cache) to give it, and the program keeps it from then on."""
        program = self._program_of(fn, options, keep_tree=True)
        if program.node is None:
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                with headroom():
                    fresh = self._convert_code_unguarded(fn, options, use_disk=False,
                                                         keep_tree=True)
            finally:
                if gc_was_enabled:
                    gc.enable()
            program.node = fresh.node
        return program.node

    def is_converted_code(self, code: types.CodeType) -> bool:
        """Whether ``code`` is generated code (a converted function or its helpers)."""
        return self._converted_codes.get(code) is not None

    def instantiate(self, program: Program, fn):
        """A function running ``program`` with ``fn``'s globals, closure and defaults."""
        if program.self_call_options is not None:
            return _instantiate_self_calling(program, fn)
        closure_of = program.closure_of
        converted = _function_type(
            program.code, fn.__globals__, fn.__name__, fn.__defaults__,
            program.closure if closure_of is None else closure_of(fn.__closure__))
        if fn.__kwdefaults__ is not None:
            converted.__kwdefaults__ = fn.__kwdefaults__
        return converted

    # -- calls from converted code (``ag__.converted_call``) ---------------------------

    def known_callees(self, options):
        """A lookup ``id(code) -> Program | AS_IS | None``: the decision ``callee`` took
        for functions with that code under ``options``, or None if it has not yet.
        Lock-free, and keyed by ``id`` (one builtin call): the fast path of
        ``converted_call``. The caller holds ``code``, so the id is its own."""
        return self._callee_map(options).values.get

    def known_callable_kinds(self):
        """A lookup ``id(cls) -> AS_IS | other | None``: ``AS_IS`` when
        ``callable_kind`` decided that objects of class ``cls`` are called as they
        are, None if it has not decided yet. Lock-free, like ``known_callees``."""
        return self._callable_types.values.get

    def callee(self, fn, options):
        """For the Python function ``fn`` called from converted code: its ``Program``,
        or ``AS_IS`` when it is library code, already converted, a generator or
        coroutine, or has no source to read (made by ``exec``): those run as they
        are, as Python would run them. Cached per code."""
        decisions = self._callee_map(options)
        code = fn.__code__
        decision = decisions.get(code)
        if decision is not None:
            return decision
        if (self._converted_codes.get(code) is not None
                or code.co_flags & _NOT_CONVERTIBLE_FLAGS
                or self.policy.is_library_function(fn)
                or not parsing.has_source(fn)):   # (defined by exec: run as it is)
            decision = AS_IS
        else:
            decision = self.program(fn, options)
        with self._lock:
            return decisions.setdefault(code, decision)

    def callable_kind(self, cls):
        """For an object of class ``cls`` called from converted code: the Python
        function its ``__call__`` runs, or ``AS_IS`` (classes, builtins, library)."""
        kind = self._callable_types.get(cls)
        if kind is not None:
            return kind if kind is AS_IS else _class_attr(cls, "__call__")
        call = _class_attr(cls, "__call__")
        if isinstance(call, types.FunctionType) and not self.policy.is_library_function(call):
            kind = _CONVERT_CALL
        else:
            kind = AS_IS
        with self._lock:
            self._callable_types.setdefault(cls, kind)
        return AS_IS if kind is AS_IS else call

    def _callee_map(self, options):
        decisions = self._callees.get(options)
        if decisions is None:
            with self._lock:
                decisions = self._callees.setdefault(options, IdentityWeakMap())
        return decisions

    def _forget_decisions(self):
        with self._lock:
            for decisions in self._callees.values():
                decisions.clear()
            self._callable_types.clear()

    def _runtime_cell(self, options):
        """A cell holding the runtime as generated code sees it (``ag__``): the
        operators the ``autograph.runtime`` package exports (its ``__all__``) plus
        this transpiler's ``converted_call`` for ``options``."""
        cell = self._runtime_cells.get(options)
        if cell is None:
            namespace = types.ModuleType(runtime_module.__name__, runtime_module.__doc__)
            namespace.__dict__.update(_runtime_exports())
            namespace.converted_call = make_converted_call(
                self, options,
                options.options if isinstance(options, PythonTwin) else options,
                PythonTwin)
            with self._lock:
                cell = self._runtime_cells.setdefault(options, types.CellType(namespace))
        return cell

    # -- conversion --------------------------------------------------------------------

    def _convert_code(self, fn, options, keep_tree=False) -> Program:
        # Building trees allocates many small objects; a cyclic GC pass over the large
        # heap of a process that imported JAX would cost more than the whole conversion.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with headroom():    # the same room to recurse, however deep the caller is
                return self._convert_code_unguarded(fn, options, keep_tree=keep_tree)
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

    def _convert_code_unguarded(self, fn, options, use_disk=True,
                                keep_tree=False) -> Program:
        cache = self.disk_cache if use_disk else None
        if cache is not None and (self.store_source
                                  or self.converters != DEFAULT_CONVERTERS):
            cache = None
        lines = parsing.file_lines(fn)
        key = None
        if cache is not None:
            key = cache.key(fn, lines, options, self.policy)
            found = cache.load(key)
            if found is not None:
                code, runtime_name, guarded = found
                if not isinstance(options, PythonTwin):
                    try_lines.record(code.co_filename, guarded)
                return self._program(None, code, code.co_filename, runtime_name, fn,
                                     options, fn.__code__.co_name == "<lambda>")
        parsed = parsing.parse_function(fn, lines)
        node = parsed.node
        _reject_unsupported_function(node, parsed.filename, fn.__code__)
        twin = isinstance(options, PythonTwin)
        nodes = parsed.nodes if parsed.nodes is not None else walk_list(node)
        ctx = self._context(fn, node, parsed.filename, options.options if twin else options,
                            twin, nodes)
        if twin and _defines_functions(node, ctx):
            # A function or lambda defined here may be handed to jax.jit or lax.scan
            # and traced: it must be converted code, so this function has no twin.
            if keep_tree:
                self.tree(fn, options.options)
            return self.program(fn, options.options)
        present = {sub.__class__ for sub in nodes}
        current = nodes     # list(walk(node)) while no converter has run since
        user_names = ctx.user_names
        for converter in PYTHON_TWIN_CONVERTERS if twin else self.converters:
            try:
                node_types, names, rewrites, on_source = _DECLARED[converter]
            except (KeyError, TypeError):
                node_types, names, rewrites, on_source = _declared(converter)
            if ((node_types is not None and present.isdisjoint(node_types))
                    or (names is not None and user_names.isdisjoint(names))):
                continue          # it rewrites nothing this function holds
            if not rewrites:
                node = converter.transform(node, ctx)
            elif current is None and on_source:
                if converter.needed(nodes, ctx):
                    node = converter.rewrite(node, ctx, None)
                    current = None
                continue          # (unchanged: ``current`` stays None)
            else:
                if current is None:
                    current = walk_list(node)
                if not converter.needed(current, ctx):
                    continue      # the tree is unchanged: ``current`` still walks it
                node = converter.rewrite(node, ctx, current)
            current = None
        filename = parsed.filename
        if self.store_source:
            node, filename = _reparse_from_source(node, fn, parsed.filename)
        # (a tree no one keeps is compiled as it is: its nodes become the ast tree)
        in_place = ast_in_place.AVAILABLE and not (keep_tree or self.store_source)
        code, guarded = _compile(node, filename, ctx.runtime_name, fn.__code__,
                                 ctx.generated_names(),
                                 tries=not present.isdisjoint((gast.Try, gast.TryStar)),
                                 in_place=in_place)
        if not twin:    # (a twin is never traced)
            try_lines.record(filename, guarded)
        if key is not None:
            cache.store_later(key, code, ctx.runtime_name, guarded)
        return self._program(node if keep_tree or self.store_source else None, code,
                             filename, ctx.runtime_name, fn, options, parsed.is_lambda)

    def _program(self, node, code, filename, runtime_name, fn, options, is_lambda):
        freevars = fn.__code__.co_freevars
        own = dict(zip(call_trees.self_call_names(runtime_name), (_SELF, _CALLEE),
                       strict=True))
        plan = tuple(-1 if name == runtime_name else own[name] if name in own
                     else freevars.index(name) for name in code.co_freevars)
        if _CALLEE in plan:
            return Program(node=node, code=code, filename=filename,
                           runtime_name=runtime_name, cell_plan=plan,
                           runtime_cell=self._runtime_cell(options), is_lambda=is_lambda,
                           self_call_options=options.options)
        runtime_cell = self._runtime_cell(options)
        closure, closure_of = _closure_builder(plan, runtime_cell)
        return Program(node=node, code=code, filename=filename,
                       runtime_name=runtime_name, cell_plan=plan,
                       runtime_cell=runtime_cell, closure=closure, closure_of=closure_of,
                       is_lambda=is_lambda)

    def _context(self, fn, node, filename, options, twin=False,
                 nodes=None) -> ConversionContext:
        """What the converters know about ``fn``, parsed as ``node`` (``nodes``:
        ``list(walk(node))`` if the caller has it): the names it uses and binds, and
        what the others are bound to now. For a Python twin, a
        name bound to a function ``autograph.convert`` made is not library code: its
        calls go through ``converted_call``, which runs the twin of the function it
        converts (without the wrapper's frame, so a recursion keeps the original's
        depth)."""
        user_names = all_identifiers(node, nodes)
        runtime_name = _RUNTIME_NAME
        while runtime_name in user_names or not user_names.isdisjoint(
                call_trees.self_call_names(runtime_name)):
            runtime_name += "_"
        own = local_names(node)
        locals_of = {id(node): own}   # each function's (and lambda's) local names
        local = set(own)
        definitions = _DEFINITION_CLASSES
        for sub in walk(node) if nodes is None else nodes:
            if sub.__class__ in definitions and sub is not node:
                names = locals_of[id(sub)] = local_names(sub)
                local |= names
        bound = local | set(fn.__code__.co_freevars)
        globals_ = fn.__globals__
        # (the names the module binds, by one set operation where it is a plain dict)
        in_globals = (user_names & globals_.keys() if type(globals_) is dict
                      else {n for n in user_names if n in globals_})
        shadowing = bound | in_globals
        is_library_value = self.policy.is_library_value
        library_names = frozenset(
            n for n in in_globals - bound
            if is_library_value(globals_[n])
            and not (twin and _is_convert_wrapper(globals_[n])))
        return ConversionContext(
            filename=filename, runtime_name=runtime_name, options=options,
            user_names=user_names, shadowing_names=frozenset(shadowing),
            library_names=library_names, namespace=_namespace(fn),
            local_names=frozenset(local),
            parsed_locals=(nodes, locals_of),
            self_call=(fn.__code__.co_name if twin and fn.__code__.co_name in user_names
                       and fn.__code__.co_name not in bound else None))


def _runtime_exports() -> dict:
    """``name -> value`` of each name ``autograph.runtime`` exports, as the module
    holds it now (a test that patches the runtime sees its patch). One dict per
    process, shared by every runtime namespace (which copies it): read again with
    one ``itemgetter`` over the module's dict and made anew only where a value is
    not the one it holds (compared by identity)."""
    global _EXPORTS
    names = runtime_module.__all__
    if _EXPORTS is None or _EXPORTS[0] is not names:
        _EXPORTS = (names, tuple(names), operator.itemgetter(*names), None, None)
    _, keys, read, values, exports = _EXPORTS
    try:
        now = read(vars(runtime_module))
    except KeyError:      # (a name the module makes on first access)
        return {name: getattr(runtime_module, name) for name in names}
    if values is None or not all(map(operator.is_, now, values)):
        exports = dict(zip(keys, now, strict=True))
        _EXPORTS = (names, keys, read, now, exports)
    return exports


# (__all__, its names, their itemgetter, the values last read, the dict made of them)
_EXPORTS = None


def _declared(converter):
    """``(NODE_TYPES, NAMES, whether it defines rewrite, NEEDED_ON_SOURCE)`` of
    ``converter`` (None or False for what it does not declare), found once per
    converter (``_DECLARED``). A converter module may declare ``NODE_TYPES`` (the
    node types it rewrites) and ``NAMES`` (the names whose calls it rewrites); it is
    skipped for a function that holds none of one of them. ``NEEDED_ON_SOURCE``: its
    ``needed`` may be asked of the walk taken of the function as parsed (the list of
    its nodes then, some changed in place since), where the tree has changed since:
    no converter before it makes what it looks for, so that walk says yes wherever
    the tree's own would; its ``rewrite`` changes nothing where there is nothing to
    rewrite, and takes no walk. (A walk of the tree less.)"""
    declared = (getattr(converter, "NODE_TYPES", None), getattr(converter, "NAMES", None),
                getattr(converter, "rewrite", None) is not None,
                getattr(converter, "NEEDED_ON_SOURCE", False))
    try:
        _DECLARED[converter] = declared
    except TypeError:     # (a converter object that cannot be a key: found each time)
        pass
    return declared


_DECLARED: dict = {}


_CONVERT_CALL = "convert __call__"
# Generators and coroutines called from converted code run as they are: a staged
# computation cannot suspend, and iterating a generator in Python is what the
# original does. (Converting one at the top level is an error.)
_NOT_CONVERTIBLE_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                          | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)
_function_type = types.FunctionType


# In a ``cell_plan``: the cells of a twin calling itself (``Program.self_call_options``).
_SELF, _CALLEE = -2, -3
# What the callee cell holds where the twin's name is not bound to its function.
_NOT_THIS_FUNCTION = object()


def _instantiate_self_calling(program, fn):
    """``Transpiler.instantiate`` of a twin that calls itself by its global name: its
    closure also holds the twin itself and what that name is bound to now, if it is
    ``fn`` (not marked ``do_not_convert``) or what ``autograph.convert`` made of
    ``fn`` with the twin's options (whose wrapper would run this twin); anything
    else is never matched, so those calls go through ``converted_call``."""
    name = fn.__code__.co_name
    callee = fn.__globals__.get(name, _NOT_THIS_FUNCTION)
    if callee is fn:
        if fn.__dict__ and is_marked_do_not_convert(fn):
            callee = _NOT_THIS_FUNCTION
    elif not (_is_convert_wrapper(callee)
              and callee.__dict__["__autograph_original__"] is fn
              and callee.__dict__.get("__autograph_options__") == program.self_call_options):
        callee = _NOT_THIS_FUNCTION
    own = types.CellType()
    cells = {-1: program.runtime_cell, _SELF: own, _CALLEE: types.CellType(callee)}
    closure = fn.__closure__ or ()
    converted = _function_type(
        program.code, fn.__globals__, fn.__name__, fn.__defaults__,
        tuple(cells[i] if i < 0 else closure[i] for i in program.cell_plan))
    if fn.__kwdefaults__ is not None:
        converted.__kwdefaults__ = fn.__kwdefaults__
    own.cell_contents = converted
    return converted


def _closure_builder(plan, runtime_cell):
    """``(constant closure, None)`` when no original cell is needed, else
    ``(None, function of the original closure)``; both cheap to apply per call."""
    if all(i < 0 for i in plan):
        return (tuple(runtime_cell for _ in plan) or None), None
    extra = (runtime_cell,)
    runtime_index = -1
    indices = tuple(runtime_index if i < 0 else i for i in plan)
    if len(indices) == 1:
        index = indices[0]
        return None, lambda cells: (cells[index],)
    pick = operator.itemgetter(*indices)
    return None, lambda cells: pick(cells + extra)


def _defines_functions(node, ctx) -> bool:
    """Whether the definition ``node`` defines functions, lambdas or classes, other
    than lambdas handed straight to a builtin (``sorted(xs, key=lambda x: -x)``:
    a builtin never traces what it is given)."""
    to_builtins = set()
    for sub in walk(node):
        if (isinstance(sub, gast.Call) and isinstance(sub.func, gast.Name)
                and ctx.is_builtin(sub.func.id)):
            to_builtins.update(id(a) for a in [*sub.args, *(k.value for k in sub.keywords)]
                               if isinstance(a, gast.Lambda))
    return any(isinstance(sub, _SCOPE_TYPES) and id(sub) not in to_builtins
               for sub in walk(node) if sub is not node)


_SCOPE_TYPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_DEFINITION_CLASSES = frozenset((gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))


def _is_convert_wrapper(value) -> bool:
    """Whether ``value`` is a function ``autograph.convert`` made."""
    return (isinstance(value, types.FunctionType)
            and "__autograph_original__" in value.__dict__)


def _namespace(fn):
    """What the names ``fn`` reads from outside are bound to now: its closure
    variables (cells not yet filled left out), then its module's globals, then the
    builtins."""
    cells = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            cells[name] = cell.cell_contents
        except ValueError:       # an empty cell: the variable is not bound yet
            cells[name] = UNKNOWN
    if type(fn.__globals__) is dict:
        return _Namespace(cells, fn.__globals__, vars(builtins))
    return collections.ChainMap(cells, fn.__globals__, vars(builtins))


class _Namespace(collections.ChainMap):
    """A ``ChainMap`` of plain dicts whose ``get`` (what ``ConversionContext.value_of``
    asks, for every name a converter looks up) is a loop of ``in`` tests rather than
    ``Mapping.get`` over ``ChainMap.__getitem__``, which raises and catches a
    ``KeyError`` for each map a name is not in (several microseconds a name)."""

    def get(self, key, default=None):
        for mapping in self.maps:
            if key in mapping:
                return mapping[key]
        return default


def _class_attr(cls, name):
    """``cls.<name>`` as ``type(obj).<name>`` lookup finds it, or ``None``."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _code_objects(code):
    stack = [code]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))


def _unparse(node, is_lambda: bool) -> str:
    """The source of a converted definition; a lambda whose body is still a single
    ``return`` reads as a lambda again."""
    if (is_lambda and len(node.body) == 1 and isinstance(node.body[0], gast.Return)
            and node.body[0].value is not None):
        lam = gast.Lambda(args=node.args, body=node.body[0].value)
        return ast.unparse(ast_bridge.to_ast(gast.Expression(body=lam))) + "\n"
    return ast.unparse(ast_bridge.to_ast(node)) + "\n"


def _reject_unsupported_function(node, filename, code):
    """Raise for an ``async def`` or a generator, whose source is ``node`` and code
    ``code`` (the stale-source check has matched them: the compiler's flag says
    whether there is a ``yield`` to look for)."""
    if isinstance(node, gast.AsyncFunctionDef):
        raise ConversionError(
            "async functions cannot be converted: JAX traces ordinary functions. Call "
            "converted functions from the coroutine instead.", filename, node.lineno,
            node.col_offset)
    # (a nested generator does not make this function one)
    found = first_yield(node) if code.co_flags & inspect.CO_GENERATOR else None
    annos.set(node, annos.STAYS_PYTHON, found is not None)
    if found is not None:
        raise ConversionError(
            f"'{node.name}' is a generator (it uses `yield`), which has no converted "
            "form: a staged computation returns all its results at once, so "
            "autograph.convert runs a generator function as it is. To stage its work, "
            "collect the values in a list and return it.", filename, found.lineno,
            found.col_offset)


def _compile(node, filename, runtime_name, original_code,
             helpers=frozenset(), tries=True, in_place=False) -> tuple:
    """Compile the converted definition inside a factory whose parameters are the
    runtime and the original free variables, and return the definition's code and
    the lines it runs inside a ``try`` (``guarded_lines``).
    ``helpers``: the names of generated helper functions (``loop_body``...);
    ``tries``: whether the definition may hold a ``try`` (the converters add none
    where the user wrote none); ``in_place``: the tree under ``node`` is used no more
    (``ast_in_place.to_ast`` makes its nodes the ast tree compiled, rather than a
    new tree)."""
    params = [runtime_name, *original_code.co_freevars,
              *call_trees.self_call_names(runtime_name)]
    # Defined under a name of its own: under the user's name the definition would
    # shadow the global it reads when it calls itself (recursion). Unless the factory
    # declares that name global (where it is no parameter): then the function reads
    # the global as the original does, and the compiler gives it and its helpers
    # the original's qualified names (a global definition's has no prefix), so a
    # top-level function's code needs no renaming (``_requalify``) afterwards.
    name = original_code.co_name
    qualname = getattr(original_code, "co_qualname", name)
    named = qualname == name and name.isidentifier() and name not in params
    renamed = node.__class__.__new__(node.__class__)     # (copy.copy, written out)
    renamed.__dict__.update(node.__dict__)
    node = renamed
    node.name = name if named else _CONVERTED_NAME
    definition, unplaced = (ast_in_place.to_ast(node) if in_place
                            else ast_bridge.to_ast_noting_locations(node))
    # The factory is made as ``ast`` nodes (only the definition is converted). Its own
    # nodes take the definition's place (as ``ast.fix_missing_locations`` would give
    # them): then, where the converters placed every node, no fill is needed.
    place = {attr: getattr(node, attr) for attr in _LOCATION}
    body = [definition, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load(), **place),
                                   **place)]
    if named:
        body.insert(0, ast.Global(names=[name], **place))
    factory = ast.FunctionDef(
        name=_FACTORY_NAME,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p, annotation=None, type_comment=None, **place)
                  for p in params],
            vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None, **place)
    tree = ast.Module(body=[factory], type_ignores=[])
    if unplaced:
        ast_bridge.fill_missing_locations(tree)
    _anchor_helpers_at_a_def(tree, filename)
    guarded = guarded_lines(definition, runtime_name) if tries else without_tries(definition)
    flags = original_code.co_flags & _FUTURE_FLAGS
    module_code = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    factory_code = _code_constant(module_code, _FACTORY_NAME)
    code = _code_constant(factory_code, node.name)
    if named:
        # (only the user's code nested in a helper loses the helper's part: where
        # every code object under the definition is a helper's, none is renamed)
        if not helpers or _only_helpers_nested(code, helpers):
            return code, guarded
        return _requalify(code, name, name, _helper_scopes(helpers)), guarded
    helper_scopes = _helper_scopes(helpers)
    code = _requalify(code, f"{_FACTORY_NAME}.<locals>.{_CONVERTED_NAME}",
                      _qualname_prefix(original_code) + name, helper_scopes)
    return code.replace(co_name=name), guarded


# What ``inspect.findsource`` takes for the first line of a function's code: it walks
# back from ``co_firstlineno`` to the first line that matches.
_DEF_LINE = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


_STATEMENT_FIELDS = ("body", "orelse", "finalbody")


def _anchor_helpers_at_a_def(tree, filename) -> None:
    """Give each generated helper function (``if_true``, ``loop_body``...) the line of
    the user's enclosing ``def`` as its first line, where its own would be a line
    with no ``def`` (the ``if``/``while`` header).

    ``inspect`` finds a function's source by walking back from ``co_firstlineno`` to
    a ``def``; IPython's traceback (for a notebook cell, which is not a file) numbers
    that source from ``co_firstlineno``. A helper whose first line is the ``if``
    header would be shown numbered from there with the arrow off by the distance
    to the ``def``. The statements keep their own lines."""
    lines = linecache.getlines(filename)
    if not lines:
        return

    # A worklist, not a recursive closure: that would be a reference cycle left for
    # the garbage collector after every conversion.
    pending = [(tree.body, None)]
    while pending:
        statements, anchor = pending.pop()
        # Definitions are statements: only the fields holding statements lead to them.
        for child in statements:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                line = lines[first - 1] if 0 < first <= len(lines) else ""
                if anchor is not None and not _DEF_LINE.match(line):
                    child.lineno = anchor
                    for decorator in child.decorator_list:
                        decorator.lineno = decorator.end_lineno = anchor
                pending.append((child.body, child.lineno))
                continue
            for name in _STATEMENT_FIELDS:
                inner = getattr(child, name, None)
                if inner:
                    pending.append((inner, anchor))
            for holder in (getattr(child, "handlers", None) or getattr(child, "cases", None)
                           or ()):
                pending.append((holder.body, anchor))


def _reparse_from_source(node, fn, user_filename):
    """The generated code parsed again from its own source, registered in ``linecache``
    under a file name of its own (nothing is written to disk), so that tracebacks,
    ``pdb`` and ``inspect`` show and step through the generated code."""
    source = ast.unparse(ast_bridge.to_ast(node)) + "\n"
    filename = (f"<autograph-generated {fn.__qualname__} at "
                f"{user_filename}:{fn.__code__.co_firstlineno}>")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return ast_bridge.to_gast(ast.parse(source, filename=filename)).body[0], filename


def _qualname_prefix(code) -> str:
    """What precedes the function's own name in its ``__qualname__`` (``C.``, ``g.<locals>.``)."""
    qualname = getattr(code, "co_qualname", code.co_name)
    return qualname[:len(qualname) - len(code.co_name)]


def _helper_scopes(helpers):
    """A pattern matching ``loop_body.<locals>.`` for each generated helper name."""
    if not helpers:
        return None
    names = "|".join(re.escape(h) for h in sorted(helpers))
    return re.compile(rf"(?:{names})\.<locals>\.")


def _requalify(code, old: str, new: str, helper_scopes=None):
    """``code`` with the factory's prefix in its and its nested code's qualified names
    replaced by the original's, so JAX's source information and profiler names read
    ``f.<locals>.loop_body`` rather than the factory's. The user's own functions and
    classes nested in generated helpers lose the helpers' part, as in the original
    (``f.<locals>.A``, not ``f.<locals>.loop_body.<locals>.A``); a class keeps the
    name in the constant its body stores as ``__qualname__``."""
    consts = tuple(_requalify(c, old, new, helper_scopes) if isinstance(c, types.CodeType)
                   else c for c in code.co_consts)
    changes = {"co_consts": consts}
    qualname = getattr(code, "co_qualname", None)
    if qualname is not None and qualname.startswith(old):
        renamed = new + qualname[len(old):]
        is_helper = helper_scopes is not None and helper_scopes.fullmatch(
            code.co_name + ".<locals>.")
        if helper_scopes is not None and not is_helper:
            renamed = helper_scopes.sub("", renamed)
        changes["co_qualname"] = renamed
        if "__qualname__" in code.co_names:   # a class body: `__qualname__ = '...'`
            changes["co_consts"] = tuple(renamed if c == qualname else c for c in consts)
    if changes.get("co_qualname", qualname) == qualname and all(
            a is b for a, b in zip(changes["co_consts"], code.co_consts, strict=True)):
        return code          # (nothing renamed in it or under it)
    return code.replace(**changes)


def _only_helpers_nested(code, helpers) -> bool:
    """Whether every code object nested in ``code`` (at any depth) is a generated
    helper's (its name among ``helpers``): then ``_requalify`` of a top-level
    function's code, whose helpers keep their qualified names, changes nothing."""
    stack = [code]
    while stack:
        for const in stack.pop().co_consts:
            if const.__class__ is types.CodeType:
                if const.co_name not in helpers:
                    return False
                stack.append(const)
    return True


def _code_constant(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise AssertionError(f"compiled code has no function {name!r}")
