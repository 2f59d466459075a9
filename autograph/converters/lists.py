"""List operations into runtime calls that also work on staged lists.

A list grown in a staged loop becomes an array buffer that cannot be mutated, so
its operations are rewritten as assignments. Before:

    z = []
    autograph.set_element_type(z, jnp.float32)
    for x in xs:
        z.append(x)
        last = z.pop()

After:

    z = []
    z = autograph.set_element_type(z, jnp.float32)
    for x in xs:
        z = ag__.list_append(z, x)
        z, last = ag__.list_pop(z)

On a Python list the runtime calls mutate it in place and return the same object,
as the original does. Only statements whose list is a plain name are rewritten.
(``len`` of a staged list is ``ag__.len_``, and ``enumerate``/``zip`` over one are
``ag__.enumerate_``/``ag__.zip_``: the builtins converter rewrites those.)
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos
from autograph.converters.scoped import ScopedTransformer
from autograph.walk import walk

NODE_TYPES = (gast.Call,)


def transform(node: gast.FunctionDef, ctx) -> gast.FunctionDef:
    """Rewrite the list statements in ``node``."""
    nodes = walk(node)
    return rewrite(node, ctx, nodes) if needed(nodes, ctx) else node


def rewrite(node, ctx, nodes=None) -> gast.FunctionDef:
    """``transform``, where ``needed``."""
    return _Lists(ctx).visit(node)


def needed(nodes, ctx=None) -> bool:
    """Whether ``nodes`` (a walk of the function) hold something this converter may
    rewrite: a ``.append`` or ``.pop`` attribute, or a call the directives converter
    marked ``set_element_type`` (whatever name it was called by). (One walk, cheaper
    than the transformer's visit of each node.)"""
    for sub in nodes:
        cls = sub.__class__
        if (cls is gast.Attribute and sub.attr in ("append", "pop")) or (
                cls is gast.Call and annos.get(sub, annos.DIRECTIVE) == "set_element_type"):
            return True
    return False


def _method_call(value, method):
    """``(list name, call)`` if ``value`` is ``name.method(...)`` without keywords."""
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == method and isinstance(value.func.value, gast.Name)
            and not value.keywords
            and not any(isinstance(a, gast.Starred) for a in value.args)):
        return value.func.value.id, value
    return None, None


class _Lists(ScopedTransformer):
    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx
        self.ag = ctx.runtime_name

    def visit_Expr(self, node):
        node = self.generic_visit(node)
        value = node.value
        lst, call = _method_call(value, "append")
        if lst is not None and not self.is_local(lst):
            return node
        if lst is not None and len(call.args) == 1:
            new = templates.replace("lst = ag__.list_append(lst, item)", ag__=self.ag,
                                    lst=lst, item=call.args[0])
        else:
            lst, call = _method_call(value, "pop")
            if lst is not None and len(call.args) <= 1 and self.is_local(lst):
                new = templates.replace("lst, unused = ag__.list_pop(lst, args)", ag__=self.ag,
                                        lst=lst, unused=self.ctx.fresh_name("_"),
                                        args=call.args)
            elif (annos.get(value, annos.DIRECTIVE) == "set_element_type" and value.args
                  and isinstance(value.args[0], gast.Name) and self.is_local(value.args[0].id)):
                new = [gast.Assign(targets=[templates.name(value.args[0].id, gast.Store())],
                                   value=value, type_comment=None)]
            else:
                return node
        templates.set_location(new, node)
        return new

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        lst, call = _method_call(node.value, "pop")
        if (lst is None or len(call.args) > 1 or len(node.targets) != 1
                or not isinstance(node.targets[0], gast.Name) or not self.is_local(lst)):
            return node
        new = templates.replace("lst, target = ag__.list_pop(lst, args)", ag__=self.ag,
                                lst=lst, target=node.targets[0].id, args=call.args)
        templates.set_location(new, node)
        return new

