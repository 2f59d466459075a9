"""Python state a staged body changes without carrying it (issue 26.6 and 26.9): a
static loop runs unrolled (as jax.jit of the original runs it), a traced loop is a
ConversionError at the line that makes the change; never a change made once while
tracing."""

import collections
import dataclasses
import inspect
import itertools
import logging
import random
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.runtime import side_effects
from tests.differential import check


def pops_in_an_expression(x):
    stack = [1, 2, 3]
    total = 0
    for _ in range(3):
        total += x * stack.pop()
    return total


def helper_appends_to_callers_list(x):
    out = []

    def emit(v):
        out.append(v)

    for _ in range(3):
        x = x * 2
        emit(x)
    return sum(out)


def test_a_static_loop_changing_python_state_runs_unrolled(caplog):
    check(pops_in_an_expression, 10)
    check(helper_appends_to_callers_list, 1.0)
    with caplog.at_level(logging.INFO, logger="autograph.loops"):
        assert autograph.to_graph(pops_in_an_expression)(10) == 60
    line = pops_in_an_expression.__code__.co_firstlineno + 3
    assert any(f"{__file__}:{line}: for loop unrolled" in r.getMessage()
               and "list 'stack'" in r.getMessage() for r in caplog.records)


def primes():
    n = 2
    while True:
        if all(n % d for d in range(2, n)):
            yield n
        n += 1


def next_prime_above(x):
    found = primes()
    while True:
        p = next(found)
        if p > x:
            break
    return p


def traced_loop_with_helper(x, n):
    out = []

    def emit(v):
        out.append(v)

    i = 0
    while i < n:
        emit(x)
        x = x * 2
        i += 1
    return x


def appends_through_a_parameter(x, n):
    out = [1]

    def add(lst, v):
        lst.append(v)

    while n > 0:
        n = n - 1
        add(out, x)
    return len(out)


def appends_beside_a_nonlocal_writer(x, n):
    count = 0

    def bump():
        nonlocal count
        count += 1

    out = [1]

    def add(lst, v):
        lst.append(v)

    while n > 0:
        n = n - 1
        add(out, x)
    return len(out) + count


def writes_a_dict_beside_a_used_nonlocal_writer(x, n):
    count = 0

    def bump():
        nonlocal count
        count += 1

    table = {"a": 1}

    def put(d, v):
        d["a"] = v

    while n > 0:
        n = n - 1
        bump()
        put(table, x)
    return table["a"] + count


def writes_a_numpy_array_beside_a_nonlocal_writer(x, n):
    count = 0

    def bump():
        nonlocal count
        count += 1

    buf = np.array([2, 1], np.int32)

    def put(arr, v):
        arr[1] = v

    while n > 0:
        n = n - 1
        put(buf, 8)
    return buf[0] + buf[1] + count


@pytest.mark.parametrize("fn, args, line", [
    (next_prime_above, (5,), 3),
    (traced_loop_with_helper, (1.0, 3), 4),     # the append, in the helper
    (appends_through_a_parameter, (1.0, 2), 4),  # not the runtime's list_append
    # A closure cell makes the loop wrap its body to carry it: still watched.
    (appends_beside_a_nonlocal_writer, (1.0, 2), 10),
    (writes_a_dict_beside_a_used_nonlocal_writer, (1.0, 2), 12),   # the loop's line
    (writes_a_numpy_array_beside_a_nonlocal_writer, (1.0, 0), 12),   # the loop's line
])
def test_a_traced_loop_changing_python_state_is_refused_at_the_line(fn, args, line):
    assert autograph.convert(fn)(*args) == fn(*args)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match="staged because") as info:
            compiled(*args)
        assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(info.value)


def test_a_list_the_loop_carries_is_not_a_side_effect():
    def grows(x):
        out = []
        for i in range(3):
            out.append(x * i)
        return jnp.stack(out)
    check(grows, 2.0)


def test_watch_restores_lists_and_dicts():
    lst, table = [1, 2], {"a": 1}

    def body():
        return lst, table

    watch = side_effects.watch([body])
    lst.pop()
    table["b"] = 2
    changes = watch.changed()
    assert {c.name for c in changes} == {"lst", "table"}
    assert watch.restore(changes)
    assert lst == [1, 2] and table == {"a": 1}
    assert not watch.changed()


def emits_under_a_traced_if(x):
    out = []

    def emit(v):
        out.append(v)

    if x > 0:
        emit(x)
    return len(out)


def emits_a_python_value_under_a_traced_if(x):
    out = []

    def emit(v):
        out.append(v)

    if x > 0:
        emit(1)
    return len(out)


def emits_python_values_in_both_branches(x):
    out = []

    def emit(v):
        out.append(v)

    if x > 0:
        emit(1)
    else:
        emit(2)
    return len(out)


def pops_from_the_list_a_conditional_picks(x):
    a = [1, 2, 3]
    b = [4, 5, 6]
    s = 0
    while a and b:
        s = s + (a if x > 0 else b).pop(0)
        x = x - 1
    return s


def reads_the_list_a_conditional_picks(x):
    a = [1, 2, 3]
    b = [4, 5, 6]
    return sum(a if x > 0 else b) + (a if x > 1 else b)[1]


@pytest.mark.parametrize("fn, line, match", [
    (emits_under_a_traced_if, 4, "traces both branches"),
    # Python values too (issue 26.6): the list would grow whatever the condition.
    (emits_a_python_value_under_a_traced_if, 4, "traces both branches"),
    (emits_python_values_in_both_branches, 4, "traces both branches"),
    (pops_from_the_list_a_conditional_picks, 5, "chooses values, not objects"),
])
def test_a_staged_conditional_changing_python_state_is_refused_at_the_line(fn, line, match):
    for x in (1, -1):
        assert autograph.convert(fn)(x) == fn(x)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match=match) as info:
            compiled(1)
        assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(info.value)


def test_a_list_a_staged_conditional_picks_reads_as_that_list():
    for x in (2, 1, -1):
        check(reads_the_list_a_conditional_picks, x)


def logs_in_the_right_operand_of_and(x):
    log = []

    def note(v):
        log.append(v)
        return v > 0

    ok = (x > 1) and note(x)
    return ok, len(log)


def counts_in_the_right_operand_of_or(x):
    calls = {"n": 0}

    def positive(v):
        calls["n"] += 1
        return v > 0

    found = positive(x) or positive(-x)
    return found, calls["n"]


def logs_in_a_traced_loop_condition(x):
    seen = []

    def below(v):
        seen.append(1)
        return v < 10

    while below(x):
        x = x * 2
    return x, len(seen)


@pytest.mark.parametrize("fn, line, match", [
    # Python calls the right operand only where the left does not decide; staged, it
    # is traced once whatever the left operand is (Python (False, 0), was (False, 1)).
    (logs_in_the_right_operand_of_and, 4, "inside an `and` that is staged"),
    (counts_in_the_right_operand_of_or, 7, "inside an `or` that is staged"),   # the `or`
    # Python evaluates the condition once per iteration (5 here); staged, while tracing.
    (logs_in_a_traced_loop_condition, 7, "runs its body \\(and its condition\\)"),
])
def test_python_state_changed_by_a_staged_operand_or_condition_is_refused(fn, line, match):
    for x in (0.5, 2.0, 20.0):
        assert autograph.convert(fn)(x) == fn(x)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError, match=match) as info:
            compiled(0.5)
        assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(info.value)


def counts_static_loop_conditions(x):
    calls = {"n": 0}
    seen = []

    def more(i):
        calls["n"] += 1
        seen.append(i)
        return i < 3

    i = 0
    while more(i):
        x = x * 2
        i += 1
    return x, calls["n"], len(seen)


def test_a_python_loop_condition_runs_once_per_iteration_beside_traced_state():
    """The condition reads only Python values, so the loop runs as Python while ``x`` is
    traced; asking whether the condition is traced (an abstract run of it) must leave
    no trace in Python state (was 8 calls for Python's 4)."""
    check(counts_static_loop_conditions, 1.0)


def draws_from_random_in_a_static_loop(x):
    random.seed(0)
    for _ in range(3):
        x = x + random.random()
    return x


def draws_from_numpy_in_a_static_loop(x):
    np.random.seed(0)
    out = []
    for _ in range(3):
        out.append(x + np.random.rand())
    return out


def draws_from_a_generator_in_a_static_loop(x):
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = x + rng.normal()
    return x


def draws_from_an_instance_in_a_static_loop(x):
    r = random.Random(0)
    for _ in range(3):
        x = x * r.random()
    return x


@pytest.mark.parametrize("fn", [
    draws_from_random_in_a_static_loop, draws_from_numpy_in_a_static_loop,
    draws_from_a_generator_in_a_static_loop, draws_from_an_instance_in_a_static_loop])
def test_a_static_loop_drawing_python_random_numbers_runs_unrolled(fn):
    """A staged loop drew once, while tracing, and used that number in every iteration
    (to_graph 5.7, 5.7, 5.7 where Python and jax.jit of the original give 5.5, 5.7,
    5.6): a generator's state is watched, so the loop runs unrolled, as jit does."""
    expected = jax.jit(fn)(5.0)
    check(fn, 5.0)
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        np.testing.assert_allclose(compiled(5.0), expected, rtol=1e-6)


def draws_under_a_traced_if(x):
    r = random.Random(0)
    if x > 0:
        x = x + r.random()
    return x


def test_a_staged_branch_drawing_python_random_numbers_is_refused():
    assert autograph.convert(draws_under_a_traced_if)(1.0) == draws_under_a_traced_if(1.0)
    for compiled in (autograph.to_graph(draws_under_a_traced_if),
                     jax.jit(autograph.convert(draws_under_a_traced_if))):
        with pytest.raises(autograph.ConversionError,
                           match="random number generator 'r'.*jax.random") as info:
            compiled(1.0)
        assert f"{__file__}:" in str(info.value)


class Registry(dict):
    """A dict subclass of the user's (an override, as such classes have)."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)


def counts_under_a_traced_if(x):
    counts = collections.Counter()

    def note(key):
        counts[key] += 1

    for i in range(3):
        if x > i:
            note("big")
        else:
            note("small")
    return counts["big"], counts["small"]


def registers_in_a_static_loop(x):
    registry = Registry()

    def put(key):
        registry[key] = 1

    for i in range(3):
        x = x + 1
        put(i)
    return x, len(registry)


def test_subclasses_of_list_and_dict_are_watched_too():
    """A Counter a helper counts into under a staged ``if`` counted both branches for
    every input (Python (2, 1), compiled (3, 3)): only exact lists and dicts were
    watched. Subclasses are now watched, and put back with the base type's methods."""
    assert autograph.convert(counts_under_a_traced_if)(1.5) == (2, 1)
    for compiled in (autograph.to_graph(counts_under_a_traced_if),
                     jax.jit(autograph.convert(counts_under_a_traced_if))):
        with pytest.raises(autograph.ConversionError, match="Counter 'counts'"):
            compiled(1.5)
    check(registers_in_a_static_loop, 1.0)   # a static loop runs unrolled


@dataclasses.dataclass
class Particle:
    x: float


def moves_held_particles_in_a_traced_while(g):
    particles = [Particle(0.0)]
    while g > 0:
        for p in particles:
            p.x = p.x - 1.0
        g = g - 1.0
    return particles[0].x


def moves_held_particles_in_a_traced_if(g):
    particles = [Particle(0.0)]
    for i in range(3):
        if g > i:
            for p in particles:
                p.x = p.x - 1.0
    return particles[0].x


def moves_held_particles_in_a_static_loop(g):
    particles = {"a": Particle(0.0)}
    for _ in range(3):
        for p in particles.values():
            p.x = p.x - g
    return particles["a"].x


def test_plain_objects_a_watched_list_or_dict_holds_are_watched_by_their_attributes():
    """A body that sets attributes of objects a list holds (``for p in ps: p.x =
    ...``) changed them once while tracing: a traced ``while`` gave -1.0 where Python
    gives -3.0, a staged ``if`` moved them whatever its condition. Refused now at the
    region's line; a static loop runs unrolled (Python's values)."""
    assert autograph.convert(moves_held_particles_in_a_traced_while)(2.5) == -3.0
    assert autograph.convert(moves_held_particles_in_a_traced_if)(0.5) == -1.0
    for fn in (moves_held_particles_in_a_traced_while, moves_held_particles_in_a_traced_if):
        for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
            with pytest.raises(autograph.ConversionError,
                               match=r"test_side_effects.py:\d+: .*Particle object "
                                     r"'particles\[0\]'"):
                compiled(0.5)
    check(moves_held_particles_in_a_static_loop, 0.7)


# -- a loop's probe and the objects held in watched lists (probe12) ---------------------


def counts_moves_of_held_particles(g):
    particles = [Particle(0.0)]
    n = 0
    for _ in range(3):
        for p in particles:
            p.x = p.x - g
        n += 1
    return n, particles[0].x


def counts_held_particles_below_zero(g):
    particles = [Particle(0.0), Particle(1.0)]
    n = 0
    for _ in range(3):
        for p in particles:
            p.x = p.x - g
            if p.x < 0:
                n += 1
    return n, particles[1].x


def binds_a_held_particle_first(g):
    particles = [Particle(0.0)]
    for i in range(3):
        p = particles[0]
        p.x = p.x - g
        last = p.x * i
    return last, particles[0].x


def _move(p, g):
    p.x = p.x - g


def moves_queued_particles_through_a_helper(g):
    particles = collections.deque([Particle(0.0), Particle(2.0)])
    n = 0
    for _ in range(3):
        for p in particles:
            _move(p, g)
            setattr(p, "x", p.x * 0.5)  # noqa: B010 - the idiom under test
        n += 1
    return n, particles[0].x, particles[1].x


def moves_a_carried_particle(g):
    p = Particle(0.0)
    n = 0
    for _ in range(3):
        p.x = p.x - g
        if p.x < 0:
            n += 1
    return n, p.x


def moves_particles_a_tuple_holds(g):
    particles = (Particle(0.0), Particle(1.0))
    n = 0
    for _ in range(3):
        for p in particles:
            p.x = p.x - g
        n += 1
    return n, particles[1].x


@pytest.mark.parametrize("fn", [
    counts_moves_of_held_particles, counts_held_particles_below_zero,
    moves_particles_a_tuple_holds,
    binds_a_held_particle_first, moves_queued_particles_through_a_helper,
    moves_a_carried_particle])
def test_a_probed_static_loop_moving_held_objects_runs_unrolled(fn):
    """A loop whose body sets attributes of objects a list holds, and that takes its
    probe (a Python-int counter, a first binding, a traced ``if``), failed with
    UnexpectedTracerError: the probe left its tracers in the objects, the loop's
    trace read them and was bound with them as constants, then the loop ran
    unrolled. The probes' changes now decide before the trace: put back, unrolled,
    nothing staged (Python's values; an object carried directly stays staged)."""
    check(fn, 0.7)
    jaxpr = jax.make_jaxpr(autograph.convert(fn))(0.7)
    assert not jaxpr.consts
    if fn is not moves_a_carried_particle:
        assert "scan" not in str(jaxpr) and "while" not in str(jaxpr)


@dataclasses.dataclass
class Tally:
    n: int


@dataclasses.dataclass
class Walker:
    x: float
    tally: Tally
    trail: list = dataclasses.field(default_factory=list)


def tallies_held_walkers(g):
    walkers = [Walker(0.0, Tally(0))]
    t = 0.0
    for _ in range(3):
        for w in walkers:
            w.tally.n += 1
        t = t + g
    return t, walkers[0].tally.n


def trails_held_walkers(g):
    walkers = {"a": Walker(0.0, Tally(0))}
    for i in range(3):
        for w in walkers.values():
            w.trail.append(i)
            w.x = w.x - g
    return walkers["a"].x, len(walkers["a"].trail)


def tallies_a_carried_walker(g):
    w = Walker(0.0, Tally(0))
    for _ in range(3):
        w.tally.n += 1
        w.x = w.x - g
    return w.x, w.tally.n


@dataclasses.dataclass
class Holder:
    tally: Tally


def tallies_through_a_closure(g):
    h = Holder(Tally(0))
    t = 0.0
    for _ in range(3):
        h.tally.n += 1
        t = t + g
    return t, h.tally.n


def tallies_held_walkers_in_a_traced_while(g):
    walkers = [Walker(0.0, Tally(0))]
    t = 0.0
    while t < 2.0 * g:
        for w in walkers:
            w.tally.n += 1
        t = t + g
    return t, walkers[0].tally.n


@pytest.mark.parametrize("fn", [tallies_held_walkers, trails_held_walkers,
                                tallies_a_carried_walker, tallies_through_a_closure])
def test_objects_that_watched_objects_hold_are_watched_too(fn):
    """``w.tally.n += 1`` changed ``w.tally``, which no watch saw: a staged loop
    counted once while tracing (Python 3, converted 1 or 4), a list a held object
    holds the same. What watched and carried plain objects hold is watched three
    levels deep: a static loop runs unrolled."""
    check(fn, 0.7)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_a_traced_loop_changing_what_a_held_object_holds_is_refused_at_the_line():
    """Refused at the line that sets the attribute (found by a line trace of the
    body, on the way to the error), saying how to carry it."""
    fn = tallies_held_walkers_in_a_traced_while
    assert autograph.convert(fn)(0.7) == (1.4, 2)
    line = _line_of(fn, "w.tally.n += 1")
    for compiled in (autograph.to_graph(fn), jax.jit(autograph.convert(fn))):
        with pytest.raises(autograph.ConversionError,
                           match=rf"test_side_effects.py:{line}: .*Tally object "
                                 r"'walkers\[0\]\.tally'.*Keep the attribute in a "
                                 r"variable the loop carries"):
            compiled(0.7)
    line = _line_of(moves_held_particles_in_a_traced_while, "p.x = p.x - 1.0")
    with pytest.raises(autograph.ConversionError, match=rf"test_side_effects.py:{line}: "):
        autograph.to_graph(moves_held_particles_in_a_traced_while)(0.5)


def test_watch_restores_what_held_objects_hold():
    walkers = [Walker(0.0, Tally(0))]

    def body():
        return walkers

    watch = side_effects.watch([body])
    walkers[0].tally.n = 5
    walkers[0].trail.append(1)
    changes = watch.changed()
    assert {c.name for c in changes} == {"walkers[0].tally", "walkers[0].trail"}
    assert watch.restore(changes)
    assert walkers == [Walker(0.0, Tally(0))] and not watch.changed()


_LOG = logging.getLogger("tests.side_effects.held")


@dataclasses.dataclass
class Logged:
    w: float
    log: logging.Logger


_MODELS = [Logged(1.0, _LOG)]


def logs_through_a_held_object(g):
    models = _MODELS
    x = g
    for _ in range(3):
        if models[0].log.isEnabledFor(logging.DEBUG):
            x = x + 1.0
        x = x * models[0].w + g
    return x


def logs_in_a_traced_while(g):
    x = g
    while x < 10.0:
        if _LOG.isEnabledFor(logging.DEBUG):
            x = x + 1.0
        x = x * 2.0 + g
    return x


def test_objects_of_a_library_class_are_not_followed():
    """A logger fills its cache when asked whether it is enabled: an object of a
    library's class is not followed into what it holds, nor watched where the body
    reaches it directly, so these loops stay staged (followed, the first ran
    unrolled and the second was refused)."""
    for fn in (logs_through_a_held_object, logs_in_a_traced_while):
        expected = fn(1.0)
        _LOG._cache.clear()   # (a CPython detail: the logger's cache, filled on use)
        with autograph.runtime.unrolling.count_decisions() as seen:
            assert float(autograph.to_graph(fn)(1.0)) == expected
        assert seen.counts["unrolled"] == 0 and seen.counts["staged"] == 1


def nested_namespace_in_a_static_loop(x):
    o = types.SimpleNamespace(sub=types.SimpleNamespace(n=0))
    for _ in range(3):
        o.sub.n = o.sub.n + 1   # o is carried as its attributes; o.sub is watched
        x = x * 2
    return x, o.sub.n


def nested_namespace_in_a_staged_if(x):
    o = types.SimpleNamespace(sub=types.SimpleNamespace(n=0))
    for i in range(3):
        if x > i:
            o.sub.n = o.sub.n + 1
    return o.sub.n


def test_a_namespace_inside_a_carried_object_is_watched_as_the_users():
    # A SimpleNamespace holds only the user's attributes: it is watched as a user's
    # object would be (the static loop runs unrolled, the staged if is refused).
    got = autograph.to_graph(nested_namespace_in_a_static_loop)(jnp.float32(1.0))
    assert (float(got[0]), int(got[1])) == nested_namespace_in_a_static_loop(1.0)
    with pytest.raises(autograph.ConversionError, match=r"test_side_effects.py:\d+: this changes "
                       r"the Python SimpleNamespace object .o.sub."):
        autograph.to_graph(nested_namespace_in_a_staged_if)(jnp.float32(2.0))


class ClassTally:
    count = 0


def counts_in_a_class_attribute(x):
    ClassTally.count = 0
    for _ in range(3):
        ClassTally.count += 1   # a class attribute: the class is watched, the loop unrolled
        x = x * 2
    return x, ClassTally.count


def sets_a_class_attribute_in_a_staged_if(x):
    ClassTally.count = 0
    if x > 0:
        ClassTally.count = ClassTally.count + 1
    return ClassTally.count


def test_a_class_attribute_a_region_changes_is_watched():
    got = autograph.to_graph(counts_in_a_class_attribute)(jnp.float32(1.0))
    assert (float(got[0]), int(got[1])) == counts_in_a_class_attribute(1.0)
    with pytest.raises(autograph.ConversionError, match=r"test_side_effects.py:\d+: this changes "
                       r"the Python class 'ClassTally'"):
        autograph.to_graph(sets_a_class_attribute_in_a_staged_if)(jnp.float32(1.0))
    assert ClassTally.count == 0   # put back


# A staged `if` whose branches leave a watched attribute as it was by identity: the
# false branch reads the true branch's write (`M.n = M.n + 1`, then `M.n - 1`: the
# int 0 is the same object as at the start). The watch is settled between the two
# branches' traces, so the first branch's change is refused at its line.
class Counted:
    n = 0
    calls = 0

    def steps_its_class_by_type(self, x):
        if x > 0:
            type(self).calls += 1
        return x

    def steps_its_class_by_dunder(self, x):
        if x > 0:
            self.__class__.calls += 1
        return x


def steps_a_class_both_ways(x):
    Counted.n = 0
    if x > 0:
        Counted.n = Counted.n + 1
    else:
        Counted.n = Counted.n - 1
    return Counted.n


HELD_COUNTERS = [types.SimpleNamespace(n=0)]


def steps_a_held_object_both_ways(x):
    HELD_COUNTERS[0].n = 0
    if x > 0:
        HELD_COUNTERS[0].n = HELD_COUNTERS[0].n + 1
    else:
        HELD_COUNTERS[0].n = HELD_COUNTERS[0].n - 1
    return HELD_COUNTERS[0].n


def _method(name):
    return getattr(Counted(), name)


@pytest.mark.parametrize("fn, line", [
    (steps_a_class_both_ways, 3),
    (steps_a_held_object_both_ways, 3),
    (_method("steps_its_class_by_type"), 2),
    (_method("steps_its_class_by_dunder"), 2),
])
def test_a_change_the_other_branch_undoes_is_refused_at_the_line(fn, line):
    for x in (1.0, -1.0):
        Counted.calls = 0
        assert autograph.convert(fn)(x) == fn(x)
    Counted.calls = 0
    with pytest.raises(autograph.ConversionError, match="traces both branches") as info:
        autograph.to_graph(fn)(-1.0)
    assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(info.value)
    assert Counted.calls == 0 and Counted.n == 0   # put back


def zip_steps(x):
    it = zip([1.0, 2.0, 3.0], [0.5, 0.25, 0.125], strict=True)
    for _ in range(3):
        a, b = next(it)
        if x > a:
            x = x - b
    return x


def cycle_steps(x):
    signs = itertools.cycle([1.0, -1.0])
    for _ in range(4):
        s = next(signs)
        if x > 0:
            x = x + s
    return x


def chain_steps(x):
    it = itertools.chain([1.0], [2.0, 3.0])
    for _ in range(3):
        v = next(it)
        if x > v:
            x = x - v
    return x


def cycle_while(x):
    signs = itertools.cycle([2.0, -1.0])
    while x < 6:
        x = x + next(signs)
    return x


@pytest.mark.parametrize("fn, x", [(zip_steps, 4.5), (cycle_steps, 1.5), (chain_steps, 4.5)])
def test_an_iterator_stepped_in_a_static_loop_is_stepped_per_iteration(fn, x):
    # Its step cannot be undone (a cycle's position is not even visible): the loop
    # runs unrolled, as jax.jit of the original runs it.
    assert float(autograph.to_graph(fn)(x)) == fn(x)
    assert float(jax.jit(autograph.convert(fn))(x)) == fn(x)


def test_an_iterator_stepped_in_a_staged_while_is_refused_at_its_line():
    # (It took one step while tracing: the compiled loop never ended.)
    with pytest.raises(autograph.ConversionError, match="iterator 'signs'") as info:
        autograph.to_graph(cycle_while)(1.0)
    assert f"{__file__}:{cycle_while.__code__.co_firstlineno + 2}" in str(info.value)


def make_counter(start=0):
    count = start

    def bump(v):
        nonlocal count
        count += 1
        return v * count

    def read():
        return count

    return bump, read


def bumps_in_a_range_loop(x):
    bump, read = make_counter()
    total = 0.0
    for _ in range(3):
        total = total + bump(x)
    return total, read()


def bumps_in_a_staged_if(x):
    bump, read = make_counter()
    if x > 0:
        y = bump(x)
    else:
        y = x
    return y, read()


def scales_by_a_closure(xs):
    factor = 3.0

    def scale(v):
        return v * factor

    total = 0.0
    for x in xs:
        total = total + scale(x)
    return total


def test_a_helpers_nonlocal_assigned_in_a_static_loop_counts_every_iteration():
    """``bump`` assigns ``count``, a variable of ``make_counter``'s, which the loop
    does not carry: traced once, it counted one call (1 where Python counts 3).
    The loop now runs unrolled, as ``jax.jit`` of the original runs it."""
    x = jnp.float32(2.0)
    expected = bumps_in_a_range_loop(x)
    assert expected[1] == 3
    assert autograph.convert(bumps_in_a_range_loop)(2.0) == bumps_in_a_range_loop(2.0)
    for compiled in (autograph.to_graph(bumps_in_a_range_loop),
                     jax.jit(autograph.convert(bumps_in_a_range_loop))):
        total, count = compiled(x)
        assert float(total) == float(expected[0]) == 12.0 and int(count) == 3


def test_a_helpers_nonlocal_assigned_under_a_traced_condition_is_refused():
    """Python assigns it only where ``x > 0``; a staged ``if`` traces the branch
    once whatever ``x``: a ConversionError at the user's line, naming the variable."""
    assert autograph.convert(bumps_in_a_staged_if)(-1.0) == (-1.0, 0)
    for compiled in (autograph.to_graph(bumps_in_a_staged_if),
                     jax.jit(autograph.convert(bumps_in_a_staged_if))):
        with pytest.raises(autograph.ConversionError, match="bump.count") as raised:
            compiled(jnp.float32(-1.0))
        assert raised.value.filename == __file__
        assert raised.value.lineno == bumps_in_a_staged_if.__code__.co_firstlineno + 2


def test_a_helper_reading_its_closure_stays_staged(caplog):
    xs = jnp.arange(4.0)
    with caplog.at_level(logging.DEBUG, logger="autograph.loops"):
        assert float(autograph.to_graph(scales_by_a_closure)(xs)) == \
            float(scales_by_a_closure(xs)) == 18.0
    messages = [r.getMessage() for r in caplog.records]
    assert any("for loop staged" in m for m in messages), messages
    assert not any("unrolled" in m for m in messages), messages
