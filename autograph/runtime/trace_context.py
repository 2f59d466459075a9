"""The trace-time context: what the runtime keeps per thread while it traces.

A staged region (a branch set, a loop body) is traced by running the user's code
once on tracers; while it runs, the operators it calls need to know where they
are: which conditions lead there (``paths``), what the loop indices range over
(``intervals``), whether the trace is a thrown-away probe whose loop decisions
are held (``unrolling``), how many staged regions and staged-list loops enclose
the point (``regions``, ``lists``), which print/assert modes are in force
(``effects``), which convert call lent recursion frames (``recursion``). Each of
those modules keeps its part in one field of ``FRAMES``, this thread's frame
record, and pushes and pops it with ``pushed``/``counted``.

This is also the one runtime module that asks JAX's private trace state
(``jax._src``), which has no public accessor: ``trace_active``, ``under_jit``,
``current_trace``, ``ended`` (a tracer of a trace that has ended),
``known_value`` (the constant a ``jit`` tracer stands for), ``pruned`` (JAX's
dead-code elimination of a jaxpr), and ``vmap``'s tracer type (``BatchTracer``,
which ``batched_select`` asks about); ``trace_flat``, the tracing
into a jaxpr that ``jax.make_jaxpr`` does, without the ``jit`` it builds around it;
the one cast JAX keeps private: to a dtype that stays weakly typed (``weak_cast``);
and the lowering of a staged ``if``'s ``custom_vmap`` call from its jaxpr as it is
(``lower_custom_vmap_calls_directly``).
"""

from __future__ import annotations

import contextlib
import threading

import jax
import jax.extend.core
from jax._src import core as _jax_core  # trace state has no public accessor
from jax._src.interpreters.batching import BatchTracer  # noqa: F401 - vmap's tracer type, for batched_select
from jax._src.lax import lax as _jax_lax  # a weak-typed cast has no public form
from jax.interpreters import mlir


class _Frames(threading.local):
    """This thread's trace-time context (a fresh one in each thread)."""

    def __init__(self):
        self.path_conditions: list = []   # paths.on_path: conditions to reach here
        self.replaying = 0                # paths.replaying: a body traced again for grad
        self.index_bounds: list = []      # intervals.bounded: (index, low, high)
        self.held_decisions: list = []    # unrolling.held: lists of loop decisions
        self.staged_regions = 0           # regions.staged: staged regions being traced
        self.staged_lists = 0             # lists: loops carrying staged lists
        self.modes = None                 # effects.using: print/assert modes, or default
        self.lending = None               # recursion.lend: id of the lending frame
        self.guarded_bodies: list = []    # differentiation.guarded_body: body traces


FRAMES = _Frames()


@contextlib.contextmanager
def pushed(stack: list, item):
    """While the block runs, ``item`` is on top of ``stack`` (a field of ``FRAMES``)."""
    stack.append(item)
    try:
        yield item
    finally:
        stack.pop()


@contextlib.contextmanager
def counted(field: str):
    """While the block runs, the counter ``FRAMES.<field>`` is one higher."""
    frames = FRAMES
    setattr(frames, field, getattr(frames, field) + 1)
    try:
        yield
    finally:
        setattr(frames, field, getattr(frames, field) - 1)


def trace_active() -> bool:
    """Whether a JAX trace is active (``jit``, ``grad``, ``vmap``...): only then can
    a condition, an iterable or a state be traced."""
    return not _jax_core.trace_state_clean()


def under_jit() -> bool:
    """Whether the current code is being traced into a staged program (``jit``)."""
    try:
        return _jax_core.unsafe_am_i_under_a_jit()
    except AttributeError:  # pragma: no cover - a JAX without it
        return False


def current_trace():
    """The innermost active JAX trace object (None where JAX has no ``trace_ctx``)."""
    try:
        return _jax_core.trace_ctx.trace
    except AttributeError:  # pragma: no cover - a JAX without trace_ctx
        return None


def ended(tracer) -> bool:
    """Whether ``tracer`` belongs to a trace that is neither the current one nor
    one around it: one that has ended (a ``jit`` that set an attribute of a module
    global left its tracer there). A trace JAX links to no parent counts as ended."""
    trace = getattr(tracer, "_trace", None)
    if trace is None:
        return False
    if not trace.is_valid():
        return True
    live = current_trace()
    while live is not None:
        if live is trace:
            return False
        live = getattr(live, "parent_trace", None)
    return True


def _tracing_internals():
    """``(wrap_init, trace_to_jaxpr_dynamic, DebugInfo)`` of the installed JAX where
    they take what ``trace_flat`` passes (as in jax 0.10 and 0.11), else None."""
    try:
        import inspect

        from jax._src import linear_util
        from jax._src.interpreters import partial_eval
        trace = partial_eval.trace_to_jaxpr_dynamic
        wrap = linear_util.wrap_init
        debug = linear_util.DebugInfo
        if (list(inspect.signature(trace).parameters)[:2] != ["fun", "in_avals"]
                or "debug_info" not in inspect.signature(wrap).parameters
                or debug._fields[:4] != ("traced_for", "func_src_info", "arg_names",
                                         "result_paths")):
            return None
        return wrap, trace, debug("autograph", "<autograph staged region>", None, None)
    except (ImportError, AttributeError, TypeError, ValueError):  # pragma: no cover
        return None


def _checked_internals():
    """``_tracing_internals()`` where tracing a function that closes over a concrete
    array gives one input per abstract value and the array among the constants, as
    ``trace_flat`` promises (jax 0.11 hoists such constants into the jaxpr's inputs);
    else None. Asked on the first ``trace_flat``, when JAX's backend is up anyway."""
    found = _tracing_internals()
    if found is None:
        return None
    wrap, trace, debug = found
    try:
        with jax.ensure_compile_time_eval():
            const = jax.numpy.ones(2, jax.numpy.float32)
        jaxpr, _, consts = trace(wrap(lambda a: [a * const], debug_info=debug),
                                 [jax.typeof(const)])
    except Exception:  # noqa: BLE001 - any surprise: the public path
        return None
    if len(jaxpr.invars) != 1 or len(consts) != len(jaxpr.constvars):
        return None
    return found


_UNCHECKED = object()
# None: trace_flat goes through jax.make_jaxpr (a test forces it)
TRACING = _UNCHECKED


def trace_flat(fn, avals):
    """``(jaxpr, consts, out_avals)`` of ``fn(*tracers)``, one tracer per abstract
    value in ``avals``, ``fn`` giving a list of arrays: what ``jax.make_jaxpr(fn)``
    gives (closed-over tracers of enclosing traces among the ``consts``), traced
    the way ``lax.cond`` traces a branch, without building a ``jit`` around it
    (reading the function's signature, missing its cache) each time."""
    global TRACING
    if TRACING is _UNCHECKED:
        TRACING = _checked_internals()
    if TRACING is None:
        closed = jax.make_jaxpr(fn)(*(jax.ShapeDtypeStruct(a.shape, a.dtype,
                                                           weak_type=a.weak_type)
                                      for a in avals))
        return closed.jaxpr, closed.consts, closed.out_avals
    wrap, trace, debug = TRACING
    jaxpr, out_avals, consts = trace(wrap(fn, debug_info=debug), list(avals))
    return jaxpr, consts, out_avals


def _call_lowering_parts():
    """``(custom_vmap_p, JAX's lowering rule for it, JAX's lowering of a custom_jvp
    call's jaxpr)`` where the installed JAX has them in the form
    ``lower_custom_vmap_calls_directly`` uses (as jax 0.10 does), else None."""
    try:
        import inspect

        from jax._src.custom_batching import custom_vmap_p
        from jax._src.custom_derivatives import _custom_jvp_vjp_call_lowering
        from jax._src.interpreters import mlir as _mlir
        original = _mlir._lowerings[custom_vmap_p].rule
        if "call_jaxpr" not in inspect.signature(_custom_jvp_vjp_call_lowering).parameters:
            return None
        return custom_vmap_p, original, _custom_jvp_vjp_call_lowering
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):  # pragma: no cover
        return None


def lower_custom_vmap_calls_directly(ours) -> bool:
    """Lower each ``custom_vmap`` call whose call jaxpr ``ours(call)`` accepts, and
    that has no effects, by lowering that jaxpr in place, as JAX lowers a
    ``custom_jvp`` call (its own rule, ``call_jaxpr`` given); every other call keeps
    JAX's rule. JAX lowers a ``custom_vmap`` call by ``mlir.lower_fun`` of its
    evaluation: the call's signature read and its jaxpr traced again, at every
    lowering, into the same equations. False where the installed JAX differs (its
    rule kept)."""
    parts = _call_lowering_parts()
    if parts is None:
        return False
    primitive, original, lower_jaxpr = parts

    def rule(ctx, *args, call, **params):
        if ctx.platforms is None and not call.effects and ours(call):
            return lower_jaxpr(ctx, *args, call_jaxpr=call)
        return original(ctx, *args, call=call, **params)

    mlir.register_lowering(primitive, rule)
    return True


def pruned(closed, used_outputs):
    """``(fn, used_inputs)``: a function of the inputs ``used_inputs`` marks, giving
    the outputs of the closed jaxpr ``closed`` that ``used_outputs`` marks, its
    equations that compute nothing else (and have no effects) left out, by JAX's
    dead-code elimination (which has no public form); ``jaxpr_as_fun(closed)``
    and every input where the installed JAX lacks it."""
    try:
        from jax._src.interpreters.partial_eval import dce_jaxpr
        jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, list(used_outputs))
    except (ImportError, TypeError, ValueError):  # pragma: no cover - another JAX
        run = jax.extend.core.jaxpr_as_fun(closed)
        return (lambda *xs: [y for y, used in zip(run(*xs), used_outputs, strict=True)
                             if used]), [True] * len(closed.jaxpr.invars)
    return jax.extend.core.jaxpr_as_fun(closed.replace(jaxpr=jaxpr)), used_inputs


def known_value(value):
    """``value`` itself where it is not a tracer; the constant a ``jit`` tracer stands
    for where it is one (``jnp.asarray(2)`` under ``jit``: a literal of the jaxpr,
    which the public API calls abstract); else None."""
    if not isinstance(value, _jax_core.Tracer):
        return value
    try:
        return value.get_const()
    except Exception:  # noqa: BLE001 - another tracer type, or another JAX: unknown
        return None


def weak_cast(value, dtype):
    """``value`` cast to ``dtype``, weakly typed, as Python's unrolled arithmetic
    leaves it: ``0 + x`` for a weak float ``x`` is a weak float, where the public
    ``lax.convert_element_type`` gives a strong one."""
    return _jax_lax._convert_element_type(value, dtype, weak_type=True)
