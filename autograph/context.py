"""What a converter knows about the function it rewrites."""

from __future__ import annotations

import builtins
import types
from collections.abc import Mapping
from dataclasses import dataclass, field

import gast

from autograph.walk import walk


class _Unknown:
    """``ConversionContext.value_of`` of an expression whose value is not known."""

    def __repr__(self):
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class ConversionOptions:
    """Options that change the generated code (part of the cache key)."""

    recursive: bool = True


@dataclass
class ConversionContext:
    """Per-function facts and services shared by the converters."""

    filename: str
    runtime_name: str
    options: ConversionOptions
    user_names: frozenset          # every identifier the user's function mentions
    shadowing_names: frozenset     # names the function binds, its closure and module define
    # Module-level names bound to library modules, functions or classes (``jnp``,
    # ``math``, ``from jax import lax``): calls through them stay as they are.
    library_names: frozenset = frozenset()
    # What the names the function reads from outside are bound to when it is
    # converted (closure variables, module globals, builtins), and the names that
    # the function or a function nested in it binds (those are not looked up there).
    namespace: Mapping = field(default_factory=dict)
    local_names: frozenset = frozenset()
    # A Python twin's own name, where it calls itself by its global name: those
    # calls may go straight to the twin (``converters/call_trees.py``).
    self_call: str | None = None
    # ``(walk, {id(function): its local names})`` of the function as parsed: the
    # walk (the list itself) identifies that tree state, so an analysis handed the
    # same list may reuse the names (``converters/control_flow.py``).
    parsed_locals: tuple = (None, None)
    # ``(walk, {id(function): the names its ifs join})``: what the joined-numbers
    # converter's ``needed`` worked out on that walk, for its ``rewrite`` to reuse.
    joined_numbers: tuple = (None, None)
    _fresh: dict = field(default_factory=dict)

    def fresh_name(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... if the user's code uses ``base``.

        The same base always gives the same name: generated helpers of the same kind
        can share a name because each lives in its own scope.
        """
        if base not in self._fresh:
            candidate, n = base, 0
            while candidate in self.user_names:
                n += 1
                candidate = f"{base}_{n}"
            self._fresh[base] = candidate
        return self._fresh[base]

    def generated_names(self) -> frozenset:
        """Every name ``fresh_name`` has given out (helpers, flags, loop items)."""
        return frozenset(self._fresh.values())

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` read in this function is Python's builtin of that name."""
        return name not in self.shadowing_names and hasattr(builtins, name)

    def value_of(self, node):
        """The object the expression ``node`` denotes when the function is converted:
        for a name the function does not bind (a closure variable, a global, a
        builtin), or an attribute of a module reached from one
        (``autograph.set_loop_options``); ``UNKNOWN`` for anything else."""
        if isinstance(node, gast.Attribute):
            module = self.value_of(node.value)
            if isinstance(module, types.ModuleType):
                return vars(module).get(node.attr, UNKNOWN)
            return UNKNOWN
        if isinstance(node, gast.Name) and node.id not in self.local_names:
            return self.namespace.get(node.id, UNKNOWN)
        return UNKNOWN


def all_identifiers(node, nodes=None) -> frozenset:
    """Every identifier in ``node`` (``nodes``: ``list(walk(node))`` if the caller
    has it): names, parameters, function and class names, imports,
    ``global``/``nonlocal`` declarations and ``case`` pattern captures."""
    names = set()
    add = names.add
    name_class, other = gast.Name, _IDENTIFIER_CLASSES
    for sub in walk(node) if nodes is None else nodes:
        cls = sub.__class__
        if cls is name_class:
            add(sub.id)
        elif cls in other:
            if cls is gast.alias:
                add((sub.asname or sub.name).split(".")[0])
            elif cls is gast.Global or cls is gast.Nonlocal:
                names.update(sub.names)
            elif cls is gast.MatchMapping:
                if sub.rest:
                    add(sub.rest)     # a case pattern's capture (not a Name node)
            elif cls is gast.MatchAs or cls is gast.MatchStar:
                if sub.name:
                    add(sub.name)
            else:
                add(sub.name)         # a function or class
    return frozenset(names)


_IDENTIFIER_CLASSES = frozenset((
    gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.alias, gast.Global,
    gast.Nonlocal, gast.MatchAs, gast.MatchStar, gast.MatchMapping))
