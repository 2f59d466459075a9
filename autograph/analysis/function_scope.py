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
from autograph.analysis.closures import closure_uses
from autograph.analysis.scopes import walk_same_scope


def name_order(fn):
    """Each name's rank by first appearance (parameters first), so state tuples read
    in the order the user introduced the variables; and whether ``fn`` has a ``del``."""
    order = {}
    has_delete = False
    stack = list(reversed(fn.body)) + [fn.args]
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Name):
            if node.id not in order:
                order[node.id] = len(order)
        elif isinstance(node, gast.Delete) or (
                isinstance(node, gast.ExceptHandler) and node.name is not None):
            has_delete = True
        stack.extend(reversed(list(gast.iter_child_nodes(node))))
    return order, has_delete




class FunctionScope:
    """What the converter knows about one function of the user's: the names it
    declares ``global``/``nonlocal`` (name -> declaration), its local names, the
    names it keeps in cells (``cells``; ``owned``: those bound in a function being
    converted, which staging may carry), the names nested functions assign through
    ``nonlocal`` that its code can see (``written``), and its ``closures``."""

    def __init__(self, node, parent):
        globals_, nonlocals = {}, {}
        for sub in walk_same_scope(node.body):
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                target = nonlocals if isinstance(sub, gast.Nonlocal) else globals_
                target.update((n, sub) for n in sub.names)
        self.globals_, self.nonlocals = globals_, nonlocals
        self.locals = frozenset(local_names(node))
        args = node.args
        self.params = frozenset(a.id for a in [*args.posonlyargs, *args.args,
                                               *args.kwonlyargs, args.vararg, args.kwarg]
                                if a is not None)
        self.parent = parent
        self.closures = closure_uses(node)
        # Names a read may find unbound; locals() sees every name as it is.
        self.read_unbound = annos.get(node, annos.READ_UNBOUND, None)
        if any(annos.runtime_operator(sub) in ("locals_", "dir_")
               for sub in walk_same_scope(node.body)):
            self.read_unbound = None
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
        setitems, _ = mutated_objects([s for s in walk_same_scope(stmts) if is_setitem(s)])
        others = mutated - setitems | {n for n in setitems & mutated if n in self.params}
        return {n for n in others - rebound if n in self.locals}


def calls_user_code(stmts) -> bool:
    """Whether ``stmts`` may call a function of the user's (which may assign a
    variable through ``nonlocal``): any call but one of the runtime's own operators
    (``converted_call`` calls the user's)."""
    return any(isinstance(sub, gast.Call)
               and annos.runtime_operator(sub) in (None, "converted_call")
               for sub in walk_same_scope(stmts))
