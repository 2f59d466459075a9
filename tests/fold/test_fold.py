"""autograph.fold against the plain per-node recursion: eager, inside jit, under grad."""

import itertools
import random
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import autograph
from autograph.fold import schedule
from autograph.fold.schedule import bucket
from tests.fold import trees as T

RTOL_ROOTS = 1e-6
RTOL_GRADS = 1e-5


def assert_close(actual, expected, rtol):
    for a, e in zip(jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected),
                    strict=True):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        assert a.shape == e.shape
        scale = np.maximum(np.abs(e).max(), 1e-30)
        assert np.abs(a - e).max() <= rtol * scale, (np.abs(a - e).max(), scale)


def stacked(fn, p, trees):
    outs = [fn(p, t) for t in trees]
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *outs)


@pytest.fixture(scope="module")
def lstm():
    p = T.treelstm_params(jax.random.PRNGKey(0), 16)
    trees = T.random_batch(random.Random(0), 6, 1, 24)
    return p, trees, autograph.fold(T.encode)


def test_treelstm_roots_three_ways(lstm):
    p, trees, batched = lstm
    expected = stacked(T.encode, p, trees)
    assert_close(batched(p, trees), expected, RTOL_ROOTS)
    plan = batched.plan(trees)
    assert_close(jax.jit(batched)(p, plan), expected, RTOL_ROOTS)
    h, c = batched(p, plan)
    assert h.shape == c.shape == (len(trees), 16)


def test_treelstm_gradients(lstm):
    p, trees, batched = lstm

    def plain_loss(p):
        h, c = stacked(T.encode, p, trees)
        return jnp.sum(h ** 2) + jnp.sum(jnp.sin(c))

    def fold_loss(p, plan):
        h, c = batched(p, plan)
        return jnp.sum(h ** 2) + jnp.sum(jnp.sin(c))

    plan = batched.plan(trees)
    expected = jax.grad(plain_loss)(p)
    assert_close(jax.jit(jax.grad(fold_loss))(p, plan), expected, RTOL_GRADS)
    assert_close(jax.grad(fold_loss)(p, plan), expected, RTOL_GRADS)


def test_branch_on_computed_value_is_a_select():
    p = T.rnn_params(jax.random.PRNGKey(1), 8)
    trees = T.random_batch(random.Random(1), 8, 1, 12, vocab=50)
    batched = autograph.fold(T.branchy)
    expected = stacked(T.branchy, p, trees)
    assert_close(batched(p, trees), expected, RTOL_ROOTS)
    plan = batched.plan(trees)
    assert_close(jax.jit(batched)(p, plan), expected, RTOL_ROOTS)
    loss = lambda p, plan: jnp.sum(jnp.tanh(batched(p, plan)))  # noqa: E731
    expected_grad = jax.grad(lambda p: jnp.sum(jnp.tanh(stacked(T.branchy, p, trees))))(p)
    assert_close(jax.jit(jax.grad(loss))(p, plan), expected_grad, RTOL_GRADS)
    # both answers occur, so both sides were really selected between
    sums = [float(T.mix(p, T.branchy(p, t.left), T.branchy(p, t.right)).sum())
            for t in trees if not t.is_leaf]
    assert min(sums) < 0 < max(sums)


def test_children_in_a_list_and_jnp_calls_in_the_recursion():
    p = T.rnn_params(jax.random.PRNGKey(2), 8)
    rng = random.Random(2)

    def grow(depth):
        kids = [grow(depth - 1) for _ in range(rng.randrange(0, 4))] if depth else []
        return T.NaryNode(rng.randrange(50), kids)

    trees = [grow(3) for _ in range(5)]
    batched = autograph.fold(T.nary)
    expected = stacked(T.nary, p, trees)
    assert_close(batched(p, trees), expected, RTOL_ROOTS)
    assert_close(jax.jit(batched)(p, batched.plan(trees)), expected, RTOL_ROOTS)


def test_a_shared_subtree_is_computed_once():
    p = T.treelstm_params(jax.random.PRNGKey(3), 8)
    shared = T.random_tree(random.Random(3), 9)
    dag = T.Node(left=T.Node(left=shared, right=T.Node(word=1)), right=shared)
    calls = []

    def counting_cell(p, left, right):
        calls.append(1)
        return T.cell(p, left, right)

    def encode(p, node):
        if node.is_leaf:
            return T.leaf(p, node.word)
        return counting_cell(p, encode(p, node.left), encode(p, node.right))

    batched = autograph.fold(encode)
    expected = stacked(T.encode, p, [dag])
    assert_close(batched(p, [dag]), expected, RTOL_ROOTS)
    recording = next(iter(batched._recordings.values()))[1]
    nodes = sum(len(group[0]) for group in recording.groups.values())
    assert nodes == T.count_nodes(dag)      # the shared subtree's nodes once
    assert nodes < 2 * T.count_nodes(shared) + 3


def test_chain_in_a_batch():
    p = T.treelstm_params(jax.random.PRNGKey(4), 8)
    trees = T.random_batch(random.Random(4), 5, 2, 20) + [T.chain_tree(40)]
    batched = autograph.fold(T.encode)
    assert_close(batched(p, trees), stacked(T.encode, p, trees), RTOL_ROOTS)
    plan = batched.plan(trees)
    # the chain's top levels are narrow steps of one scan, after the wide ones
    (narrow, count), = [r for r in plan.layout.runs() if r[1] > 1]
    assert narrow == schedule.MIN_CAPACITY and count >= 40 - 6
    assert plan.layout.steps[0] > narrow


def test_small_capacities_many_chunks():
    p = T.treelstm_params(jax.random.PRNGKey(5), 8)
    trees = T.random_batch(random.Random(5), 7, 1, 30)
    batched = autograph.fold(T.encode, capacities=(4, 2))
    assert_close(batched(p, trees), stacked(T.encode, p, trees), RTOL_ROOTS)


def test_plan_needs_the_parameter_shapes():
    batched = autograph.fold(T.encode)
    with pytest.raises(autograph.ConversionError, match="parameters' shapes"):
        batched.plan([T.Node(word=1)])
    p = T.treelstm_params(jax.random.PRNGKey(0), 4)
    plan = batched.plan([T.Node(word=1)], params=p)
    h, _ = batched(p, plan)
    assert h.shape == (1, 4)


def test_bucket_grid():
    assert [bucket(n) for n in (0, 1, 2, 3, 5, 100)] == [0, 1, 2, 4, 6, 108]
    assert all(bucket(n) >= n for n in range(1, 3000))
    assert len({bucket(n) for n in range(1000, 2001)}) == 5


def placement_of(batched, trees, params, steps=None):
    recordings = [batched._record(batched._registry(params), t) for t in trees]
    merged, totals, *_ = schedule.merge(recordings)
    inner = tuple(sig for sig in sorted(merged, key=lambda s: s.number) if sig.in_classes)
    groups = schedule._groups([merged[sig][0] for sig in inner])
    placed = schedule.place(groups, merged, inner, totals, steps,
                            capacity=lambda n: schedule.bucket(max(n, 8), 8))
    return merged, inner, placed


def assert_valid_placement(merged, inner, placed):
    caps, step_sig, node_step = placed
    step_of = {}                # (class, row) -> step of the node that computes it
    for sig, steps in zip(inner, node_step, strict=True):
        for outs, step in zip(merged[sig][2].T, steps, strict=True):   # column-major
            for c, row in zip(sig.out_classes, outs, strict=True):
                step_of[(c, int(row))] = int(step)
    for s, (sig, steps) in enumerate(zip(inner, node_step, strict=True)):
        assert (np.asarray(step_sig)[steps] == s).all()      # a step runs one callee
        for ins, step in zip(merged[sig][1].T, steps, strict=True):
            for c, row in zip(sig.in_classes, ins, strict=True):
                assert step_of.get((c, int(row)), -1) < step     # inputs computed before
    counts = np.zeros(len(caps), np.int64)
    for steps in node_step:
        counts += np.bincount(steps, minlength=len(caps))
    assert (counts <= np.asarray(caps)).all()


def test_placement_keeps_dependencies_and_capacities():
    rng = random.Random(7)
    batched = autograph.fold(T.branchy)
    p = T.rnn_params(jax.random.PRNGKey(7), 4)
    for _ in range(3):                   # several signatures per height (branches)
        trees = T.random_batch(rng, 6, 1, 20, vocab=50)
        merged, inner, placed = placement_of(batched, trees, p)
        assert len(inner) > 1
        assert_valid_placement(merged, inner, placed)
        # the batch's own steps are one per level and signature, sized to it
        assert len(placed[0]) == len(schedule._groups([merged[s][0] for s in inner]))


def test_a_wider_batch_spills_into_the_next_steps():
    p = T.treelstm_params(jax.random.PRNGKey(8), 4)
    batched = autograph.fold(T.encode)
    trees = T.random_batch(random.Random(8), 10, 2, 30)
    merged, inner, (caps, _, node_step) = placement_of(batched, trees, p)
    assert_valid_placement(merged, inner, (caps, _, node_step))
    tight = tuple(max(c * 3 // 4, 1) for c in caps) + (8,) * 12
    merged, inner, placed = placement_of(batched, trees, p, tight)
    assert placed is not None
    assert_valid_placement(merged, inner, placed)
    heights = merged[inner[0]][0]
    assert (placed[2][0] > heights - 1).any()      # some nodes ran a step late
    assert placement_of(batched, trees, p, tight[:len(caps) // 2])[2] is None


def test_a_batch_spilled_into_an_earlier_layout_computes_the_same(monkeypatch):
    # no headroom: later batches are often wider than the first one's steps
    monkeypatch.setattr(schedule, "HEADROOM", 1.0)
    monkeypatch.setattr(schedule, "CAPACITY_HEADROOM", 1.0)
    monkeypatch.setattr(schedule, "CAPACITY_SPREAD", 0.0)
    p = T.treelstm_params(jax.random.PRNGKey(6), 8)
    rng = random.Random(6)
    batched = autograph.fold(T.encode)
    first = batched.plan(T.random_batch(rng, 12, 2, 24), params=p)
    spilled = 0
    for _ in range(60):
        trees = T.random_batch(rng, 12, 2, 24)
        plan = batched.plan(trees)
        if plan.layout.steps != first.layout.steps:
            continue
        merged, inner, (_, _, node_step) = placement_of(batched, trees, p,
                                                        first.layout.steps)
        if not (node_step[0] > merged[inner[0]][0] - 1).any():
            continue
        spilled += 1          # reused the first layout, some nodes a step late
        expected = stacked(T.encode, p, trees)
        assert_close(jax.jit(batched)(p, plan), expected, RTOL_ROOTS)
        loss = lambda p, plan: jnp.sum(batched(p, plan)[0] ** 2)  # noqa: E731
        plain = lambda p, trees=trees: jnp.sum(stacked(T.encode, p, trees)[0] ** 2)  # noqa: E731
        assert_close(jax.jit(jax.grad(loss))(p, plan), jax.grad(plain)(p), RTOL_GRADS)
        if spilled == 2:
            break
    assert spilled == 2


def test_fuzzed_batch_sequences():
    from tests.fold.fuzz import check_case
    assert check_case(0) == []


def test_new_random_batches_are_placed_by_the_layouts_lookup(monkeypatch):
    # the steps' headroom (n * 1.05 + 2 sqrt(n)) holds the levels of later random
    # batches, so they take the table lookup, not list scheduling
    looked_up = []
    original = schedule.place_by_levels

    def counted(*args):
        placement = original(*args)
        looked_up.append(placement is not None)
        return placement

    monkeypatch.setattr(schedule, "place_by_levels", counted)
    p = T.treelstm_params(jax.random.PRNGKey(9), 4)
    rng = random.Random(9)
    batched = autograph.fold(T.encode)
    batched.plan(T.random_batch(rng, 64, 16, 128), params=p)
    fast = 0
    for _ in range(12):
        looked_up.clear()
        batched.plan(T.random_batch(rng, 64, 16, 128))
        fast += any(looked_up)
    assert fast >= 10


def test_each_step_writes_contiguous_rows_read_only_later(lstm):
    # the layout allots each step K rows per output (schedule.Rows): the step writes
    # them as one slice, so the plan carries no output rows for one signature, and
    # every input a step reads lies in the leaves' rows or an earlier step's
    p, trees, batched = lstm
    plan = batched.plan(trees, params=p)
    layout, (sig,) = plan.layout, plan.layout.inner_sigs
    rows, part = layout.rows, plan.arrays["steps"]["per_sig"][0]
    assert "outputs" not in part
    starts = rows.starts[sig]
    regions = sorted((int(s), int(s) + k) for s_row, k in zip(starts, layout.steps,
                                                              strict=True) for s in s_row)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(regions))       # disjoint
    assert regions[-1][1] < rows.total[0]                                 # the dump row after
    for step, (offset, k) in enumerate(zip(rows.offsets, layout.steps, strict=True)):
        assert (part["inputs"][:, offset:offset + k] < starts[step].min()).all()



def mixed_classes(p, node):
    """A recursion whose inner call takes and returns values of two classes (a
    state and a scalar), interleaved in its argument list."""
    if node.is_leaf:
        h = jnp.tanh(p["e"][node.word])
        return h, jnp.sum(h)
    (hl, nl), (hr, nr) = mixed_classes(p, node.left), mixed_classes(p, node.right)
    return mix_counted(hl, nl, hr, nr)


def mix_counted(hl, nl, hr, nr):
    return jnp.tanh(hl * nl + hr), nl + nr


def _shifted(rows, classes, used):
    """Local rows ``(nodes, values)`` of one tree as ``(values, nodes)``, each value
    shifted by the rows of its class that the trees before take."""
    return np.asarray([rows[:, j] + used.get(c, 0) for j, c in enumerate(classes)],
                      np.int64).reshape(len(classes), len(rows))


@pytest.mark.parametrize("fn", [T.encode, T.branchy, mixed_classes])
def test_merge_offsets_each_trees_rows_by_class(fn):
    # merge() is vectorised over the trees (one concatenation per signature, each
    # class's block of columns shifted at once); here against a loop over the trees
    p = (T.treelstm_params if fn is T.encode else T.rnn_params)(jax.random.PRNGKey(3), 4)
    batched = autograph.fold(fn)
    trees = T.random_batch(random.Random(3), 7, 1, 12, vocab=50)
    registry = batched._registry(p)
    recordings = [batched._record(registry, t) for t in trees]
    merged, totals, _, _, _ = schedule.merge(recordings)
    used: dict = {}
    expected: dict = {}
    for rec in recordings:
        for sig, (heights, ins, outs, data) in rec.groups.items():
            e = expected.setdefault(sig, ([], [], [], []))
            e[0].append(heights)
            e[1].append(_shifted(ins, sig.in_classes, used))
            e[2].append(_shifted(outs, sig.out_classes, used))
            e[3].append(data)
        for c, n in rec.counts.items():
            used[c] = used.get(c, 0) + n
    assert set(merged) == set(expected)
    assert len({c for sig in merged for c in sig.out_classes}) > (fn is mixed_classes)
    for sig, (heights, ins, outs, data) in merged.items():
        e = expected[sig]
        assert np.array_equal(heights, np.concatenate(e[0]))
        assert np.array_equal(ins, np.concatenate(e[1], axis=1))     # (values, nodes)
        assert np.array_equal(outs, np.concatenate(e[2], axis=1))
        for j, d in enumerate(data):
            assert np.array_equal(d, np.concatenate([x[j] for x in e[3]]))
    assert totals == {c: n for c, n in used.items() if n}
    # and the batch computes what the recursion does
    assert_close(batched(p, trees), stacked(fn, p, trees), RTOL_ROOTS)


def _colliding_names(hlo_text):
    """Per computation of compiled HLO, names that differ but read the same with
    ``-`` and ``.`` as ``_`` (XLA CPU names a fusion's parts' functions so)."""
    out = []
    for block in hlo_text.split("\n\n"):
        seen = {}
        for name in re.findall(r"^\s*(?:ROOT )?%([\w.\-]+) = ", block, re.M):
            other = seen.setdefault(re.sub(r"[-.]", "_", name), name)
            if other != name:
                out.append((other, name))
    return out


def test_one_row_steps_compile():
    """Issue 29's crash: 4 trees of the benchmark at H = 32, on a size-classed layout
    with steps of one row. A one-row gather that XLA made a ``dynamic-slice.23``
    shared a fusion with the scan's own ``dynamic_slice.23``; XLA CPU's compile
    failed (``RET_CHECK fusion_compiler.cc``): the executor's ``_take``."""
    from benchmarks import fold as bench

    rng = random.Random(0)
    p = bench.init(jax.random.PRNGKey(0), 32)
    batches = [bench.random_batch(rng, 4) for _ in range(8)]
    batched = autograph.fold(bench.encode)
    bench._settle(batched, batches, lambda trees: batched.plan(trees, params=p))
    plan = batched.plan(batches[7])
    assert 1 in plan.layout.steps
    fwd = jax.jit(lambda p, plan: batched(p, plan)[0]).lower(p, plan).compile()
    assert _colliding_names(fwd.as_text()) == []
    assert_close(fwd(p, plan), bench.per_node_roots(p, batches[7]), RTOL_ROOTS)


def test_one_row_steps_compile_with_a_gathering_callee():
    """The same collision's other way in: the user's callee gathers (an embedding
    lookup by the node's word, a child's state indexed by a number) and adds into
    one element inside steps of one row, which XLA makes a ``dynamic-slice.N`` and
    a ``dynamic-update-slice.N`` beside the executor's own."""
    from benchmarks import fold as bench
    from tests.fold.fuzz import _per_node_words, _stacked

    rng = random.Random(0)
    p = bench.init(jax.random.PRNGKey(0), 32)
    batches = [T.with_inner_words(bench.random_batch(rng, 4), rng) for _ in range(8)]
    batched = autograph.fold(T.encode_words)
    bench._settle(batched, batches, lambda trees: batched.plan(trees, params=p))
    plan, trees = next((plan, trees) for trees in batches
                       if 1 in (plan := batched.plan(trees)).layout.steps)
    fwd = jax.jit(lambda p, plan: batched(p, plan)[0]).lower(p, plan).compile()
    assert _colliding_names(fwd.as_text()) == []
    expected = _stacked(p, trees, _per_node_words)
    assert_close(fwd(p, plan), expected[0], RTOL_ROOTS)
    loss = lambda p, plan: jnp.sum(jnp.sin(batched(p, plan)[1]))  # noqa: E731
    grad = jax.jit(jax.grad(loss)).lower(p, plan).compile()
    assert _colliding_names(grad.as_text()) == []
    plain = lambda p: jnp.sum(jnp.sin(_stacked(p, trees, _per_node_words)[1]))  # noqa: E731
    assert_close(grad(p, plan), jax.grad(plain)(p), RTOL_GRADS)
