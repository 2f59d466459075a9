"""Whether a staged loop would compute a Python int in 32 bits where Python's unbounded
int leaves that range: then the loop runs unrolled, as ``jax.jit`` of the original
runs it (its ints stay Python ints).

    fact = 1
    for i in range(1, 21):
        fact *= i              # 20! > 2**31
    return x * fact

Staged, ``fact`` would be carried as a weak int32 and wrap silently; Python's is
2432902008176640000 (and ``x * fact`` raises JAX's OverflowError, as it does under
``jax.jit`` of the original). Before the loop is staged, its probe (one abstract
iteration, ``state.HoleProbe``) gives a jaxpr. The variables that start as Python ints
or bools and that the body makes from the index, from such counters and from
literals alone (``index_growth.python_counters``) take the same values on every run:
the integer equations computed from them alone are evaluated here with Python's ints,
iteration after iteration. If any result the program sees leaves its dtype's range,
a loop over a static range is unrolled, and one over a traced range raises
``OverflowError`` when run that far (``loops._keep_python_ints``); otherwise the
counters leave a static loop as Python ints.

Only scalar integer and boolean equations of the kinds in ``_RULES`` are evaluated
(calls such as ``jnp.remainder``'s are entered); a counter made from anything else
(a float, another primitive, a division by zero) is not judged and its loop stays
staged, as does a loop needing more than ``MAXIMUM_EVALUATIONS`` equations in all.
"""

from __future__ import annotations

import functools
import itertools
import operator

import numpy as np
from jax.extend.core import Literal

from autograph.runtime import index_growth, unrolling

MAXIMUM_EVALUATIONS = 20_000
TRACED_RANGE_PREFIX = 64   # iterations judged of a loop over a traced range
_BITS = 32


class LeavesInt32(unrolling.Unrolls):
    """Staged, the loop would wrap a Python int around its 32-bit range (raised
    before the loop is staged; ``loops._stage`` unrolls it)."""

    def __init__(self, found):
        super().__init__(
            f"{found.value} is a Python int computed from the loop index and Python-int "
            f"counters alone, outside {_BITS}-bit integers (iteration {found.iteration}): "
            "unrolled, the ints stay Python ints, as under jax.jit of the original")


class Overflow:
    """Where a loop's Python ints first leave their range: the iteration (counted
    from 0), the value, and the counters entering that iteration (``{position:
    value}``)."""

    def __init__(self, iteration, value, entering=None):
        self.iteration, self.value, self.entering = iteration, value, entering


def has_python_ints(given) -> bool:
    """Whether any of the loop's variables is a Python int before the loop."""
    return any(type(v) is int for v in given)


def _weak_int32(aval) -> bool:
    """Whether ``aval`` is what a Python int is staged as: a weak int32 scalar."""
    return (getattr(aval, "shape", None) == () and getattr(aval, "dtype", None) == np.int32
            and bool(getattr(aval, "weak_type", False)))


class Counted:
    """What evaluating a loop's Python-int counters found: ``overflow``, the first
    ``Overflow`` (or None), and ``final``, the counters' values after the loop (by
    position in its state) where every iteration was evaluated without one."""

    def __init__(self, overflow=None, final=None):
        self.overflow, self.final = overflow, final


def count(traced, given, items, trips) -> Counted:
    """Evaluate the loop's Python-int (and bool) counters: those it computes from
    its index and themselves alone, with every integer value computed from them,
    iteration after iteration. ``overflow``: the first iteration in which such a
    value leaves its integer range where the program would see it (a counter, or an
    input of a float or array operation); ``final``: the counters after ``trips``
    iterations (None where that is more than ``MAXIMUM_EVALUATIONS`` equations, or
    where a counter reads a value not evaluated here). ``traced`` is one staged
    iteration (``index_growth.StepTrace``), ``given`` the loop's state as the
    program gave it, ``items`` the values its index takes (an iterable; None: the
    item is not a static index)."""
    index = traced.index_leaf if items is not None else None
    jaxpr = traced.closed.jaxpr
    counters = [k for k in sorted(index_growth.python_counters(traced, given, index))
                if _stays_python(given[k], jaxpr.invars[traced.ins[0][k]].aval,
                                 jaxpr.outvars[traced.outs[k]].aval)]
    if not any(type(given[k]) is int for k in counters):
        return Counted()
    state_vars = [jaxpr.invars[traced.ins[0][k]] for k in counters]
    index_var = jaxpr.invars[index] if index is not None else None
    program = _Program(jaxpr, state_vars + ([index_var] if index_var is not None else []))
    outs = [traced.outs[k] for k in counters]
    if not program.makes(outs):
        return Counted()
    limit = min(trips, MAXIMUM_EVALUATIONS // max(program.cost, 1))
    state = [given[k] for k in counters]
    values = items if items is not None else itertools.repeat(None)
    done = program.run_loop(state_vars, state, index_var, values, limit, outs)
    if done is not None:   # every value within its range, all iterations at once
        state, taken = done
        if taken < trips:
            return Counted()
        return Counted(final={k: _python(given[k], v)
                              for k, v in zip(counters, state, strict=True)})
    for iteration, value in zip(range(limit), values, strict=False):
        inputs = dict(zip(state_vars, state, strict=True))
        if index_var is not None:
            inputs[index_var] = value
        found = program.run(inputs)
        if found is None:
            return Counted()   # a value it does not judge (a division by zero)
        if isinstance(found, _Wrapped):
            return Counted(Overflow(iteration, found.value,
                                    dict(zip(counters, state, strict=True))))
        state = [found[k] for k in outs]
    if limit < trips:
        return Counted()
    return Counted(final={k: _python(given[k], v) for k, v in zip(counters, state, strict=True)})


def _stays_python(start, entering, leaving) -> bool:
    """Whether a variable that is ``start`` before the loop is staged as a Python int
    (or bool) would be, entering and leaving an iteration (``p = p + jnp.int8(1)``
    makes an int8 array of a Python int: not a counter)."""
    if type(start) is bool:
        return entering.dtype == np.bool_ and leaving.dtype == np.bool_
    return type(start) is int and _weak_int32(entering) and _weak_int32(leaving)


def _python(start, value):
    """``value`` as the type of the counter's Python start (a bool stays a bool)."""
    return bool(value) if type(start) is bool else int(value)


class _GiveUp(Exception):  # noqa: N818 - a signal inside _Program.run
    """A rule met a value it does not judge (a shift past the width)."""


class _Observed(Exception):  # noqa: N818 - a signal inside _Program.run
    """A loop or branch inside saw a ``_Wrapped`` value."""

    def __init__(self, value):
        self.value = value


class _Wrapped:
    """A result outside its dtype's range (staged, it would wrap), and what is
    computed from it."""

    def __init__(self, value):
        self.value = value


def _copy(value):
    return value


class _Program:
    """The scalar integer and boolean equations of ``jaxpr`` computed from the
    variables ``inputs`` alone, flattened through calls (``jit``: its inputs and
    outputs copied in and out), as a list of Python steps; ``observed``: the values
    among them that the rest of the jaxpr reads (or that it returns)."""

    def __init__(self, jaxpr, inputs):
        self.steps = []
        self.cost = 0
        self.known = set(inputs)
        self.observed = set()
        self._flatten(jaxpr)
        self.outvars = jaxpr.outvars
        self.observed.update(v for v in jaxpr.outvars if not isinstance(v, Literal)
                             and v in self.known)

    def makes(self, positions) -> bool:
        """Whether the outputs at ``positions`` are computed by the steps."""
        return all(self._known(self.outvars[k]) for k in positions)

    def _known(self, v) -> bool:
        return isinstance(v, Literal) or v in self.known

    def _flatten(self, jaxpr):
        for eqn in jaxpr.eqns:
            if not self._emitted(eqn):
                self.observed.update(v for v in eqn.invars if not isinstance(v, Literal)
                                     and v in self.known)

    def _emitted(self, eqn) -> bool:
        if eqn.primitive.name == "scan":
            return self._scan(eqn)
        if eqn.primitive.name == "cond":
            return self._cond(eqn)
        if not all(self._known(v) and _scalar_int(v.aval) for v in eqn.invars):
            return False
        if not all(_scalar_int(v.aval) for v in eqn.outvars):
            return False
        param = index_growth.CALLS.get(eqn.primitive.name)
        if param is not None:   # (a staged if under vmap is a custom_vmap_call)
            inner = eqn.params.get(param)
            if inner is None or getattr(inner, "consts", None):
                return False
            inner = getattr(inner, "jaxpr", inner)
            if len(inner.invars) != len(eqn.invars) or len(inner.outvars) != len(eqn.outvars):
                return False
            self._copies(eqn.invars, inner.invars)
            self._flatten(inner)
            if not all(self._known(v) for v in inner.outvars):
                self.observed.update(v for v in inner.outvars if not isinstance(v, Literal)
                                     and v in self.known)
                return True
            self._copies(inner.outvars, eqn.outvars)
            return True
        rule = _RULES.get(eqn.primitive.name)
        if rule is None:
            return False
        wanted = _PARAMETERS.get(eqn.primitive.name)
        if wanted:
            rule = functools.partial(rule, **{k: eqn.params[k] for k in wanted})
        self.steps.append((rule, eqn.invars, eqn.outvars,
                           [_bounds(v.aval.dtype) for v in eqn.outvars]))
        self.known.update(eqn.outvars)
        self.cost += 1
        return True

    def _scan(self, eqn) -> bool:
        """A ``scan`` without scanned inputs (a ``fori_loop``): its carries made from
        known values alone, by the body's own program run ``length`` times."""
        consts, count = eqn.params["num_consts"], eqn.params["num_carry"]
        closed = eqn.params["jaxpr"]
        if len(eqn.invars) != consts + count or closed.consts:
            return False
        body = closed.jaxpr
        usable = {k for k, v in enumerate(eqn.invars)
                  if self._known(v) and _scalar_int(v.aval)}
        while True:   # the carries whose every iteration reads usable values alone
            deps = index_growth.dependence(body, [frozenset({k}) for k in range(len(body.invars))])
            keep = {k for k in usable
                    if k < consts or deps[k - consts] <= usable}
            inner = _Program(body, [body.invars[k] for k in sorted(keep)])
            keep = {k for k in keep if k < consts or inner.makes([k - consts])}
            if keep == usable:
                break
            usable = keep
        carried = sorted(k for k in usable if k >= consts)
        if not carried:
            return False
        length, positions = eqn.params["length"], sorted(usable)
        ins = [body.invars[k] for k in positions]
        outs = [k - consts for k in carried]

        def run_scan(*values):
            env = dict(zip(ins, values, strict=True))
            for _ in range(length):
                found = inner.run(env)
                if found is None:
                    raise _GiveUp
                if isinstance(found, _Wrapped):
                    raise _Observed(found)
                env.update(zip([body.invars[k] for k in carried], [found[k] for k in outs],
                               strict=True))
            return tuple(env[body.invars[k]] for k in carried)

        self.cost += length * inner.cost
        targets = [eqn.outvars[k] for k in outs]
        self.steps.append((run_scan, [eqn.invars[k] for k in positions], targets,
                           [None] * len(targets)))
        self.known.update(targets)
        return True

    def _cond(self, eqn) -> bool:
        """A ``cond`` on a known index: the outputs every branch makes from known
        values, by the chosen branch's program."""
        if not (self._known(eqn.invars[0]) and _scalar_int(eqn.invars[0].aval)):
            return False
        operands = eqn.invars[1:]
        usable = [k for k, v in enumerate(operands) if self._known(v) and _scalar_int(v.aval)]
        branches = []
        for closed in eqn.params["branches"]:
            if closed.consts:
                return False
            branch = closed.jaxpr
            branches.append((branch, _Program(branch, [branch.invars[k] for k in usable])))
        made = [k for k, v in enumerate(eqn.outvars) if _scalar_int(v.aval)
                and all(program.makes([k]) for _, program in branches)]
        if not made:
            return False

        def run_cond(which, *values):
            branch, program = branches[min(max(int(which), 0), len(branches) - 1)]
            found = program.run(dict(zip([branch.invars[k] for k in usable], values,
                                         strict=True)))
            if found is None:
                raise _GiveUp
            if isinstance(found, _Wrapped):
                raise _Observed(found)
            return tuple(found[k] for k in made)

        self.cost += max(program.cost for _, program in branches)
        targets = [eqn.outvars[k] for k in made]
        self.steps.append((run_cond, [eqn.invars[0], *(operands[k] for k in usable)],
                           targets, [None] * len(targets)))
        self.known.update(targets)
        return True

    def _copies(self, sources, targets):
        for source, target in zip(sources, targets, strict=True):
            self.steps.append((_copy, [source], [target], [None]))
            self.cost += 1
            self.known.add(target)

    def run(self, inputs):
        """The value of every output of the jaxpr the steps compute from ``inputs``
        (by variable); the first ``_Wrapped`` value the program observes; or None
        where a rule gives up."""
        plan = self._planned() if self._plan is None else self._plan
        wrapped_any = any(type(value) is _Wrapped for value in inputs.values())
        if not wrapped_any:
            try:
                if self._fast is None:
                    self._fast = _compiled(plan, self._outputs)
                return self._fast(inputs)
            except Exception:  # noqa: BLE001 - a value out of range, a rule's signal...
                pass   # ...: the steps again, one by one, say what it was
        env = dict(inputs)
        for rule, ins, outs, bounds in plan:
            # A literal is given as itself: (None, value); a variable as (var, _READ).
            args = [env[v] if value is _READ else value for v, value in ins]
            if wrapped_any:
                wrapped = _wrapped_input(rule, args)
                if wrapped is not None:
                    for v in outs:
                        env[v] = wrapped
                    continue
            try:
                results = rule(*args)
            except (_GiveUp, ZeroDivisionError):
                return None
            except _Observed as seen:
                return seen.value
            if type(results) is not tuple:
                results = (results,)
            for v, r, bound in zip(outs, results, bounds, strict=True):
                if bound is not None and not bound[0] <= r <= bound[1]:
                    r = _Wrapped(r)
                    wrapped_any = True
                env[v] = r
        if wrapped_any:
            for v in self.observed:
                if type(env.get(v)) is _Wrapped:
                    return env[v]
        return {k: env[v] if value is _READ else value for k, v, value in self._outputs}

    def run_loop(self, state_vars, state, index_var, values, limit, outs):
        """``(state after the iterations, how many)``: the steps run for at most
        ``limit`` iterations, the outputs at ``outs`` (positions) given back to
        ``state_vars`` each time and ``index_var`` taking ``values``, in one generated
        Python function (``_compiled_loop``); None where that meets anything but
        values within their ranges (``count`` then takes one iteration at a time,
        from the start, and says what it was)."""
        if index_var is not None and iter(values) is values:
            return None   # (one pass only: left for the iterations one at a time)
        plan = self._planned() if self._plan is None else self._plan
        loop = _compiled_loop(plan, self._outputs, state_vars, index_var, outs)
        if loop is None:
            return None
        try:
            return loop(state, iter(values), limit)
        except Exception:  # noqa: BLE001 - a value out of range, a rule's signal...
            return None

    _plan = _fast = None

    def _planned(self):
        """The steps with each literal input read once (``(None, value)``; a
        variable ``(var, _READ)``), and the outputs the steps compute likewise:
        ``run`` reads no ``Literal`` (an array) per step and iteration."""
        def spec(v):
            return (None, _literal(v)) if isinstance(v, Literal) else (v, _READ)

        self._plan = [(rule, [spec(v) for v in ins], outs, bounds)
                      for rule, ins, outs, bounds in self.steps]
        self._outputs = [(k, *spec(v)) for k, v in enumerate(self.outvars) if self._known(v)]
        return self._plan


def _compiled(plan, outputs):
    """``plan`` (``_Program._planned``) as one Python function of the inputs (by
    variable) giving the outputs, for the common case: every value within its
    dtype's range and no rule signalling. It raises on anything else (``_Slow``,
    a rule's own signal), and ``run`` then takes the steps one by one. A loop's
    counters are judged iteration after iteration (a hundred runs of the same
    steps): as local variables, not a dictionary of JAX variables, a step costs a
    call and a comparison."""
    names, lines, reads, refs = {}, [], [], []
    fresh = itertools.count()

    def ref(value):
        refs.append(value)
        return f"_r[{len(refs) - 1}]"

    def name(v):
        if v not in names:
            names[v] = f"v{next(fresh)}"
            reads.append(f"    {names[v]} = env[{ref(v)}]")
        return names[v]

    for rule, ins, outs, bounds in plan:
        args = ", ".join(name(v) if value is _READ else ref(value) for v, value in ins)
        _emit_step(lines, "    ", _call(rule, args, ref), outs, bounds, names, fresh)
    body = ", ".join(f"{k}: {name(v) if value is _READ else ref(value)}"
                     for k, v, value in outputs)
    source = "\n".join(["def fast(env):", *reads, *lines, f"    return {{{body}}}"])
    scope = {"_r": refs, "_Slow": _Slow}
    exec(_code(source), scope)  # noqa: S102 - our own steps
    return scope["fast"]


_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.lt: "<",
          operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
          operator.ne: "!=", operator.and_: "&", operator.or_: "|", operator.xor: "^"}



def _emit_step(lines, indent, call, outs, bounds, names, fresh):
    """The generated lines of one step: ``call``, its results unpacked, each checked
    against its bound (``raise _Slow`` outside it) and bound to a fresh name."""
    lines.append(f"{indent}r = {call}")
    if len(outs) == 1:
        if call.startswith("_r["):   # (a rule may give a 1-tuple)
            lines.append(f"{indent}if type(r) is tuple: (r,) = r")
        results = ["r"]
    else:
        lines.append(f"{indent}({', '.join(f'r{i}' for i in range(len(outs)))},) = r")
        results = [f"r{i}" for i in range(len(outs))]
    for v, result, bound in zip(outs, results, bounds, strict=True):
        if bound is not None:
            lines.append(f"{indent}if not {bound[0]} <= {result} <= {bound[1]}: raise _Slow")
        names[v] = f"v{next(fresh)}"
        lines.append(f"{indent}{names[v]} = {result}")

def _call(rule, args, ref) -> str:
    """The expression applying ``rule`` to ``args`` (their text, comma-separated) in
    a generated function: a binary operator written as itself, a conversion as
    ``int``/``bool``, a two-case select as a tuple index (what the rule computes,
    without a call); any other rule called through ``ref``."""
    infix = _INFIX.get(rule) if type(rule) is not functools.partial else None
    if infix is not None and args.count(", ") == 1:
        return f"({infix.join(f'({a})' for a in args.split(', '))})"
    if type(rule) is functools.partial and rule.func is _convert and not rule.args:
        return f"{'bool' if rule.keywords['new_dtype'] == np.bool_ else 'int'}({args})"
    if rule is _select_n and args.count(", ") == 2:
        which, *cases = args.split(", ")
        return f"({', '.join(cases)},)[{which}]"
    return f"{ref(rule)}({args})"


def _compiled_loop(plan, outputs, state_vars, index_var, outs):
    """``plan`` as one Python function running whole iterations: ``loop(state,
    items, limit)`` gives ``(state, iterations taken)``, the state (the values of
    ``state_vars``) made anew each iteration from the outputs at positions ``outs``
    and ``index_var`` taking the next of ``items``; it raises where ``_compiled``'s
    function would (and where ``items`` runs out). None where the outputs at
    ``outs`` are not all computed, or a state variable is read otherwise than as an
    input."""
    made = {k: (v, value) for k, v, value in outputs}
    if any(k not in made for k in outs) or len(set(state_vars)) != len(state_vars):
        return None
    names, lines, refs = {}, [], []
    fresh = itertools.count()

    def ref(value):
        refs.append(value)
        return f"_r[{len(refs) - 1}]"

    for v in state_vars:
        names[v] = f"v{next(fresh)}"
    starts = [names[v] for v in state_vars]
    if index_var is not None:
        if index_var in names:
            return None
        names[index_var] = f"v{next(fresh)}"
    for rule, ins, outs_, bounds in plan:
        args = []
        for v, value in ins:
            if type(value) in (int, bool):
                args.append(repr(value))
            elif value is not _READ:
                args.append(ref(value))
            elif v in names:
                args.append(names[v])
            else:
                return None   # read from outside the loop's inputs
        _emit_step(lines, "        ", _call(rule, ', '.join(args), ref), outs_, bounds,
                   names, fresh)
    nexts = []
    for k in outs:
        v, value = made[k]
        if value is not _READ:
            nexts.append(ref(value))
        elif v in names:
            nexts.append(names[v])
        else:
            return None
    take = [f"        {names[index_var]} = next(items)"] if index_var is not None else []
    source = "\n".join([
        "def loop(state, items, limit):",
        f"    ({', '.join(starts)},) = state",
        "    taken = 0",
        "    for _ in range(limit):",
        *take, *lines,
        f"        ({', '.join(starts)},) = ({', '.join(nexts)},)",
        "        taken += 1",
        f"    return [{', '.join(starts)}], taken"])
    scope = {"_r": refs, "_Slow": _Slow}
    exec(_code(source), scope)  # noqa: S102 - our own steps
    return scope["loop"]


@functools.lru_cache(maxsize=256)
def _code(source):
    """``source`` compiled (a loop traced again, or one like it, has the same steps'
    source: only their references differ)."""
    return compile(source, "<int_overflow steps>", "exec")


class _Slow(Exception):  # noqa: N818 - a signal inside _compiled's function
    """A value left its range: ``_Program.run`` takes the steps one by one."""


_READ = object()   # (in a planned step) the input is a variable, read from the values


def _wrapped_input(rule, args):
    """The ``_Wrapped`` value a step's result is, given its arguments: a select takes
    the case its (unwrapped) predicate picks; anything else is wrapped if an input is."""
    if rule is _select_n and type(args[0]) is not _Wrapped:
        case = args[1 + int(args[0])]
        return case if type(case) is _Wrapped else None
    return next((a for a in args if type(a) is _Wrapped), None)


def _scalar_int(aval) -> bool:
    dtype = getattr(aval, "dtype", None)
    return getattr(aval, "shape", None) == () and dtype is not None and _int_kind(dtype)


@functools.cache
def _int_kind(dtype) -> bool:
    """Whether ``dtype`` is a signed integer's or bool's (cached: NumPy's subtype test
    costs microseconds, and every equation of every probed loop asks)."""
    return np.issubdtype(dtype, np.signedinteger) or dtype == np.bool_


@functools.cache
def _bounds(dtype):
    """``(low, high)`` of an integer dtype; None for bool."""
    if dtype == np.bool_:
        return None
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _literal(v):
    value = np.asarray(v.val)
    return bool(value) if value.dtype == np.bool_ else int(value)


def _truncated_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _truncated_rem(a, b):
    return a - b * _truncated_div(a, b)


def _shift_left(a, b):
    if not 0 <= b < _BITS:
        raise _GiveUp
    return a << b


def _shift_right(a, b):
    if not 0 <= b < _BITS:
        raise _GiveUp
    return a >> b


def _not(a):
    return (not a) if type(a) is bool else ~a


def _convert(a, *, new_dtype):
    if new_dtype == np.bool_:
        return bool(a)
    return int(a)


def _select_n(which, *cases):
    return cases[int(which)]


def _sign(a):
    return (a > 0) - (a < 0)


def _integer_pow(a, *, y):
    if y < 0:
        raise _GiveUp
    return a ** y


def _clamp(low, a, high):
    return min(max(a, low), high)


_RULES = {
    "add": operator.add, "sub": operator.sub,
    "mul": operator.mul, "neg": operator.neg, "abs": abs, "sign": _sign,
    "max": max, "min": min, "square": lambda a: a * a, "integer_pow": _integer_pow,
    "div": _truncated_div, "rem": _truncated_rem,
    "shift_left": _shift_left, "shift_right_arithmetic": _shift_right,
    "and": operator.and_, "or": operator.or_,
    "xor": operator.xor, "not": _not,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "select_n": _select_n, "convert_element_type": _convert, "clamp": _clamp,
    "copy": _copy, "copy_p": _copy,
}
_PARAMETERS = {"integer_pow": ("y",), "convert_element_type": ("new_dtype",)}
