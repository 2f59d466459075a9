"""Evaluate a jaxpr without compiling it: control flow in Python, ops one by one.

Compiling every fuzzed program with XLA costs about a second each on a small
machine; tracing costs a tenth of that. So the fast profile traces each program
into a jaxpr (the staging decisions autograph makes are all in the jaxpr) and runs
the jaxpr here: ``cond``, ``while``, ``scan`` and nested ``jit`` are interpreted
in Python, the elementwise primitives the generated programs use are computed with
NumPy in the dtype JAX gives them (int32 wraps, float32 rounds as in XLA: the ops
are IEEE ones), and any other primitive is bound eagerly, so XLA computes it. A
share of the programs is still compiled whole with ``autograph.to_graph`` as a
cross-check of this evaluator.
"""

from __future__ import annotations

import numpy as np

_CALLS = ("jit", "pjit", "closed_call", "core_call", "remat", "checkpoint")


def evaluate(closed, *args):
    """The outputs of the ``ClosedJaxpr`` ``closed`` applied to ``args`` (a list)."""
    return _eval(closed.jaxpr, closed.consts, args)


def _eval(jaxpr, consts, args):
    env = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        ins = [_read(env, v) for v in eqn.invars]
        outs = _apply(eqn, ins)
        if not eqn.primitive.multiple_results and eqn.primitive.name not in (
                "cond", "while", "scan", "custom_jvp_call", "custom_vjp_call") + _CALLS:
            outs = [outs]
        for var, value in zip(eqn.outvars, outs, strict=True):
            if type(var).__name__ != "DropVar":
                env[var] = value
    return [_read(env, v) for v in jaxpr.outvars]


def _read(env, var):
    if type(var).__name__ == "Literal":
        return var.val
    return env[var]


def _apply(eqn, ins):
    name, params = eqn.primitive.name, eqn.params
    if name == "cond":
        index, *operands = ins
        branch = params["branches"][int(np.asarray(index))]
        return evaluate(branch, *operands)
    if name == "while":
        nc, nb = params["cond_nconsts"], params["body_nconsts"]
        cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
        while True:
            pred = np.asarray(evaluate(params["cond_jaxpr"], *cond_consts, *carry)[0])
            if not pred.any():
                return carry
            new = evaluate(params["body_jaxpr"], *body_consts, *carry)
            if pred.shape == ():
                carry = new
            else:   # batched by vmap: as XLA lowers it, finished lanes keep their carry
                carry = [np.where(pred.reshape(pred.shape + (1,) * (np.ndim(c) - pred.ndim)),
                                  c_new, c) for c_new, c in zip(new, carry, strict=True)]
    if name == "scan":
        return _scan(params, ins)
    if name in ("custom_jvp_call", "custom_vjp_call") and "call_jaxpr" in params:
        return evaluate(params["call_jaxpr"], *ins)   # the primal computation
    if name in _CALLS and "jaxpr" in params:
        inner = params["jaxpr"]
        if hasattr(inner, "consts"):
            return evaluate(inner, *ins)
        return _eval(inner, (), ins)
    numpy_op = _NUMPY.get(name)
    if numpy_op is None:
        return eqn.primitive.bind(*ins, **params)
    ins = [np.asarray(x, v.aval.dtype) for x, v in zip(ins, eqn.invars, strict=True)]
    with np.errstate(all="ignore"):
        out = numpy_op(*ins, **params)
    return np.asarray(out, eqn.outvars[0].aval.dtype)


def _div(x, y):
    if np.issubdtype(x.dtype, np.integer):        # lax.div rounds toward zero
        q = np.abs(x) // np.where(y == 0, 1, np.abs(y))
        return np.where(y == 0, -1, np.sign(x) * np.sign(y) * q)
    return np.true_divide(x, y)


def _broadcast_in_dim(x, shape, broadcast_dimensions, **_):
    full = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        full[d] = x.shape[i]
    return np.broadcast_to(x.reshape(full), shape)


def _iota(dtype, shape, dimension, **_):
    ramp = np.arange(shape[dimension], dtype=dtype)
    full = [1] * len(shape)
    full[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(full), shape)


def _bitwise(np_bool, np_int):
    def op(*xs, **_):
        return (np_bool if xs[0].dtype == bool else np_int)(*xs)
    return op


def _unary(f):
    return lambda x, **_: f(x)


def _binary(f):
    return lambda x, y, **_: f(x, y)


_NUMPY = {
    "add": _binary(np.add), "sub": _binary(np.subtract), "mul": _binary(np.multiply),
    "div": _binary(_div), "rem": _binary(np.fmod), "max": _binary(np.maximum),
    "min": _binary(np.minimum), "neg": _unary(np.negative), "abs": _unary(np.abs),
    "sign": _unary(np.sign), "floor": _unary(np.floor), "ceil": _unary(np.ceil),
    "lt": _binary(np.less), "le": _binary(np.less_equal), "gt": _binary(np.greater),
    "ge": _binary(np.greater_equal), "eq": _binary(np.equal), "ne": _binary(np.not_equal),
    "and": _bitwise(np.logical_and, np.bitwise_and),
    "or": _bitwise(np.logical_or, np.bitwise_or),
    "xor": _bitwise(np.logical_xor, np.bitwise_xor),
    "not": _bitwise(np.logical_not, np.invert),
    "select_n": lambda which, *cases: np.choose(which.astype(np.int32), cases),
    "convert_element_type": lambda x, new_dtype, **_: x.astype(new_dtype),
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": lambda x, new_sizes, **_: np.reshape(x, new_sizes),
    "squeeze": lambda x, dimensions: np.squeeze(x, axis=tuple(dimensions)),
    "reduce_or": lambda x, axes, **_: np.any(x, axis=tuple(axes)),
    "reduce_and": lambda x, axes, **_: np.all(x, axis=tuple(axes)),
    "reduce_max": lambda x, axes, **_: np.max(x, axis=tuple(axes)),
    "reduce_min": lambda x, axes, **_: np.min(x, axis=tuple(axes)),
    "integer_pow": lambda x, y: x ** y,
    "square": _unary(np.square),
    "clamp": lambda lo, x, hi: np.clip(x, lo, hi),
    "copy": _unary(np.copy), "copy_p": _unary(np.copy),
    "iota": _iota,
}


def _scan_inputs(params, ins):
    """The scan's ``(consts, carry, xs)``: counted by ``num_consts``/``num_carry``
    up to jax 0.10, by the flat tree ``ft_in`` from jax 0.11 on."""
    if "num_consts" in params:
        nconsts, ncarry = params["num_consts"], params["num_carry"]
        return ins[:nconsts], ins[nconsts:nconsts + ncarry], ins[nconsts + ncarry:]
    consts, carry, xs = params["ft_in"].update(tuple(ins)).unpack()
    return list(consts), list(carry), list(xs)


def _scan(params, ins):
    consts, carry, xs = _scan_inputs(params, ins)
    ncarry, length = len(carry), params["length"]
    body = params["jaxpr"]
    xs = [np.asarray(x) for x in xs]
    ys_steps = []
    steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
    for k in steps:
        out = evaluate(body, *consts, *carry, *[x[k] for x in xs])
        carry, ys = out[:ncarry], out[ncarry:]
        ys_steps.append(ys)
    if params["reverse"]:
        ys_steps.reverse()
    n_ys = len(body.jaxpr.outvars) - ncarry
    if not ys_steps:
        avals = [v.aval for v in body.jaxpr.outvars[ncarry:]]
        stacked = [np.zeros((0, *a.shape), a.dtype) for a in avals]
    else:
        stacked = [np.stack([np.asarray(step[i]) for step in ys_steps]) for i in range(n_ys)]
    return [*carry, *stacked]
