"""One staged region (an ``if``'s branches, a loop's body), staged in one order.

A staged ``if`` (``conditionals._staged_cond``) and a staged loop (``loops._stage``)
take the same steps, in this order; the steps they share are methods here, and
what each kind of carried value needs is asked of that kind's own code:

1. **Watch** (``StagedRegion(...)``): the Python state the blocks reach without
   carrying it is watched from here on (``side_effects.watch``).
2. **Open** (``opened()``): the code run inside is the staged region
   (``regions.staged``: an error passing out of it names the region).
3. **Lift**: the state becomes what ``lax`` carries. Unbound variables
   (``Holes``) are left out of an ``if``; a loop carries them as ``None`` where an
   iteration leaves them unbound, or as zeros of the type it gives them (one
   abstract probe, ``loop_probe.py``). Return values (``returns.py``) and lists
   (``lists.py``) are filled or made buffers, and weakly typed starts promoted,
   before a loop's trace, since its carry must have its final type on entry (the
   same probe tells all three); an ``if``'s outputs are not carried
   in, so they are reconciled after each branch's one trace (step 5).
4. **Check** (``check``): what cannot be carried or staged raises a
   ``ConversionError`` at the user's line.
5. **Trace, reconcile, bind**: the construct's own. An ``if`` traces each branch
   once to a jaxpr, reconciles the two and binds one ``cond``; a loop binds its
   lowering (``loops._Lowering``).
6. **Settle** (``settle``): Python state the blocks changed without carrying it
   is put back, and the change refused at its line (or, for a loop that can,
   the reason to run it unrolled: a loop settles once its failure is caught).
7. **Write back**: variables the region leaves unbound are unbound again
   (``Holes.unbound_again``); cells and objects are written back by
   ``carried_state.Carry`` around the whole region.

Before (two orders to read), ``_staged_cond`` checked, then watched, then traced,
then filled return values and list buffers; ``_stage`` watched, probed, filled,
checked, staged lists, ran. After, both read as the steps above.
"""

from __future__ import annotations

from autograph.runtime import regions, side_effects
from autograph.runtime.stageable import (
    check_carriable,
    check_item_writes,
    check_stageable,
    require_defined,
)
from autograph.runtime.state import Holes
from autograph.runtime.unrolling import Unrolls


class ProbeChanged(Unrolls):
    """A probe of the region's blocks changed Python state the region watches (the
    objects, ``describe``d); ``settle`` decides."""


class StagedRegion:
    """A region about to be staged: its ``construct`` (``"if"``, ``"while loop"``,
    ``"for loop"``, ``"conditional expression"``), the user's line ``where``, the
    state's ``names`` and its ``obstacles`` (``stageable.StagingObstacles``); the
    Python state ``blocks`` reach beyond ``state`` is watched from its creation."""

    __slots__ = ("construct", "where", "names", "obstacles", "effects")

    def __init__(self, construct, where, names, obstacles, blocks, state):
        self.construct, self.where, self.names = construct, where, names
        self.obstacles = obstacles
        self.effects = side_effects.watch(blocks, state)

    def opened(self):
        """``with region.opened():`` the code run inside is the staged region."""
        return regions.staged(self.construct, self.where)

    def check(self, values, names=None, *, defined=False):
        """Raise at the user's line for a value of ``values`` (named ``names``, the
        region's own by default) that cannot be carried, ``defined``: for one still
        unbound (a loop carries every variable in), and for what the region's code
        does that staging cannot honour."""
        names = self.names if names is None else names
        if defined:
            require_defined(values, names, self.where, f"staged {self.construct}")
        check_carriable(values, names, self.where, self.construct)
        check_stageable(self.obstacles, self.where, self.construct)
        if self.obstacles.item_writes:
            check_item_writes(values, names, self.obstacles.item_writes, self.where,
                              self.construct)

    def unchanged_by_probes(self):
        """Raise ``ProbeChanged`` where the abstract probes run before the region's
        trace (``loop_probe.py``, a list probe) changed Python state the region
        watches: their tracers are left in it (``for p in ps: p.x = p.x - g`` leaves
        the probe's ``p.x``), and the region's trace would read them. The region's
        ``settle`` then puts that state back and decides as for a change by the
        trace itself, before anything is staged: a loop runs unrolled, anything
        else raises at the line of the change."""
        changes = self.effects.changed()
        if changes:
            raise ProbeChanged(side_effects.describe(changes))

    def settle(self, can_unroll: bool, retrace):
        """``side_effects.settle`` of what the region watches: None, the reason to
        run the region unrolled (``can_unroll``), or the ``ConversionError`` at the
        line of the change (``retrace()`` finds it: it runs only then)."""
        return side_effects.settle(self.effects, can_unroll, self.construct, self.where,
                                   retrace)


__all__ = ["Holes", "ProbeChanged", "StagedRegion"]
