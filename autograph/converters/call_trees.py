"""Calls that could reach the user's code go through ``ag__.converted_call``.

Before:

    def loss(params, x):
        y = model(params, x)
        return jnp.sum(helper(y) ** 2) + len(x)

After:

    def loss(params, x):
        y = ag__.converted_call(model)(params, x)
        return jnp.sum(ag__.converted_call(helper)(y) ** 2) + len(x)

At run time ``converted_call`` gives the callee converted if it is the user's
function, and as it is otherwise; the call stays in the user's frame. Calls that
cannot reach user code stay as written: builtins (``len``, ``range``, ``print``:
other converters handle those they stage), attributes of library modules bound at
module level (``jnp.sum``, ``np.``, ``jax.``, ``lax.``, ``math.``), library
functions imported by name (``from math import sqrt``), the runtime itself and
lambdas written in place; but for the standard library's functions that change a list
in place (``heapq.heappush``, ``bisect.insort``: ``mutating_methods.py``), which go
through ``converted_call`` so that a change to a list a staged region made doubtful
is refused, as ``b.append(v)`` is; and for calls that write text outside the program
(``warnings.warn``, ``logging.info``, ``sys.stdout.write``: ``output_calls.py``), which
go through ``converted_call`` so that, staged, they run when the program runs.

A zero-argument ``super()`` becomes ``super(__class__, self)``: the body may end
up inside generated helper functions whose first parameter is not ``self``.

With ``recursive=False`` no call is rewritten (``super()`` still is).

In a Python twin (``transpiler.PythonTwin``) a call of the function itself by its
global name, ``fib(n - 1)``, goes straight to the twin while that name is still
bound to the function (or to what ``autograph.convert`` made of it) the twin was
made for; ``converted_call`` decides otherwise:

    (ag___self if fib is ag___callee else ag__.converted_call(fib))(n - 1)
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos
from autograph.converters import formatting
from autograph.converters.base import Transformer
from autograph.higher_order import HIGHER_ORDER_NAMES
from autograph.mutating_methods import changing_functions
from autograph.output_calls import writes_output, writes_output_method

NODE_TYPES = (gast.Call,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Route the calls in ``node`` (nested functions and lambdas included)."""
    if "super" in ctx.user_names and ctx.is_builtin("super"):
        node = _ExplicitSuper(node).visit(node)
    if not ctx.options.recursive:
        return node
    return _CallTrees(ctx).visit(node)


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return transform(node, ctx)


def needed(nodes, ctx) -> bool:
    """Whether ``transform`` may change the function whose walk is ``nodes``: a
    ``super()`` to make explicit, or a call that does not stay as written (whether
    one stays depends on its callee expression alone, which no other call's rewrite
    changes). (One walk, cheaper than the transformer's visit of each node.)"""
    if "super" in ctx.user_names and ctx.is_builtin("super"):
        return True
    if not ctx.options.recursive:
        return False
    stays, call = _CallTrees(ctx)._stays, gast.Call
    return any(sub.__class__ is call and not stays(sub.func) for sub in nodes)


def self_call_names(runtime_name: str) -> tuple[str, str]:
    """The free variables of a twin that calls itself: the twin function itself and
    the object its own name was bound to when the twin was made."""
    return runtime_name + "_self", runtime_name + "_callee"


def _root_name(func):
    """The name at the root of ``a.b.c``, or ``None`` for other expressions."""
    while isinstance(func, gast.Attribute):
        func = func.value
    return func.id if isinstance(func, gast.Name) else None


class _CallTrees(Transformer):
    def __init__(self, ctx):
        self.ctx = ctx
        self.ag = ctx.runtime_name

    def _stays(self, func) -> bool:
        if isinstance(func, gast.Lambda):
            return True              # converted along with this function
        if isinstance(func, gast.Name):
            if func.id in self.ctx.library_names and func.id in HIGHER_ORDER_NAMES:
                return False         # `grad(loss)`: the runtime converts `loss`
            if func.id in self.ctx.library_names:
                return not self._changes_in_place(func) and not self._writes_output(func)
            return self.ctx.is_builtin(func.id)
        root = _root_name(func)
        if root in self.ctx.library_names and func.attr in HIGHER_ORDER_NAMES:
            return False             # `jax.grad(loss)`, `lax.scan(body, ...)`
        # The runtime's own operators, which earlier converters made, stay as they are.
        if annos.get(func, annos.RUNTIME) is not None:
            return True
        return (root in self.ctx.library_names and not self._changes_in_place(func)
                and not self._writes_output(func))

    def _writes_output(self, func) -> bool:
        """``warnings.warn``, ``logging.info``, ``sys.stdout.write``...: a library call
        that writes text outside the program goes through ``converted_call``, which
        makes it when the program runs where it is staged (``output_calls.py``)."""
        if writes_output(self.ctx.value_of(func)):
            return True
        # `sys.stdout.write`, `log.info`: a method of an object a module or global holds
        return isinstance(func, gast.Attribute) and writes_output_method(
            self.ctx.value_of(func.value), func.attr)

    def _changes_in_place(self, func) -> bool:
        """``heapq.heappush``, ``bisect.insort``...: a library function that changes
        its first argument in place goes through ``converted_call``, which refuses
        the change where a staged region made that list doubtful."""
        return id(self.ctx.value_of(func)) in changing_functions()

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if self._stays(node.func):
            return node
        if self._writes_output(node.func):   # its text, like print's, formatted when run
            node.args = [formatting.deferred(arg, self.ctx) for arg in node.args]
        if isinstance(node.func, gast.Name) and node.func.id == self.ctx.self_call:
            twin, callee = self_call_names(self.ag)
            node.func = templates.replace_expr(
                "(twin if func is callee else ag__.converted_call(func))", ag__=self.ag,
                twin=twin, callee=callee, func=node.func)
        else:
            node.func = templates.replace_expr("ag__.converted_call(func)", ag__=self.ag,
                                               func=node.func)
        templates.set_location(node.func, node)
        return node


class _ExplicitSuper(Transformer):
    """``super()`` in the method's own body → ``super(__class__, <first parameter>)``."""

    def __init__(self, fn):
        params = fn.args.posonlyargs + fn.args.args
        self.first = params[0].id if params else None
        self.top = fn

    def visit_FunctionDef(self, node):
        if node is self.top:
            return self.generic_visit(node)
        return node              # a nested function's super() has its own first argument

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return node

    def visit_ClassDef(self, node):
        return node

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if (self.first is not None and isinstance(node.func, gast.Name)
                and node.func.id == "super" and not node.args and not node.keywords):
            node.args = [templates.name("__class__"), templates.name(self.first)]
            templates.set_location(node.args, node)
        return node
