"""What the control-flow converter knows about one function of the user's.

``FunctionScope`` gathers, once per function (nested ones included), the facts a
block's helpers need: the names it declares ``global``/``nonlocal``, its locals and
parameters, the names closures share with it (kept in cells, ``closures.py``), the
names nested functions assign through ``nonlocal`` that its code can see, and the
names some read may find unbound (``definedness.py``). ``name_order`` ranks names by
first appearance, so state tuples read in the order the user introduced them.
"""

from __future__ import annotations

import gast

from autograph.analysis import annos
from autograph.analysis.activity import is_setitem, local_names, mutated_objects
from autograph.analysis.closures import NO_CLOSURES, closure_uses
from autograph.analysis.scopes import walk_same_scope
from autograph.analysis.stageability import deleted_name, outer_write
from autograph.walk import child_nodes, walk


def name_order(fn):
    """Each name's rank by first appearance (parameters first), so state tuples read
    in the order the user introduced the variables; and whether ``fn`` has a ``del``."""
    order = {}
    has_delete = False
    stack = list(reversed(fn.body)) + [fn.args]
    pop, extend = stack.pop, stack.extend
    name_class, delete_class, handler_class = gast.Name, gast.Delete, gast.ExceptHandler
    while stack:
        node = pop()
        cls = node.__class__
        if cls is name_class:
            if node.id not in order:
                order[node.id] = len(order)
            if node.__dict__.get("annotation") is None:
                continue     # (nothing under it)
        elif cls is delete_class or (cls is handler_class and node.name is not None):
            has_delete = True
        children = child_nodes(node)
        children.reverse()
        extend(children)
    return order, has_delete




class FunctionScope:
    """What the converter knows about one function of the user's: the names it
    declares ``global``/``nonlocal`` (name -> declaration), its local names, the
    names it keeps in cells (``cells``; ``owned``: those bound in a function being
    converted, which staging may carry), the names nested functions assign through
    ``nonlocal`` that its code can see (``written``), and its ``closures``."""

    def __init__(self, node, parent, nested_scopes=True, locals_=None,
                 may_show_locals=True):
        globals_, nonlocals = {}, {}
        shows_locals = False    # (one walk finds the declarations and locals() calls)
        # (without nested scopes the tree holds no declaration; ``may_show_locals``:
        # whether the function may call ``locals``, ``vars`` or ``dir``)
        for sub in walk_same_scope(node.body) if nested_scopes or may_show_locals else ():
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                target = nonlocals if isinstance(sub, gast.Nonlocal) else globals_
                target.update((n, sub) for n in sub.names)
            elif not shows_locals and annos.runtime_operator(sub) in ("locals_", "dir_"):
                shows_locals = True
        self.globals_, self.nonlocals = globals_, nonlocals
        # (``locals_``: ``local_names(node)`` if the caller has it)
        self.locals = frozenset(local_names(node) if locals_ is None else locals_)
        args = node.args
        self.params = frozenset(a.id for a in [*args.posonlyargs, *args.args,
                                               *args.kwonlyargs, args.vararg, args.kwarg]
                                if a is not None)
        self.parent = parent
        # (``nested_scopes``: whether ``node`` may hold a nested function, lambda,
        # generator expression or class; without, no closure shares a name.)
        self.closures = closure_uses(node) if nested_scopes else NO_CLOSURES
        # Names a read may find unbound; locals() sees every name as it is.
        self.read_unbound = None if shows_locals else annos.get(node, annos.READ_UNBOUND,
                                                                 None)
        shared = (self.closures.reads & self.locals) | self.closures.writes | set(nonlocals)
        self.cells = frozenset(shared - set(globals_))
        inherited = parent.written - self.locals if parent is not None else frozenset()
        self.written = frozenset((self.closures.writes | inherited) - set(globals_))

    def owns(self, name) -> bool:
        """Whether ``name`` here is bound in this function or one around it that is
        converted with it (so a staged block may write its cell)."""
        scope = self
        while scope is not None:
            if name in scope.locals:
                return True
            if name in scope.globals_:
                return False
            scope = scope.parent
        return False


    def objects_changed(self, stmts):
        """The local names whose objects ``stmts`` change in place and never rebind:
        bases of attribute and item assignments (``self.count[...] += 1``,
        ``obj.total = t``), and parameters assigned items (``stats[k] += v``, which
        the slices converter made ``stats = ag__.setitem(stats, k, v, op='+')``)."""
        mutated, rebound = mutated_objects(stmts)
        if not mutated:
            return set()     # (what follows only ever narrows ``mutated``)
        setitems, _ = mutated_objects([s for s in walk_same_scope(stmts) if is_setitem(s)])
        others = mutated - setitems | {n for n in setitems & mutated if n in self.params}
        return {n for n in others - rebound if n in self.locals}


    def carried(self, names):
        """Of ``names``, those a block's helpers take and give as values: the
        function's own locals not kept in cells. (A ``global``/``nonlocal`` name is
        declared in the helpers instead, and a global or closure variable that is
        only mutated (``cache[k] = v``) stays the same object.)"""
        return {n for n in names if n in self.locals and n not in self.cells}

    def cells_assigned(self, node, stmts, modified, live_after):
        """``(cells, scoped)``: the names kept in cells that the block ``stmts`` of
        ``node`` may assign (``modified``, or through a nested function it may call),
        and those of them nothing reads after the block (``live_after``: names live
        after it, or at the next iteration)."""
        names = modified & self.cells
        if self.written and calls_user_code(stmts):
            names |= self.written
        names = {n for n in names if self.owns(n)}
        if not names:
            return set(), set()
        inside = {id(sub) for sub in walk(node)}
        needed = live_after | self.closures.reads_outside(inside) | (names - self.locals)
        return names, names - needed

    def may_stand_in(self, node, name) -> bool:
        """Whether ``name``, unbound before ``node``, may enter it as a placeholder
        (``ag__.Unset``) that a staged region gives the type it gets there: no code
        reads it unbound, and the block may leave it so (a loop; an ``if`` not
        binding it on both branches); or ``node`` is a loop after which nothing
        reads it (its first iteration binds it before any read, or the read raises
        as Python's does)."""
        if self.read_unbound is None or name in self.cells:
            return False
        if name in self.read_unbound:
            return isinstance(node, (gast.For, gast.While)) and name not in annos.get(
                node, annos.LIVE_OUT)
        return name not in annos.get(node, annos.DEFINED_OUT, frozenset())

    def passed_in_only(self, node, modified, live_out):
        """Of ``modified``, the names the branches of the ``if`` ``node`` assign and
        may read before assigning that nothing reads after it (``live_out``), bound
        before it on every path or on none: they need not come out of the ``if``,
        and a staged ``if`` does not carry them (its branches may give them
        different types). A name the test binds (``if (t := f()) > 0``) is bound
        after the branches' helpers are made: it is carried as before; so is one
        whose object the branches may change in place (``may_change_in_place``):
        carried, a staged ``if`` gives them a traced copy, not the object itself."""
        read = annos.get(node, annos.LIVE_IN_BODY) | annos.get(node, annos.LIVE_IN_ORELSE)
        names = (modified & read) - live_out
        if not names:
            return set()
        names -= {sub.target.id for sub in walk_same_scope(node.test)
                  if isinstance(sub, gast.NamedExpr) and isinstance(sub.target, gast.Name)}
        names -= may_change_in_place(node.body + node.orelse)
        defined = annos.get(node, annos.DEFINED_IN, frozenset())
        maybe = annos.get(node, annos.MAYBE_DEFINED_IN, frozenset())
        return {n for n in self.carried(names) if n in defined or n not in maybe}

    def obstacles(self, node, stmts, state, cells, carried=None, declarations=True) -> dict:
        """What staging the block ``stmts`` of ``node`` cannot honour
        (``stageability.py``), only what holds: ``assigns_global`` or
        ``assigns_nonlocal`` (``stmts`` become a function taking ``state``; names
        kept in ``cells`` are carried), ``deletes`` (a loop body deleting one of the
        ``carried`` names), ``in_try``. ``declarations``: whether the function's
        tree may hold a ``global`` or ``nonlocal`` declaration, its own or one the
        helpers of a block will make (False where it has none and no nested scope
        that could share a cell: then nothing is written outside)."""
        nonlocals = {n: d for n, d in self.nonlocals.items() if not self.owns(n)}
        facts = {}
        written = outer_write(stmts, set(state) | set(cells) | (self.cells - set(nonlocals)),
                              self.globals_, nonlocals) if declarations else None
        if written is not None:
            kind, name = written
            facts[f"assigns_{kind}"] = name
        if carried is not None:
            facts["deletes"] = deleted_name(node.body, carried)
        facts["in_try"] = annos.get(node, annos.IN_TRY)
        return {key: value for key, value in facts.items() if value is not None}


def may_change_in_place(stmts) -> set:
    """The names whose objects ``stmts`` may change in place: bases of attribute and
    item assignments, targets of augmented assignments, first arguments of the
    runtime's list and item operators, and every name a call of the user's code is
    given or called on
    (``ag__.converted_call(d.update)(x)``, ``ag__.converted_call(fill)(d)``)."""
    mutated, _ = mutated_objects(stmts)
    names = set(mutated)
    for sub in walk_same_scope(stmts):
        if isinstance(sub, gast.AugAssign) and isinstance(sub.target, gast.Name):
            names.add(sub.target.id)   # `a += b` on a list or NumPy array
        if not isinstance(sub, gast.Call):
            continue
        operator = annos.runtime_operator(sub)
        if (operator in annos.IN_PLACE_OPERATORS and sub.args
                and isinstance(sub.args[0], gast.Name)):
            names.add(sub.args[0].id)
        if annos.runtime_operator(sub.func) == "converted_call":
            given = [*sub.func.args, *sub.args, *(k.value for k in sub.keywords)]
            names |= {n.id for n in walk_same_scope(given) if isinstance(n, gast.Name)}
    return names


def calls_user_code(stmts) -> bool:
    """Whether ``stmts`` may call a function of the user's (which may assign a
    variable through ``nonlocal``): any call but one of the runtime's own operators
    (``converted_call`` calls the user's)."""
    return any(isinstance(sub, gast.Call)
               and annos.runtime_operator(sub) in (None, "converted_call")
               for sub in walk_same_scope(stmts))
