"""What the helpers a block becomes declare, so each name keeps its scope.

The control-flow converter moves a block's statements into helper functions
(``if_true``, ``loop_body``...). A name those assign stays the user's:

- a ``global``/``nonlocal`` declaration of the function is repeated in the helpers
  that assign the name, and a name kept in a cell (closures share it) is declared
  ``nonlocal`` there (an annotation of it, ``x: int = n``, becomes ``x = n``:
  Python rejects an annotated nonlocal name);
- a function all of whose assignments of a cell moved into helpers declares it
  first (``x: 'cell'``, never evaluated), so it stays its local;
- a helper that ``del``s a variable it returns gives ``Undefined`` where it is
  unbound;
- a name an ``if``'s branch takes only as input is a keyword-only default
  (``def if_false(r, *, t=t)``).
"""

from __future__ import annotations

import gast

from autograph import templates
from autograph.analysis import SCOPES, local_names, modified_names, walk_same_scope


def declare_in_helpers(new, scope, runtime_name, has_delete=True):
    """Repeat the function's ``global``/``nonlocal`` declarations in the generated
    helpers in ``new`` that assign those names, and declare ``nonlocal`` the names
    kept in cells that they assign, so they keep their scope; a helper that
    ``del``s a state variable returns it as ``Undefined`` when it is unbound
    (``has_delete``: whether the function has a ``del`` or ``except ... as``)."""
    globals_, nonlocals, cells = scope.globals_, scope.nonlocals, scope.cells
    for helper in new:
        if not isinstance(helper, gast.FunctionDef):
            continue
        if has_delete:
            _return_deleted(helper, runtime_name)
        if not (globals_ or nonlocals or cells):
            continue          # (nothing to declare, whatever the helper assigns)
        modified = modified_names(helper.body)
        params = {a.id for a in helper.args.args}
        for kind, names in ((gast.Global, globals_), (gast.Nonlocal, nonlocals)):
            used = sorted(n for n in names if n in modified)
            if kind is gast.Nonlocal:
                used = sorted(set(used) | {n for n in cells & modified
                                           if n not in params and n not in globals_})
            if used:
                declaration = kind(names=used)
                templates.set_location(declaration, names.get(used[0], helper))
                helper.body.insert(0, declaration)
                if kind is gast.Nonlocal:
                    _drop_annotations(helper, set(used))


def _return_deleted(helper, runtime_name):
    """A ``return`` of a name the helper deletes gives ``Undefined`` where it is unbound."""
    deleted = {target.id for sub in walk_same_scope(helper.body)
               if isinstance(sub, gast.Delete)
               for target in sub.targets if isinstance(target, gast.Name)}
    deleted |= {sub.name.id for sub in walk_same_scope(helper.body)   # `except E as e`
                if isinstance(sub, gast.ExceptHandler) and isinstance(sub.name, gast.Name)}
    last = helper.body[-1] if helper.body else None
    if not deleted or not isinstance(last, gast.Return) or last.value is None:
        return
    elts = last.value.elts if isinstance(last.value, gast.Tuple) else [last.value]
    for i, elt in enumerate(elts):
        if isinstance(elt, gast.Name) and elt.id in deleted:
            elts[i] = templates.replace_expr(
                "ag__.local_or_undefined(locals(), var_name)", ag__=runtime_name,
                var_name=gast.Constant(value=elt.id, kind=None))
            templates.set_location(elts[i], last)
    if not isinstance(last.value, gast.Tuple):
        last.value = elts[0]


def keep_cells_local(fn, cells):
    """Declare ``x: 'cell'`` first in ``fn`` for each name of ``cells`` that ``fn``
    no longer assigns itself (all its assignments moved into helpers, which declare
    it ``nonlocal``): the annotation, never evaluated, keeps it a local of ``fn``."""
    missing = sorted(cells - local_names(fn)) if cells else None
    if not missing:
        return
    declarations = [gast.AnnAssign(target=templates.name(name, gast.Store()),
                                   annotation=gast.Constant(value="cell", kind=None),
                                   value=None, simple=1) for name in missing]
    templates.set_location(declarations, fn)
    docstring = fn.body[:1] if (fn.body and isinstance(fn.body[0], gast.Expr)
                                and isinstance(fn.body[0].value, gast.Constant)
                                and isinstance(fn.body[0].value.value, str)) else []
    fn.body = docstring + declarations + fn.body[len(docstring):]


def _drop_annotations(helper, names):
    """``x: T = v`` as ``x = v`` (a bare ``x: T`` dropped) in ``helper`` for each
    name of ``names`` it declares ``nonlocal``: Python rejects an annotated nonlocal
    name, and the annotation of a function's local variable is never evaluated."""
    for stmt in [helper, *walk_same_scope(helper.body)]:
        if stmt is not helper and isinstance(stmt, SCOPES):
            continue   # its own names (a class body's annotations are kept)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if not isinstance(block, list) or not any(_annotates(s, names) for s in block):
                continue
            new = [gast.copy_location(gast.Assign(targets=[sub.target], value=sub.value,
                                                  type_comment=None), sub)
                   if _annotates(sub, names) else sub
                   for sub in block if not (_annotates(sub, names) and sub.value is None)]
            setattr(stmt, field, new or [gast.copy_location(gast.Pass(), block[0])])


def _annotates(stmt, names) -> bool:
    return (isinstance(stmt, gast.AnnAssign) and isinstance(stmt.target, gast.Name)
            and stmt.target.id in names)


def take_as_defaults(helper, names):
    """Give ``helper`` a keyword-only parameter ``name=name`` for each of ``names``:
    its value where the helper is defined (the runtime passes the state
    positionally, so these stay out of it)."""
    for name in names:
        helper.args.kwonlyargs.append(templates.name(name, gast.Param()))
        helper.args.kw_defaults.append(templates.name(name))

