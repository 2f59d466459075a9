"""Recording: the user's recursion run in Python over one tree, arrays as placeholders.

``record_tree`` calls the recording copy of the user's function (``rewrite.py``)
with a :class:`Param` standing for the shared parameters. Structure decides
itself in Python (``node.is_leaf``, ``node.children``); every call that receives
a placeholder becomes one *node* of the recording, and its result a new
:class:`Value` placeholder:

    cell(p, h_left, h_right)       ->  node (signature: cell, value f32[128] x 2, param p)
    h.sum() > 0                    ->  two nodes (a method call, a comparison)
    leaf(p, node.word)             ->  node (signature: leaf, data int32[], param p)

A signature is the callee, the argument structure, and what each argument leaf
is: a value (shape, dtype), a part of the parameters (its path), per-node data
(a Python number or a concrete array, batched into an array by the plan) or a
static Python value (a string, None...). Calls with the same signature are
batched together by the executor.

A branch on a computed value (``if h.sum() > 0``: ``bool`` of a placeholder)
cannot be decided while recording. The call that holds it is run twice, once
for each answer (the decisions before it replayed), and each leaf of its two
results is joined by a select node: both sides are computed for every node and
``jnp.where`` picks, as a batched ``if`` under ``vmap`` would. Recording is
therefore only for pure functions of (parameters, tree). A loop or recursion
whose length depends on computed values keeps asking for more decisions: it is
refused with a ``ConversionError`` at the user's line.

Calls with identical inputs are recorded once (a subtree shared by two parents,
a call repeated on the two sides of a branch).
"""

from __future__ import annotations

import builtins
import functools
import operator
import struct
import sys
import threading
from functools import partial

import jax
import numpy as np
from jax import tree_util

from autograph.errors import ConversionError
from autograph.fold.rewrite import recording_copy

# Decisions on computed values one call may take before it is taken for a loop
# whose trip count depends on them.
MAX_DECISIONS = 12

_local = threading.local()


# -- placeholders ---------------------------------------------------------------------

class Value:
    """A placeholder for one array a recorded node computes: (class, row, height).

    ``new_value(kind, idx, height)`` makes an object of the subclass of its kind
    (:func:`value_class`): the kind is a class attribute, so a placeholder has two
    slots to write and a specialised call site tests its type and kind with one
    ``type(x) is K``. Test for a placeholder with ``type(x).__base__ is Value``.
    No ``__new__`` or ``__init__``: ``K()`` is CPython's plain allocation, which the
    generated writers call and fill (faster than ``object.__new__(K)``)."""

    __slots__ = ("idx", "height")     # its row in its recording; 1 + its inputs' largest

    # (shape, dtype name): the buffer it lives in; read off its kind, not stored
    cls = property(lambda self: self.kind[1])

    shape = property(lambda self: self.cls[0])
    dtype = property(lambda self: np.dtype(self.cls[1]))
    ndim = property(lambda self: len(self.cls[0]))
    size = property(lambda self: int(np.prod(self.cls[0], dtype=np.int64)))

    def __repr__(self):
        return f"<fold placeholder {self.cls[1]}{list(self.cls[0])}>"

    __hash__ = object.__hash__

    def __len__(self):
        if not self.cls[0]:
            raise TypeError("len() of a 0-d array")
        return self.cls[0][0]

    # No __getattr__: jax.Array's methods and properties are defined on the class
    # below (``_array_attribute``), so reading a slot stays a plain attribute read
    # (a class with __getattr__ makes every attribute read of its objects slow).

    def __bool__(self):
        return _current().decide(self, _user_frame())

    def __iter__(self):
        if not self.cls[0]:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.cls[0][0]))

    def _escape(self, *_):
        frame = _user_frame()
        raise ConversionError(
            "autograph.fold: a computed array is read as a Python number here; while the "
            "tree is scheduled its values do not exist yet. Keep it an array (jnp "
            "operations), or branch on it with `if`, which fold stages as a select.",
            frame.f_code.co_filename, frame.f_lineno)

    __int__ = __float__ = __index__ = __complex__ = _escape


_VALUE_CLASSES: dict = {}


def new_value(kind, idx, height):
    """A placeholder of ``kind`` (see :class:`Value`)."""
    value = value_class(kind)()
    value.idx = idx
    value.height = height
    return value


def value_class(kind):
    """The subclass of :class:`Value` whose objects have ``kind`` (``("v", cls)``:
    ``cls`` the (shape, dtype name) of its buffer), made on first use."""
    cls = _VALUE_CLASSES.get(kind)
    if cls is None:
        cls = _VALUE_CLASSES[kind] = type("Value", (Value,), {
            "__slots__": (), "kind": kind, "__module__": __name__,
            "__qualname__": "Value"})
    return cls


class Param:
    """A placeholder for the shared parameters, or a part of them (``p['w']``)."""

    __slots__ = ("path", "aval", "kind")

    def __init__(self, path, aval):
        self.path = path
        self.aval = aval
        # interned: a specialised call site tests a parameter's kind with `is`
        self.kind = _PARAM_KINDS.setdefault(("p", path), ("p", path))

    def __repr__(self):
        return f"<fold parameters {''.join(_path_text(self.path)) or 'p'}>"

    __hash__ = object.__hash__

    def _is_array(self):
        return isinstance(self.aval, jax.ShapeDtypeStruct)

    def __getitem__(self, key):
        if self._is_array() or not _is_static_key(key):
            return _current().call(operator.getitem, (self, key), {})
        return Param(self.path + (("item", key),), self.aval[key])

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._is_array():
            if name in ("shape", "dtype", "ndim", "size"):
                return getattr(self.aval, name)
            if name in _ARRAY_PROPERTIES:
                return _current().call(_attribute(name), (self,), {})
            return MethodRef(self, name)
        return Param(self.path + (("attr", name),), getattr(self.aval, name))

    def __bool__(self):
        frame = _user_frame()
        raise ConversionError("autograph.fold: a branch on the parameters' values; the "
                              "recursion may branch on the tree's structure and on "
                              "computed arrays only", frame.f_code.co_filename,
                              frame.f_lineno)

    def __iter__(self):
        if self._is_array():
            return (self[i] for i in range(self.aval.shape[0]))
        if isinstance(self.aval, (list, tuple)):
            return (self[i] for i in range(len(self.aval)))
        return iter(self.aval)

    def __len__(self):
        return len(self.aval) if not self._is_array() else self.aval.shape[0]


class MethodRef:
    """``h.sum`` before it is called: the call records ``x.sum(...)`` as a node."""

    __slots__ = ("owner", "name")

    def __init__(self, owner, name):
        self.owner = owner
        self.name = name

    def __call__(self, *args, **kwargs):
        return _current().call(_method(self.name), (self.owner, *args), kwargs)


def resolve(params, path):
    """The part of ``params`` at ``path`` (a :class:`Param`'s path)."""
    for how, key in path:
        params = params[key] if how == "item" else getattr(params, key)
    return params


def _path_text(path):
    return [f"[{key!r}]" if how == "item" else f".{key}" for how, key in path]


def _is_static_key(key):
    return isinstance(key, (str, int, np.integer)) and not isinstance(key, bool)


_ARRAY_PROPERTIES = frozenset({"T", "mT", "real", "imag"})
_PARAM_KINDS: dict = {}
_callees: dict = {}


def _attribute(name):
    key = ("attr", name)
    if key not in _callees:
        _callees[key] = lambda x: getattr(x, name)
        _callees[key].__name__ = f".{name}"
    return _callees[key]


def _method(name):
    key = ("method", name)
    if key not in _callees:
        _callees[key] = lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)
        _callees[key].__name__ = f".{name}()"
    return _callees[key]


def _reflected(op):
    key = ("reflected", op)
    if key not in _callees:
        _callees[key] = lambda a, b: op(b, a)
        _callees[key].__name__ = f"reflected {op.__name__}"
    return _callees[key]


def select(pred, on_true, on_false):
    """The value of a branch on a computed ``pred``: both sides were computed."""
    return jax.numpy.where(pred, on_true, on_false)


def as_array(x):
    """A recursion's result that is not a computed value, as an array."""
    return jax.numpy.asarray(x)


def _binary(op):
    def method(self, other):
        return _current().call(op, (self, other), {})
    return method


def _unary(op):
    def method(self):
        return _current().call(op, (self,), {})
    return method


for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)]:
    for _cls in (Value, Param):
        setattr(_cls, f"__{_name}__", _binary(_op))
        setattr(_cls, f"__r{_name}__", _binary(_reflected(_op)))
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt),
                   ("ge", operator.ge), ("eq", operator.eq), ("ne", operator.ne)]:
    for _cls in (Value, Param):
        setattr(_cls, f"__{_name}__", _binary(_op))
for _name, _op in [("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs),
                   ("invert", operator.invert)]:
    for _cls in (Value, Param):
        setattr(_cls, f"__{_name}__", _unary(_op))
Value.__getitem__ = lambda self, key: _current().call(operator.getitem, (self, key), {})


def _array_attribute(name):
    """``h.T`` records the attribute; ``h.sum`` is a :class:`MethodRef`."""
    if name in _ARRAY_PROPERTIES:
        return property(lambda self: _current().call(_attribute(name), (self,), {}))
    return property(lambda self: MethodRef(self, name))


for _name in dir(jax.Array):
    if not _name.startswith("__") and not hasattr(Value, _name):
        setattr(Value, _name, _array_attribute(_name))

PLACEHOLDERS = (Value, Param)
_STATIC_TYPES = (str, bytes, type(None), type(Ellipsis), slice, type, np.dtype)
_SCALAR_KINDS = {bool: ("d", (), "bool"), int: ("d", (), "int32"),
                 float: ("d", (), "float32")}
_CONTAINERS = (tuple, list, dict)
_BUILTINS = frozenset(f for f in vars(builtins).values() if callable(f)
                      and getattr(f, "__hash__", None) is not None)


# -- signatures -----------------------------------------------------------------------

class Signature:
    """What every node of one batched group shares: callee, argument layout, outputs."""

    def __init__(self, number, callee, treedef, kinds, param_avals):
        self.number = number
        self.callee = callee
        self.treedef = treedef
        # per argument leaf: ('v', cls) ('p', path) ('d', shape, dtype) ('s', value)
        self.kinds = kinds
        self.in_classes = tuple(k[1] for k in kinds if k[0] == "v")
        self.data_avals = tuple(jax.ShapeDtypeStruct(k[1], np.dtype(k[2]))
                                for k in kinds if k[0] == "d")
        self.name = getattr(callee, "__qualname__", None) or repr(callee)
        values = [jax.ShapeDtypeStruct(shape, np.dtype(dtype)) for shape, dtype in
                  self.in_classes]
        out = jax.eval_shape(self._call, param_avals, values, list(self.data_avals))
        leaves, self.out_treedef = tree_util.tree_flatten(out)
        self.out_classes = tuple((tuple(leaf.shape), np.dtype(leaf.dtype).name)
                                 for leaf in leaves)
        self.out_kinds = tuple(("v", c) for c in self.out_classes)
        self.width = 1 + len(self.in_classes) + len(self.out_classes)   # a node's row
        if self.out_treedef == tree_util.tree_structure(0):
            self.build = operator.itemgetter(0)
        elif self.out_treedef == tree_util.tree_structure((0,) * len(leaves)):
            self.build = tuple
        else:
            self.build = partial(tree_util.tree_unflatten, self.out_treedef)

    def apply(self, params, values, data):
        """The leaves of the callee's result on one node's arguments, given as flat
        parts (values, data; the parameters whole)."""
        return tree_util.tree_leaves(self._call(params, values, data))

    def _call(self, params, values, data):
        values, data = iter(values), iter(data)
        leaves = []
        for kind in self.kinds:
            tag = kind[0]
            if tag == "v":
                leaves.append(next(values))
            elif tag == "d":
                leaves.append(next(data))
            elif tag == "p":
                leaves.append(resolve(params, kind[1]))
            elif tag == "slice":
                leaves.append(slice(*kind[1]))
            else:
                leaves.append(kind[1])
        args, kwargs = tree_util.tree_unflatten(self.treedef, leaves)
        return self.callee(*args, **kwargs)

    def __repr__(self):
        return f"<fold signature #{self.number} {self.name}>"


class Registry:
    """The signatures of one folded function for one layout of its parameters."""

    def __init__(self, param_avals):
        self.param_avals = param_avals
        self.signatures: dict = {}
        self.by_number: list[Signature] = []
        self.fast_signatures: dict = {}     # see Recorder.call
        self.class_index: dict = {}         # buffer class -> its column in a batch's merge
        self.root_keys: dict = {}           # the result structures of recordings, interned
        self.kinds: dict = {}               # the values' kinds, interned
        self.site_specs: dict = {}          # code -> per site: recording_sites.Spec, GENERAL
        self.fast_declined = None           # why recording_fast declined this function
        self.recorded = {"fast": 0, "general": 0}   # trees recorded by each path

    def signature(self, key, callee, treedef, kinds):
        sig = self.signatures.get(key)
        if sig is None:
            sig = Signature(len(self.by_number), callee, treedef, kinds, self.param_avals)
            # one kind object per class: a specialised call site tests it with `is`
            sig.out_kinds = tuple(self.kinds.setdefault(k, k) for k in sig.out_kinds)
            self.signatures[key] = sig
            self.by_number.append(sig)
        return sig


# -- one tree's recording -------------------------------------------------------------

class Nodes:
    """The nodes of one signature in one recording, in the order they were made."""

    __slots__ = ("rows", "data")

    def __init__(self):
        self.rows = []      # (height, input rows..., output rows...) per node, or flat
        self.data = []      # the data arguments of each node (the fast recorder: flat,
        #                     k numbers per node of a signature with k data arguments)


class Recording:
    """One tree's nodes as arrays, per signature; rows are local to the tree.

    ``groups[sig] = (heights (n,), inputs (n, values in), outputs (n, values out),
    [data (n, *shape) per data argument])``, views of ``packed[sig] = (rows, data)``
    where ``rows`` is ``(n, 1 + values in + values out)``: height, input rows,
    output rows; ``counts[cls]`` rows per buffer class, ``count_vector`` the same
    by the registry's class numbers; ``roots`` the (class, row) of each leaf of
    the result, ``root_treedef`` its structure."""

    batch = index = None    # recording_batch.BatchRecording: tree `index` of `batch`

    def __init__(self, packed, counts, roots, root_treedef, class_index, root_keys,
                 count_vector=None):
        if packed is not None:      # else a property of the subclass (recording_batch)
            self.packed = packed
        self.counts = counts
        self.class_index = class_index      # the registry's: shared by a batch's recordings
        if count_vector is None:            # else made by the caller, its classes indexed
            for cls in counts:
                class_index.setdefault(cls, len(class_index))
            count_vector = np.zeros(len(class_index), np.int64)
            for cls, n in counts.items():
                count_vector[class_index[cls]] = n
        self.count_vector = count_vector
        self.roots = roots
        self.root_classes = tuple(c for c, _ in roots)
        self.root_rows = tuple(idx for _, idx in roots)
        self.root_treedef = root_treedef
        # interned: the recordings of a batch must share it (an identity test per tree)
        self.root_key = root_keys.setdefault((root_treedef, self.root_classes),
                                             (root_treedef, self.root_classes))

    @functools.cached_property
    def columns(self):
        """``packed`` column-major, as ``schedule.merge`` concatenates it: per
        signature ``(rows (1 + values in + values out, n), data)``."""
        return {sig: (rows.T.copy(), data) for sig, (rows, data) in self.packed.items()}

    @functools.cached_property
    def groups(self):
        """``packed`` split into heights, inputs, outputs and data (views)."""
        return {sig: (rows[:, 0], rows[:, 1:1 + len(sig.in_classes)],
                      rows[:, 1 + len(sig.in_classes):], data)
                for sig, (rows, data) in self.packed.items()}


class _Fork(BaseException):
    """Raised by ``bool`` of a placeholder to rerun its call once per answer."""

    def __init__(self, pred, site, depth):
        self.pred, self.site, self.depth = pred, site, depth


class _Activation:
    """A call rerun with the answers ``prefix`` to its first decisions (a call run
    for the first time has None on the stack instead: no answers to replay)."""

    __slots__ = ("prefix", "pos")

    def __init__(self, prefix):
        self.prefix = prefix
        self.pos = 0


class Recorder:
    """Records one tree; ``fn`` is the user's recursive function."""

    def __init__(self, registry: Registry, fn):
        self.registry = registry
        self.fn = fn
        self.nodes: dict[Signature, Nodes] = {}
        self.counts: dict = {}
        self.memo: dict = {}
        self.cse: dict = {}
        self.params = Param((), registry.param_avals)     # the root's first argument
        self.fast_signatures = registry.fast_signatures
        self.copies: dict = {}          # function -> its recording copy, bound to hook
        self.hook = self.positional_hook = fold_call
        self.stack: list[_Activation | None] = []
        self.pending: list = []

    def call(self, f, args, kwargs):
        """Record ``f(*args, **kwargs)`` as a node (or run it, if it is part of the
        recursion); its result, with placeholders for the arrays."""
        values, data = [], []
        key = [f]
        if kwargs or _fast_key(args, key, values, data) < 0 or f is self.fn:
            return self._call_general(f, args, kwargs)
        return self._fast_node(f, args, key, values, data)

    def _fast_node(self, f, args, key, values, data):
        """The node of a call with plain arguments (``_fast_key``'s ``key``)."""
        key = tuple(key)
        sig = self.fast_signatures.get(key)
        if sig is None:
            sig = self._call_general(f, args, {}, want_signature=True)
            if not isinstance(sig, Signature):
                return sig
            self.fast_signatures[key] = sig
        return self._node(sig, values, data, data)

    def _call_general(self, f, args, kwargs, want_signature=False):
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        kinds, values, data, data_keys = [], [], [], []
        for x in leaves:
            t = type(x)
            if t.__base__ is Value:
                kinds.append(x.kind)
                values.append(x)
            elif t is Param:
                kinds.append(("p", x.path))
            elif t in _SCALAR_KINDS:
                kinds.append(_SCALAR_KINDS[t])
                data.append(x)
                data_keys.append(x)
            elif isinstance(x, (np.ndarray, np.generic, jax.Array)):
                if isinstance(x, jax.core.Tracer):
                    raise ConversionError(
                        "autograph.fold: a traced array reaches the recursion from outside "
                        "its arguments; pass it inside the parameters",
                        *_user_site(_user_frame()))
                a = np.asarray(x)
                kinds.append(("d", a.shape, a.dtype.name))
                data.append(a)
                data_keys.append((id(a),))      # never equal to a number's key
            elif t is slice:
                kinds.append(("slice", (x.start, x.stop, x.step)))
            elif isinstance(x, _STATIC_TYPES) or callable(x):
                kinds.append(("s", x))
            else:                    # a node of the tree: the call is part of the recursion
                return self.activate(f, args, kwargs)
        if f is self.fn:
            return self.activate(f, args, kwargs)
        kinds = tuple(kinds)
        key = (f, treedef, kinds)
        try:
            sig = self.registry.signatures.get(key)
        except TypeError:
            raise ConversionError(
                f"autograph.fold: an argument of {getattr(f, '__qualname__', f)!r} is neither "
                "an array, a number nor a hashable constant", *_user_site(_user_frame())) from None
        if sig is None:
            try:
                sig = self.registry.signature(key, f, treedef, kinds)
            except ConversionError:
                raise
            except Exception as e:
                raise ConversionError(
                    f"autograph.fold: calling {getattr(f, '__qualname__', f)!r} on these "
                    f"arguments fails: {type(e).__name__}: {e}",
                    *_user_site(_user_frame())) from e
        if want_signature:
            return sig
        return self._node(sig, values, data, data_keys)

    def _node(self, sig, values, data, data_keys):
        # rows, not the placeholders: comparing placeholders records a comparison (the
        # signature fixes each input's class, and a row its value in this recording)
        cse_key = (sig, *map(_IDX, values), data_key(data_keys))
        cse = self.cse
        hit = cse.get(cse_key)
        if hit is not None:
            return hit[0]
        height = 0
        row = [0]           # (height, input rows..., output rows...)
        for v in values:
            if v.height >= height:
                height = v.height + 1
            row.append(v.idx)
        row[0] = height
        counts = self.counts
        outs = []
        for kind in sig.out_kinds:
            cls = kind[1]
            idx = counts.get(cls, 0)
            counts[cls] = idx + 1
            outs.append(new_value(kind, idx, height))
            row.append(idx)
        nodes = self.nodes.get(sig)
        if nodes is None:
            nodes = self.nodes[sig] = Nodes()
        nodes.rows.append(row)
        nodes.data.append(data)
        result = sig.build(outs)
        cse[cse_key] = (result, data, values)
        return result

    def activate(self, f, args, kwargs):
        """Run the recording copy of ``f`` (the user's recursion or a helper taking
        tree nodes), once per distinct arguments."""
        key = memo_key(f, self.fn, args, kwargs, self.params)
        memo = self.memo
        hit = memo.get(key)
        if hit is not None:
            if hit is not _RUNNING:
                return hit[0]
            site = _user_site(_user_frame())
            raise ConversionError(
                f"autograph.fold: {getattr(f, '__qualname__', f)} calls itself again with the "
                "same arguments here, so its depth depends on computed values; fold "
                "schedules a recursion over the tree's structure only", *site)
        copy = self.copies.get(f)
        if copy is None:
            copy = self.copies[f] = self._copy(f)
        memo[key] = _RUNNING
        stack = self.stack
        stack.append(None)
        depth = len(stack)
        try:        # _run, inlined: this runs once per node of the tree
            try:
                out = copy(*args, **kwargs)
            except _Fork as fork:
                if fork.depth != depth:
                    raise
                out = fork
            finally:
                stack.pop()
            if type(out) is _Fork:
                out = self._forked(copy, args, kwargs, (), out)
        except RecursionError:
            del memo[key]
            if not self.pending:
                raise
            raise ConversionError(_DEPTH_MESSAGE, *self.pending[-1]) from None
        except BaseException:
            del memo[key]
            raise
        memo[key] = (out, args, kwargs)
        return out

    def _copy(self, f):
        """The recording copy of ``f`` bound to this recorder's hooks."""
        return recording_copy(f, self.hook, self.positional_hook)

    def _run(self, copy, args, kwargs, prefix):
        self.stack.append(_Activation(prefix))
        depth = len(self.stack)
        try:
            return copy(*args, **kwargs)
        except _Fork as fork:
            if fork.depth != depth:
                raise
            raised = fork
        finally:
            self.stack.pop()
        return self._forked(copy, args, kwargs, prefix, raised)

    def _forked(self, copy, args, kwargs, prefix, fork):
        """The call rerun once per answer of the branch ``fork`` stopped at, joined."""
        self.pending.append(fork.site)
        try:
            on_true = self._run(copy, args, kwargs, prefix + (True,))
            on_false = self._run(copy, args, kwargs, prefix + (False,))
        finally:
            self.pending.pop()
        return self._join(fork.pred, on_true, on_false, fork.site)

    def decide(self, pred: Value, frame):
        """``bool(pred)``: the decision being replayed, or a fork."""
        if not self.stack:
            raise ConversionError("autograph.fold: a placeholder used outside the recursion",
                                  *_user_site(frame))
        activation = self.stack[-1]
        prefix = () if activation is None else activation.prefix
        if activation is not None and activation.pos < len(prefix):
            answer = prefix[activation.pos]
            activation.pos += 1
            return answer
        site = _user_site(frame)
        if pred.cls[0] not in ((), (1,)):
            raise ConversionError(
                f"autograph.fold: the truth value of an array of shape {pred.cls[0]} is "
                "ambiguous; reduce it first (`.any()`, `.all()`, `.sum() > 0`)", *site)
        if len(prefix) >= MAX_DECISIONS:
            raise ConversionError(_DEPTH_MESSAGE, *site)
        raise _Fork(pred, site, len(self.stack))

    def _join(self, pred, on_true, on_false, site):
        true_leaves, true_def = tree_util.tree_flatten(on_true)
        false_leaves, false_def = tree_util.tree_flatten(on_false)
        if true_def != false_def:
            raise ConversionError(
                "autograph.fold: the two sides of this branch on a computed value return "
                f"different structures ({true_def} and {false_def}); fold computes both "
                "and selects, so they must match", *site)
        joined = []
        for a, b in zip(true_leaves, false_leaves, strict=True):
            if a is b or (not isinstance(a, PLACEHOLDERS) and not isinstance(b, PLACEHOLDERS)
                          and type(a) is type(b) and _same_python_value(a, b)):
                joined.append(a)
                continue
            if isinstance(a, Value) and isinstance(b, Value) and a.cls != b.cls:
                raise ConversionError(
                    "autograph.fold: the two sides of this branch on a computed value return "
                    f"arrays of different types ({a.cls[1]}{list(a.cls[0])} and "
                    f"{b.cls[1]}{list(b.cls[0])}); fold computes both and selects",
                    *site)
            joined.append(self.call(select, (pred, a, b), {}))
        return tree_util.tree_unflatten(true_def, joined)

    def record(self, tree) -> Recording:
        """Run the user's function on ``tree``; the nodes as arrays per signature."""
        previous = getattr(_local, "recorder", None)
        _local.recorder = self
        try:
            roots, treedef = self.run_root(self.params, tree)
        finally:
            _local.recorder = previous
        packed = self._arrays()
        return Recording(packed, dict(self.counts), roots, treedef,
                         self.registry.class_index, self.registry.root_keys)

    def run_root(self, params, tree):
        """The user's function run on ``tree`` (this recorder current): the (class,
        row) of each leaf of its result, and the result's structure."""
        return self.roots(self.activate(self.fn, (params, tree), {}))

    def roots(self, out):
        """The (class, row) of each leaf of the result ``out``, and its structure."""
        leaves, treedef = tree_util.tree_flatten(out)
        roots = []
        for leaf in leaves:
            if not isinstance(leaf, Value):
                leaf = self.call(as_array, (leaf,), {})
            roots.append((leaf.cls, leaf.idx))
        return roots, treedef

    def _arrays(self):
        packed = {}
        # by the registry's numbers, as recording_batch.split has them
        for sig, nodes in sorted(self.nodes.items(), key=lambda item: item[0].number):
            n = len(nodes.data)
            if not n:
                continue
            rows = np.asarray(nodes.rows, np.int32)
            data = [_column([d[j] for d in nodes.data], aval, n)
                    for j, aval in enumerate(sig.data_avals)]
            packed[sig] = (rows, data)
        return packed


def _column(values, aval, n):
    """The values of one data argument of ``n`` nodes as an array of ``aval``."""
    if not aval.shape:     # Python numbers: no asarray's type discovery
        return numbers(values, aval.dtype, n)
    return np.asarray(values, aval.dtype).reshape(n, *aval.shape)


_STRUCT_CODES = {np.dtype(np.int32): "i", np.dtype(np.int64): "q"}


def numbers(values, dtype, n):
    """``n`` Python numbers (a sequence) as a 1-d array of ``dtype``. Integers are
    packed by ``struct`` (about a third of ``np.fromiter``'s time per number, which
    converts each through a generic path); others, and integers out of the type's
    range (for NumPy's own OverflowError), by ``np.fromiter``."""
    code = _STRUCT_CODES.get(dtype)
    if code is not None:
        out = np.empty(n, dtype)
        try:
            struct.pack_into(f"={n}{code}", out, 0, *values)
            return out
        except struct.error:
            pass
    return np.fromiter(values, dtype, n)


_RUNNING = object()        # the memo's entry for a call still running


def data_key(data_keys):
    """The subexpression tables' key of a node's data (the numbers themselves, an
    array by its id): one bare, several a tuple; a float zero by its text, since
    ``0.0 == -0.0`` (and ``1 / x`` tells them apart)."""
    if len(data_keys) == 1:
        x = data_keys[0]
        return str(x) if type(x) is float and not x else x
    return tuple(str(x) if type(x) is float and not x else x for x in data_keys)


def memo_key(f, fn, args, kwargs, params):
    """The memo's key of the call ``f(*args, **kwargs)`` when ``fn`` is the folded
    function and ``params`` the recording's parameters placeholder: the ids of the
    arguments, led by ``f`` unless ``f`` is ``fn``. The steps of ``fn``, most of the
    memo, are keyed by their ids alone, and a step ``fn(params, node)`` by ``id(node)``,
    an int, not a tuple (the fast path's generated steps build the same keys; no
    other key is an int or a tuple that starts with one, so none collides)."""
    if kwargs:
        return (f, *map(id, args), *[(k, id(v)) for k, v in kwargs.items()])
    if f is fn:
        if len(args) == 2 and args[0] is params:
            return id(args[1])
        return tuple(map(id, args))
    return (f, *map(id, args))
_IDX = operator.attrgetter("idx")

_DEPTH_MESSAGE = (
    "autograph.fold: the recursion's depth depends on computed values here: a loop or a "
    "recursion continues on a branch over a computed array. fold schedules every call "
    "ahead from the tree's structure and stages each branch on a computed value as a "
    "select of both sides, so the number of calls must follow the tree's structure "
    "alone. Bound it by the structure (e.g. a depth counter from the tree), or run this "
    "part unbatched.")


def _fast_key(args, key, values, data):
    """The signature key of plain arguments (placeholders, Python numbers, tuples and
    lists of them), appending to ``key``, ``values`` and ``data``: the number of
    placeholders among them, or -1 for anything else (the general path flattens
    with ``jax.tree_util``)."""
    found = 0
    for x in args:
        t = type(x)
        if t.__base__ is Value:
            key.append(x.kind)
            values.append(x)
            found += 1
        elif t is Param:
            key.append(x.kind)
            found += 1
        elif t is int or t is float or t is bool:
            key.append(t)
            data.append(x)
        elif t is tuple or t is list:
            key.append((t, len(x)))
            inner = _fast_key(x, key, values, data)
            if inner < 0:
                return -1
            found += inner
        else:
            return -1
    return found


def _same_python_value(a, b):
    try:
        return bool(a == b)
    except Exception:
        return False


def _user_frame():
    """The innermost frame of user code (a recording copy) on the stack: not a
    stepping copy still in its prologue (``rewrite.stepping_copy``: its memo lookup,
    at the ``def`` line, hands a call back to the hooks for its caller's line)."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_name != "__fold_recording__" or (
            frame.f_lineno == frame.f_code.co_firstlineno
            and frame.f_code.co_varnames[:1] == ("__fold_f__",))):
        frame = frame.f_back
    return frame if frame is not None else sys._getframe(1)


def _user_site(frame):
    return frame.f_code.co_filename, frame.f_lineno


def _current() -> Recorder:
    recorder = getattr(_local, "recorder", None)
    if recorder is None:
        raise ConversionError("autograph.fold: a placeholder was used outside recording")
    return recorder


def fold_call(f, *args, **kwargs):
    """The hook of the recording copies: a call with a placeholder argument (at any
    depth) is recorded; the user's own recursion is run; anything else is called."""
    recorder = _local.recorder
    if f is recorder.fn:
        return recorder.activate(f, args, kwargs)
    if f in _BUILTINS:       # float(h), len(h), max(a, b): Python's own meaning, on the
        return f(*args, **kwargs)   # placeholder's methods (which record or refuse)
    if not kwargs:           # the fast path: placeholders, numbers, tuples of them
        key, values, data = [f], [], []
        found = _fast_key(args, key, values, data)
        if found > 0:
            return recorder._fast_node(f, args, key, values, data)
        if found == 0:
            return f(*args)
    for x in args:
        t = type(x)
        if t.__base__ is Value or t is Param or (t in _CONTAINERS
                                                   and _holds_placeholder(x)):
            return recorder.call(f, args, kwargs)
    if kwargs and _holds_placeholder(kwargs):
        return recorder.call(f, args, kwargs)
    return f(*args, **kwargs)


def _holds_placeholder(tree):
    return any(isinstance(leaf, PLACEHOLDERS) for leaf in tree_util.tree_leaves(tree))
