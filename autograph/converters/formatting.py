"""String formatting whose text a staged ``print`` or ``assert`` shows, deferred.

Used by the ``print`` and ``assert`` converters on a ``print`` argument or an
``assert`` message; ``deferred(node, ctx)`` rewrites one such expression.

Before:

    f"step {step}: loss {loss:.3f} {x!r:>8}"
    "{} of {}".format(i, n)
    "%.2f%%" % rate

After:

    ag__.format_('step {}: loss {:.3f} {!r:>8}', step, loss, x)
    ag__.format_('{} of {}', i, n)
    ag__.percent_format('%.2f%%', rate)

A field that is a conditional expression between two string literals (``{'+' if
x > 0 else '-'}``) becomes ``ag__.chosen_text(x > 0, '+', '-')``, chosen when the
program runs (so does such a ``print`` argument itself).
``str(x)``, ``repr(x)``, ``format(x, 'spec')`` and their concatenations with string
literals and f-strings (``"v=" + str(s)``) become one ``format_`` too (``'v={}'``): a
traced value's text is made when the program runs (outside ``print``,
``runtime/types_of.py`` refuses it).
An f-string becomes the ``str.format`` template that formats the same (each field
``{}`` with its conversion and spec, nested spec fields included, literal braces
doubled) and its values in evaluation order. With Python values the runtime
formats at once (the same ``str``); with traced values it keeps the template and
the values until they are concrete. ``.format`` is rewritten on any receiver (one
that is not a ``str`` at run time has its own ``.format`` called); ``%`` only with
a string literal on the left (elsewhere it is usually arithmetic).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import annos


def deferred(node, ctx):
    """``node`` with its formatting deferred to the runtime, or ``node`` itself when
    it is not an f-string, ``.format`` call or ``'...' % ...``."""
    if isinstance(node, gast.JoinedStr):
        parts = _fstring_parts(node)
        if parts is None:
            return node
        template, values = parts
        return _call(ctx, "ag__.format_", [gast.Constant(value=template, kind=None),
                                           *(chosen(v, ctx) for v in values)], [], node)
    if isinstance(node, gast.BinOp) or _text_operator(node, ctx) is not None:
        values = []
        template = _text(node, values, ctx)
        if template is not None and values:
            return _call(ctx, "ag__.format_", [gast.Constant(value=template, kind=None),
                                               *(chosen(v, ctx) for v in values)], [], node)
    if isinstance(node, gast.Call):
        receiver, args, keywords = _format_call(node, ctx)
        if receiver is not None:
            return _call(ctx, "ag__.format_", [receiver, *(chosen(a, ctx) for a in args)],
                         keywords, node)
        return chosen(node, ctx)
    if (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mod)
            and isinstance(node.left, gast.Constant) and isinstance(node.left.value, str)):
        return _call(ctx, "ag__.percent_format", [node.left, node.right], [], node)
    return node


def chosen(node, ctx):
    """A conditional expression between two string literals that ``print`` shows
    (``'+' if x > 0 else '-'``, an ``ag__.if_exp`` call by now) as
    ``ag__.chosen_text(x > 0, '+', '-')``, which a traced condition chooses when the
    program runs (``runtime/chosen_text.py``); any other ``node`` as it is."""
    if annos.runtime_operator(node) != "if_exp" or len(node.args) != 3:
        return node
    texts = [getattr(branch, "body", None) for branch in node.args[1:]]
    if not all(isinstance(branch, gast.Lambda) and isinstance(text, gast.Constant)
               and type(text.value) is str for branch, text in zip(node.args[1:], texts,
                                                                  strict=True)):
        return node
    return _call(ctx, "ag__.chosen_text", [node.args[0], *texts], [], node)


def _call(ctx, runtime_attribute, args, keywords, origin):
    func = templates.replace_expr(runtime_attribute, ag__=ctx.runtime_name)
    new = gast.Call(func=func, args=args, keywords=keywords)
    templates.set_location(new, origin)
    return new


def _format_call(node, ctx):
    """``(receiver, args, keywords)`` of ``receiver.format(...)``, also when the call
    converter has routed it (``ag__.converted_call(receiver.format)(...)``)."""
    func, args = node.func, node.args
    if annos.runtime_operator(func) == "converted_call" and len(func.args) == 1:
        func = func.args[0]
    if (isinstance(func, gast.Attribute) and func.attr == "format"
            and not any(isinstance(a, gast.Starred) for a in args)
            and not any(k.arg is None for k in node.keywords)):
        return func.value, list(args), list(node.keywords)
    return None, None, None


# ``str(x)``/``repr(x)``: their fields.
_TEXT_OF = {"str_": "{}", "repr_": "{!r}"}
_BUILTINS = {"str": "str_", "repr": "repr_", "format": "format_builtin"}


def _text_operator(node, ctx):
    """``'str_'``, ``'repr_'`` or ``'format_builtin'`` for a call of the builtin
    ``str``/``repr``/``format`` (a runtime call once ``builtin_functions`` has run;
    the ``raise`` converter runs before it), else None."""
    operator = annos.runtime_operator(node)
    if operator in _BUILTINS.values():
        return operator
    func = getattr(node, "func", None)
    if isinstance(node, gast.Call) and isinstance(func, gast.Name) and func.id in _BUILTINS \
            and ctx.is_builtin(func.id):
        return _BUILTINS[func.id]
    return None


def _text(node, values, ctx):
    """The ``str.format`` template of a text made of string literals, f-strings,
    ``str(x)``/``repr(x)``/``format(x, 'spec')`` joined by ``+`` (``"v=" + str(s)``),
    its fields' values appended to ``values``; None for anything else (``a + b`` of
    unknown operands: Python's ``+`` may not be a concatenation)."""
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, gast.JoinedStr):
        return _template(node, values, depth=0)
    operator = _text_operator(node, ctx)
    if operator == "format_builtin" and len(node.args) == 2 and not node.keywords \
            and isinstance(node.args[1], gast.Constant) and type(node.args[1].value) is str \
            and "{" not in node.args[1].value and "}" not in node.args[1].value:
        values.append(node.args[0])
        return "{:" + node.args[1].value + "}"
    field = _TEXT_OF.get(operator)
    if field is not None:
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], gast.Starred):
            return None
        values.append(node.args[0])
        return field
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
        left = _text(node.left, values, ctx)
        right = None if left is None else _text(node.right, values, ctx)
        return None if right is None else left + right
    return None


def _fstring_parts(node):
    """``(template, values)`` of an f-string with fields, or None (no field, or
    fields nested deeper than ``str.format`` allows)."""
    values = []
    template = _template(node, values, depth=0)
    if template is None or not values:
        return None
    return template, values


def _template(joined, values, depth):
    out = []
    for part in joined.values:
        if isinstance(part, gast.Constant):
            out.append(part.value.replace("{", "{{").replace("}", "}}"))
            continue
        if depth > 1:        # str.format allows one level of fields inside a spec
            return None
        values.append(part.value)
        field = "{"
        if part.conversion not in (-1, None):
            field += "!" + chr(part.conversion)
        if part.format_spec is not None:
            spec = _template(part.format_spec, values, depth + 1)
            if spec is None:
                return None
            field += ":" + spec
        out.append(field + "}")
    return "".join(out)
