"""Recording's call sites, each specialised to the arguments it sees.

The recording copy calls ``__fold_sites__[i](f, ...)`` at its ``i``-th call
without keyword arguments (``rewrite.py``). The fast recorder starts every site
on a *learner* (its general hook, then a look at what the call was); from the
first call it sees, a site of a function is learned once per registry:

- a step of the recursion (``encode(p, node.left)``, ``f`` the folded function):
  the stepping copy (``rewrite.stepping_copy``: the memo lookup in the copy's own
  frame) where the call passes all the positional parameters and the function
  allows one, else the memo lookup and the copy's call, written for the site's arity;
- a node with plain arguments (placeholders, Python numbers, tuples and lists of
  placeholders), whose signature exists: a function generated for that pattern
  of arguments, which checks it (the callee, each argument's type, each
  placeholder's kind, each tuple's length) and then writes the node inline, the
  same row the general writer writes:

      cell(p, (h1, c1), (h2, c2))  ->  if f is cell and a0 is PARAMS and type(a1) is tuple ...:
                                           try: x0, x1 = a1; x2, x3 = a2   (another length:
                                           except ValueError: the general hook)
                                           if type(x0) is K0 and ...:  (K0: its kind's class)
                                               h = 1 + the inputs' largest height
                                               o0 = c0[0]; c0[0] = o0 + 2; o1 = o0 + 1
                                               ... one rows.extend, two Values
      leaf(p, word)                ->  ... the node's result looked up by its data,
                                       cse[word], before it is written

  (``PARAMS``: the recorder's own placeholder of the whole parameters; a part of
  them is tested by its type and its interned kind; ``c0``: the counter of the
  outputs' class, a list of one int.)

- anything else (a builtin, a call without placeholders, a helper taking tree
  nodes): the general hook, for good.

A call the site's pattern does not match (another callee, another shape, a
number where a placeholder was) goes to the general hook, so a site that sees
several patterns records the same as before, only slower. Generated functions
are compiled once per (site, pattern) and bound per batch to that recorder's
tables (``Spec.bind``).

    fill_sites(sites, recorder, code, arities, fallback)   # per copy, per batch
"""

from __future__ import annotations

import itertools
import operator
import types

from autograph.fold.recording import _BUILTINS, _RUNNING, Param, Value, value_class

MISS = object()              # not in the fast recorder's subexpression table

GENERAL = "general"          # a site left to the general hook

_recursion_binders: dict = {}    # arity -> compiled binder of the recursion step


class Spec:
    """A compiled specialisation of one call site: ``bind(recorder, sites)`` makes
    the site's hook for one recording."""

    __slots__ = ("kind", "binder", "sig", "arity")

    def __init__(self, kind, binder, sig=None, arity=None):
        self.kind = kind            # "recursion" or "node"
        self.binder = binder
        self.sig = sig
        self.arity = arity          # a recursion step's positional arguments

    def bind(self, recorder, fallback):
        """The hook of this site in ``recorder``'s recording (``fallback``: its
        general hook)."""
        if self.kind == "recursion":
            if recorder.stepper is not None and recorder.stepper_arity == self.arity:
                return recorder.stepper     # the memo in the copy's own frame
            copy = recorder.copies.get(recorder.fn)
            if copy is None:
                return fallback
            return self.binder(recorder.fn, copy, recorder.memo, fallback, recorder.params)
        sig = self.sig
        nodes = recorder.nodes_of(sig)
        counters = [recorder.counter(cls) for cls in out_groups(sig)]
        return self.binder(recorder.cse_of(sig), nodes.rows, nodes.data, fallback,
                           recorder.params, *counters)


def out_groups(sig):
    """The classes of ``sig``'s outputs, each once, in the order of first use: a node
    takes its outputs' rows of one class in one write of its counter (a list of
    one int: ``[next row]``), its first output of the class the first row."""
    return list(dict.fromkeys(sig.out_classes))


def fill_sites(sites, recorder, code, arities, fallback):
    """Fill ``sites``, the list of hooks of a copy's call sites (``arities``:
    ``rewrite.site_arities``), for ``recorder``: learned ones bound, the others
    learners (which replace themselves in it)."""
    specs = recorder.registry.site_specs.get(code)     # one hash of the code per copy
    if specs is None:
        specs = recorder.registry.site_specs[code] = [None] * len(arities)
    for i, arity in enumerate(arities):
        spec = specs[i]
        if arity is None or spec is GENERAL:
            sites.append(fallback)
        elif spec is None:
            sites.append(_learner(recorder, specs, i, sites, fallback))
        else:
            sites.append(spec.bind(recorder, fallback))


def _learner(recorder, specs, i, sites, fallback):
    """The hook of a site not learned yet: the general hook, then learn the site
    from this call (into ``specs``, the registry's for its function) and put its
    specialised hook in its place."""

    def learn(f, *args):
        out = fallback(f, *args)
        spec = specs[i]
        if spec is None:    # else learned by a nested call: the caller had read the
            #                 site's learner before its arguments recursed
            spec = specs[i] = _learn(recorder, f, args)
        sites[i] = fallback if spec is GENERAL else spec.bind(recorder, fallback)
        return out

    return learn


def _learn(recorder, f, args):
    if f is recorder.fn:
        return Spec("recursion", _recursion_binder(len(args)), arity=len(args))
    try:
        if f in _BUILTINS:
            return GENERAL
    except TypeError:           # an unhashable callable
        return GENERAL
    pattern, key = [], [f]
    found = False
    for x in args:
        t = type(x)
        if t.__base__ is Value or t is Param:
            pattern.append(("p" if t is Param else "v", x.kind))
            key.append(x.kind)
            found = True
        elif t is tuple or t is list:
            if not x or any(type(y).__base__ is not Value for y in x):
                return GENERAL
            pattern.append((t, tuple(y.kind for y in x)))
            key.append((t, len(x)))
            key.extend(y.kind for y in x)
            found = True
        elif t is int or t is float or t is bool:
            pattern.append(("d", t))
            key.append(t)
        else:
            return GENERAL
    sig = recorder.fast_signatures.get(tuple(key)) if found else None
    if sig is None:
        return GENERAL
    return Spec("node", _node_binder(f, sig, pattern), sig)


def _recursion_binder(arity):
    binder = _recursion_binders.get(arity)
    if binder is None:
        args = ", ".join(f"a{j}" for j in range(arity))
        key = "({})".format("".join(f"id(a{j}), " for j in range(arity)))
        if arity == 2:      # recording.memo_key's int key of a step fn(params, node)
            key = f"id(a1) if a0 is P else {key}"
        source = f"""
def bind(FN, copy, memo, fallback, P):
    memo_get = memo.get
    def site(f, {args}):
        if f is FN:
            key = {key}
            hit = memo_get(key)
            if hit is None:     # no RUNNING mark: see recording_fast.TOO_DEEP
                out = copy({args})
                memo[key] = (out, {args})   # the arguments kept alive: the key holds their ids
                return out
            if hit is not RUNNING:
                return hit[0]
        return fallback(f, {args})
    return site
"""
        binder = _recursion_binders[arity] = _compile(source, {"RUNNING": _RUNNING})
    return binder


def _node_binder(f, sig, pattern):
    """The binder of the hook that writes ``sig``'s nodes for calls of ``f`` with
    arguments of ``pattern``: ("v"|"p", kind), (tuple|list, kinds) or ("d", type)."""
    consts = {"F": f, "SIG": sig, "Value": Value, "Param": Param, "BUILD": sig.build,
              "MISS": MISS}
    args = [f"a{j}" for j in range(len(pattern))]
    callee = "f is F"
    if type(f) is types.MethodType:     # self.cell: a new bound method per attribute read
        consts.update(Method=types.MethodType, FUNC=f.__func__, SELF=f.__self__)
        callee = "type(f) is Method and f.__func__ is FUNC and f.__self__ is SELF"
    outer, unpack, inner, values, data = [callee], [], [], [], []
    names = itertools.count()
    for a, (tag, what) in zip(args, pattern, strict=True):
        if tag == "d":
            outer.append(f"type({a}) is {what.__name__}")
            data.append(a)
        elif tag in ("v", "p"):
            k = f"K{next(names)}"
            consts[k] = value_class(what) if tag == "v" else what
            test = "type({a}) is {k}" if tag == "v" else (     # a value's kind: its class
                "type({a}) is Param and {a}.kind is {k}")     # parameters' kinds interned
            if tag == "p" and what == ("p", ()):    # the whole parameters: the recorder's
                test = "{a} is PARAMS"              # own placeholder (another: the fallback)
            outer.append(test.format(a=a, k=k))
            if tag == "v":
                values.append(a)
        else:
            outer.append(f"type({a}) is {tag.__name__}")     # its length: by unpacking
            xs = []
            for kind in what:
                x, k = f"x{len(values)}", f"K{next(names)}"
                consts[k] = value_class(kind)
                xs.append(x)
                inner.append(f"type({x}) is {k}")
                values.append(x)
            unpack.append(f"{', '.join(xs)}, = {a}")
    n_out = len(sig.out_kinds)
    for j, kind in enumerate(sig.out_kinds):
        consts[f"OUT{j}"] = value_class(kind)
    groups = out_groups(sig)
    counters = "".join(f", c{m}" for m in range(len(groups)))
    idx = [f"i{j}" for j in range(len(values))]     # each input's row, read once
    floats = {a for a, (tag, what) in zip(args, pattern, strict=True)
              if tag == "d" and what is float}
    lines = [f"def bind(cse, rows, datas, fallback, PARAMS{counters}):",
             "    cse_get, extend = cse.get, rows.extend",
             "    append, extend_data = datas.append, datas.extend",
             f"    def site(f, {', '.join(args)}):",
             f"        if {' and '.join(outer)}:"]
    body = [] if not inner else [
        "try:", *["    " + line for line in unpack],     # try costs nothing until it raises
        "except ValueError:",                             # another length
        f"    return fallback(f, {', '.join(args)})",
        f"if {' and '.join(inner)}:"]
    pad = " " * (12 + (4 if inner else 0))
    lines += [" " * 12 + line for line in body]
    lines += [pad + line for line in [
        *[f"{i} = {v}.idx" for i, v in zip(idx, values, strict=True)],
        *_cse_lookup(_cse_key(data, floats), values),
        *_height(values),
        *_take_rows(sig.out_classes, groups),
        "extend((" + "".join(f"{x}, " for x in ["h", *idx,
                                                   *[f"o{j}" for j in range(n_out)]]) + "))",
        *_data(data),
        *[f"r{j} = OUT{j}(); r{j}.idx = o{j}; r{j}.height = h"
          for j in range(n_out)],     # recording.new_value without its frame
        *_cse_store(_build(sig, n_out), values)]]
    lines += [f"        return fallback(f, {', '.join(args)})", "    return site"]
    return _compile("\n".join(lines) + "\n", consts)


def _take_rows(out_classes, groups):
    """``o{j}``, the row of output ``j``: per class one read and one write of its
    counter ``c{m}``, the class's outputs its next rows in order."""
    lines, first = [], {}
    for j, cls in enumerate(out_classes):
        if cls not in first:
            first[cls] = j
            m = groups.index(cls)
            lines += [f"o{j} = c{m}[0]", f"c{m}[0] = o{j} + {out_classes.count(cls)}"]
        else:
            lines.append(f"o{j} = o{first[cls]} + {out_classes[:j].count(cls)}")
    return lines


def _cse_key(data, floats):
    """The key of a node without placeholder inputs in its signature's subexpression
    table (``FastRecorder.cse_of``): its data, as ``recording.data_key`` has it (one
    number bare, several a tuple; a float zero by its text: ``0.0 == -0.0``)."""
    parts = [f"({d} if {d} else str({d}))" if d in floats else d for d in data]
    if len(parts) == 1:
        return parts[0]
    return "(" + "".join(f"{d}, " for d in parts) + ")"


def _cse_lookup(key, values):
    """The subexpression table's lookup: for a call without placeholder inputs
    only (a leaf, ``leaf(p, word)``); see ``recording_fast.FastRecorder._writer``."""
    if values:
        return []
    return [f"key = {key}", "hit = cse_get(key, MISS)", "if hit is not MISS:",
            "    return hit"]


def _cse_store(build, values):
    if values:
        return [f"return {build}"]
    return [f"result = cse[key] = {build}", "return result"]


def _data(data):
    """The node's data arguments appended to its signature's flat data list."""
    if not data:
        return []
    if len(data) == 1:
        return [f"append({data[0]})"]
    return [f"extend_data(({''.join(d + ', ' for d in data)}))"]


def _height(values):
    """1 + the largest height of ``values`` (0 for none), as the general writer has it."""
    if not values:
        return ["h = 0"]
    lines = [f"h = {values[0]}.height"]
    for v in values[1:]:
        lines += [f"if {v}.height > h:", f"    h = {v}.height"]
    return lines + ["h += 1"]


def _build(sig, n_out):
    outs = ", ".join(f"r{j}" for j in range(n_out))
    if sig.build is tuple:
        return f"({outs}{',' if n_out == 1 else ''})"
    if isinstance(sig.build, operator.itemgetter):
        return "r0"
    return f"BUILD([{outs}])"


def _compile(source, consts):
    namespace = dict(consts)
    exec(compile(source, "<autograph.fold recording site>", "exec"), namespace)
    return namespace.pop("bind")     # no cycle through its globals: it dies by refcount
