"""``autograph.fold``: dynamic batching of a plain recursive function over trees."""

from __future__ import annotations

import collections
import threading

import jax
import numpy as np
from jax import tree_util

from autograph.errors import ConversionError
from autograph.fold import executor, recording_fast
from autograph.fold.recording import Registry
from autograph.fold.schedule import Plan, SizeChooser, schedule

# Recordings kept per folded function (per-tree, reused when a tree comes again).
CACHED_TREES = 65536


class Fold:
    """A recursive function ``fn(params, tree)`` run over batches of trees, batched.

        def encode(p, node):                       # unmodified recursive Python
            if node.is_leaf:
                return leaf(p, node.word)
            return cell(p, encode(p, node.left), encode(p, node.right))

        batched = autograph.fold(encode)
        roots = batched(p, trees)                  # == stack([encode(p, t) for t in trees])
        plan = batched.plan(trees)                 # outside jit: the schedule, a pytree
        jax.jit(lambda p, plan: batched(p, plan).sum())(p, plan)

    ``fn`` runs in Python once per tree to record it (see ``recording.py``): its
    branches on the tree's structure run as written, every call that receives an
    array computed in the recursion or the parameters is a node, and a branch on a
    computed value becomes a select of both sides. Nodes with the same signature
    and height run together (``schedule.py``, ``executor.py``). ``fn`` and the
    functions it calls must be pure; trees must not change once recorded.
    """

    def __init__(self, fn, *, capacities=None):
        if not callable(fn):
            raise TypeError(f"autograph.fold expects a function, got {fn!r}")
        if capacities is not None:
            capacities = tuple(int(c) for c in capacities)
            if not capacities or min(capacities) < 1:
                raise ValueError("capacities: positive step sizes")
        self.fn = fn
        self.capacities = capacities
        self.traces = 0
        self._registries: dict = {}
        self._recordings: collections.OrderedDict = collections.OrderedDict()
        self._sizes = SizeChooser()
        self._param_avals = None
        self._last_registry = None      # the registry of the last parameters' shapes
        self._lock = threading.RLock()
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self):
        return f"autograph.fold({getattr(self.fn, '__qualname__', self.fn)})"

    def _count_trace(self):
        self.traces += 1

    def plan(self, trees, params=None) -> Plan:
        """The schedule of ``trees`` (a list of trees): index arrays and per-node data,
        to pass through ``jax.jit`` as an argument. Built in Python, outside ``jit``.
        The shapes of the parameters come from ``params`` (arrays or
        ``jax.ShapeDtypeStruct``s), or from the last call of this object."""
        trees = list(trees)
        if not trees:
            raise ValueError("autograph.fold: an empty batch of trees")
        with self._lock:
            registry = self._registry(params)
            recordings = self._record_all(registry, trees)
            return schedule(recordings, registry, self.capacities, self._sizes,
                            self._count_trace)

    def __call__(self, params, trees_or_plan):
        """The roots of every tree, stacked: ``(len(trees), ...)`` per leaf of ``fn``'s
        result. ``trees_or_plan`` is a list of trees or a :meth:`plan`."""
        if isinstance(trees_or_plan, Plan):
            plan = trees_or_plan
            self._check_params(plan, params)
        else:
            plan = self.plan(trees_or_plan, params)
        return executor.run(params, plan.arrays, layout=plan.layout)

    def _registry(self, params):
        if params is None and self._last_registry is not None:
            return self._last_registry
        if params is None:
            if self._param_avals is None:
                raise ConversionError(
                    "autograph.fold: plan() needs the parameters' shapes: call the folded "
                    "function once, or pass params= (arrays or jax.ShapeDtypeStruct)")
            avals = self._param_avals
        else:
            avals = jax.tree_util.tree_map(
                lambda x: jax.ShapeDtypeStruct(np.shape(x), jax.numpy.result_type(x)), params)
            self._param_avals = avals
        key = _avals_key(avals)
        registry = self._registries.get(key)
        if registry is None:
            registry = self._registries[key] = Registry(avals)
        self._last_registry = registry
        return registry

    def _record(self, registry, tree):
        """One tree's recording, cached (:meth:`_record_all` of one tree)."""
        return self._record_all(registry, [tree])[0]

    def _record_all(self, registry, trees):
        """Each tree's recording: the cached ones reused, the others (each once)
        recorded together, by one recorder (``recording_fast.record_batch``)."""
        recordings, new = [], {}
        for tree in trees:
            key = (id(registry), id(tree))
            hit = self._recordings.get(key)
            if hit is not None and hit[0] is tree:
                self._recordings.move_to_end(key)
                recordings.append(hit[1])
            else:
                recordings.append(None)
                new[id(tree)] = tree
        if new:
            made = dict(zip(new, recording_fast.record_batch(registry, self.fn, new.values()),
                            strict=True))
            for key, tree in new.items():
                self._recordings[(id(registry), key)] = (tree, made[key])
            while len(self._recordings) > CACHED_TREES:
                self._recordings.popitem(last=False)
            recordings = [r if r is not None else made[id(t)]
                          for r, t in zip(recordings, trees, strict=True)]
        return recordings

    def _check_params(self, plan, params):
        expected = plan.layout.registry.param_avals
        if _avals_key(jax.tree_util.tree_map(
                lambda x: jax.ShapeDtypeStruct(np.shape(x), jax.numpy.result_type(x)),
                params)) != _avals_key(expected):
            raise ConversionError(
                "autograph.fold: these parameters do not have the shapes the plan was "
                "recorded with; make the plan again with plan(trees, params)")


def _avals_key(avals):
    leaves, treedef = tree_util.tree_flatten(avals)
    return treedef, tuple((tuple(a.shape), np.dtype(a.dtype).name) for a in leaves)


def fold(fn=None, *, capacities=None):
    """Batch the recursive function ``fn(params, tree)`` over lists of trees.

    Returns a :class:`Fold`: ``fold(fn)(params, trees)`` equals
    ``jnp.stack([fn(params, t) for t in trees])`` (per leaf of the result), computed
    with every call of one signature at one height batched. Usable as a decorator,
    with or without arguments. ``capacities``: the rows a step of the executor may
    have (default: any, sized to each level of the batch on a fine geometric grid);
    a level wider than the largest runs in several steps.
    """
    if fn is None:
        return lambda f: Fold(f, capacities=capacities)
    return Fold(fn, capacities=capacities)
