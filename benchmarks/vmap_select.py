"""A staged ``if`` under ``vmap``: the converted code against hand-written forms (issue 28).

JAX batches a ``lax.cond`` whose predicate is batched by running both branches and
selecting, after broadcasting *every* operand to the batch: closed-over weights
become one copy per example. ``autograph/runtime/batched_select.py`` lowers a converted
``if`` to what one writes by hand instead. Each row times, interleaved in one run:

- ``autograph``: ``jax.jit`` of the converted function under ``vmap``;
- ``autograph_before``: the same, traced with the staged ``if`` as plain ``lax.cond``
  (what converted code did before the batched select);
- ``lax_cond``: hand-written ``lax.cond`` under ``vmap``;
- ``where``: hand-written ``jnp.where`` of both branches under ``vmap``.

Rows: the issue's example (``W``, ``V`` 256x256 closed over, a batch of 256
vectors), a per-example ``if`` in an RNN step (a staged loop over time inside,
``vmap`` over the batch), each forward and under ``grad``; and the 1,024-start
Collatz ``vmap`` (an ``if`` inside a per-example ``while``). Each cell gives the
median time per call and XLA's temporary memory for the compiled program
(``compiled.memory_analysis().temp_size_in_bytes``).

    python -m benchmarks.vmap_select            # the table
    python -m benchmarks.vmap_select --quick    # smaller sizes, fewer rounds
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph
from autograph.runtime import batched_select

from . import programs
from .harness import TimingPlan, error_text, interleaved_medians
from .workloads import fresh

FORMS = ("autograph", "autograph_before", "lax_cond", "where")


def _weights(n, seed):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.normal(size=(n, n)) / np.sqrt(n), jnp.float32)


def make_step(n):
    """The issue's example: ``W``, ``V`` closed over; the converted step and by hand."""
    w, v = _weights(n, 0), _weights(n, 1)

    def step(h):
        if h.sum() > 0:
            h = jnp.tanh(w @ h)
        else:
            h = jnp.tanh(v @ h)
        return h

    def step_lax(h):
        return lax.cond(h.sum() > 0, lambda h: jnp.tanh(w @ h), lambda h: jnp.tanh(v @ h), h)

    def step_where(h):
        return jnp.where(h.sum() > 0, jnp.tanh(w @ h), jnp.tanh(v @ h))

    return step, step_lax, step_where


def make_rnn(n):
    """An RNN whose step takes one of two cells per example and time step."""
    w, v, u = _weights(n, 2), _weights(n, 3), _weights(n, 4)

    def rnn(xs):
        h = jnp.zeros(xs.shape[1])
        for t in range(xs.shape[0]):
            x = xs[t]
            if x.sum() > 0:
                h = jnp.tanh(w @ h + u @ x)
            else:
                h = jnp.tanh(v @ h + x)
        return h

    def rnn_lax(xs):
        def body(h, x):
            h = lax.cond(x.sum() > 0, lambda: jnp.tanh(w @ h + u @ x),
                         lambda: jnp.tanh(v @ h + x))
            return h, None
        return lax.scan(body, jnp.zeros(xs.shape[1]), xs)[0]

    def rnn_where(xs):
        def body(h, x):
            h = jnp.where(x.sum() > 0, jnp.tanh(w @ h + u @ x), jnp.tanh(v @ h + x))
            return h, None
        return lax.scan(body, jnp.zeros(xs.shape[1]), xs)[0]

    return rnn, rnn_lax, rnn_where


@contextlib.contextmanager
def plain_cond():
    """While tracing: a converted ``if`` staged as plain ``lax.cond`` (the 'before')."""
    saved = batched_select.cond, batched_select.cond_traced

    def traced_as_lax_cond(pred, true, false, *operands):
        replay = batched_select._replay   # the branches as traced, replayed
        return lax.cond(pred, replay(*true), replay(*false), *operands)

    batched_select.cond, batched_select.cond_traced = lax.cond, traced_as_lax_cond
    try:
        yield
    finally:
        batched_select.cond, batched_select.cond_traced = saved


def _forms(original, hand_lax, hand_where, grad):
    """Fresh jitted callables per form: ``vmap`` of each, or ``grad`` of a loss of it."""
    def wrap(fn):
        batched = jax.vmap(fn)
        if grad:
            return jax.jit(jax.grad(lambda xs: (batched(xs) ** 2).sum()))
        return jax.jit(batched)
    return {
        "autograph": wrap(autograph.convert(fresh(original))),
        "autograph_before": wrap(autograph.convert(fresh(original))),
        "lax_cond": wrap(hand_lax),
        "where": wrap(hand_where),
    }


def measure_row(name, forms: dict[str, Callable], args, plan, reference="lax_cond"):
    """Compile each form (the 'before' one traced with plain ``lax.cond``), check it
    against ``reference``, then time all interleaved."""
    row = {"name": name, "forms": {}}
    outputs = {}
    for form, fn in forms.items():
        try:
            with plain_cond() if form == "autograph_before" else contextlib.nullcontext():
                compiled = fn.lower(*args).compile()
                outputs[form] = jax.block_until_ready(fn(*args))   # traced under the patch
            memory = compiled.memory_analysis()
            row["forms"][form] = {"temp_bytes": getattr(memory, "temp_size_in_bytes", None)}
        except Exception as error:  # noqa: BLE001 - a row records what failed
            row["forms"][form] = {"error": error_text(error)}
    if reference in outputs:
        for form, out in outputs.items():
            diff = max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b))))
                       for a, b in zip(jax.tree_util.tree_leaves(out),
                                       jax.tree_util.tree_leaves(outputs[reference]),
                                       strict=True))
            row["forms"][form]["max_abs_diff"] = diff
    timings = interleaved_medians({f: (lambda fn=forms[f]: fn(*args)) for f in outputs}, plan)
    for form, timing in timings.items():
        row["forms"][form]["median_s"] = timing["median_s"]
    return row


def run(quick: bool = False, plan: TimingPlan | None = None) -> list[dict]:
    """The rows (see the module docstring) as dicts."""
    plan = plan or (TimingPlan(rounds=3, sample_s=0.02, budget_s=1.0) if quick
                    else TimingPlan(rounds=7, sample_s=0.05, budget_s=4.0))
    n, batch = (64, 64) if quick else (256, 256)
    hidden, rnn_batch, steps = (32, 32, 8) if quick else (128, 128, 16)
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.normal(size=(batch, n)), jnp.float32)
    seqs = jnp.asarray(rng.normal(size=(rnn_batch, steps, hidden)), jnp.float32)
    step = make_step(n)
    rnn = make_rnn(hidden)
    rows = []
    for grad in (False, True):
        suffix = " grad" if grad else ""
        rows.append(measure_row(f"step {n}x{n}, batch {batch}{suffix}",
                                _forms(*step, grad=grad), (x,), plan))
        rows.append(measure_row(f"rnn h={hidden} T={steps}, batch {rnn_batch}{suffix}",
                                _forms(*rnn, grad=grad), (seqs,), plan))
    starts = jnp.arange(1, 129 if quick else 1025, dtype=jnp.int32)
    collatz = {
        "autograph": jax.jit(jax.vmap(autograph.convert(fresh(programs.collatz)))),
        "autograph_before": jax.jit(jax.vmap(autograph.convert(fresh(programs.collatz)))),
        "lax_cond": jax.jit(jax.vmap(programs.collatz_lax)),
    }
    rows.append(measure_row(f"collatz vmap {starts.shape[0]}", collatz, (starts,), plan))
    return rows


def format_table(rows: list[dict]) -> str:
    """The rows as a text table: time and temp memory per form, and the ratios of
    ``autograph`` to ``where`` (the targets: 1.3x time, 2x memory)."""
    lines = [f"{'row':<34}" + "".join(f"{f:>24}" for f in FORMS) + f"{'vs where':>18}"]
    for row in rows:
        cells = []
        for form in FORMS:
            cell = row["forms"].get(form)
            if cell is None:
                cells.append(f"{'-':>24}")
            elif "error" in cell:
                cells.append(f"{'error':>24}")
            else:
                cells.append(f"{cell['median_s'] * 1e3:>10.3f} ms {_mb(cell['temp_bytes']):>10}")
        ours, where = row["forms"].get("autograph", {}), row["forms"].get("where", {})
        ratio = ""
        if "median_s" in ours and "median_s" in where:
            ratio = (f"{ours['median_s'] / where['median_s']:.2f}x / "
                     f"{ours['temp_bytes'] / max(where['temp_bytes'], 1):.2f}x")
        lines.append(f"{row['name']:<34}" + "".join(cells) + f"{ratio:>18}")
    return "\n".join(lines)


def _mb(count):
    return "?" if count is None else f"{count / 2**20:.2f} MB"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    print(format_table(rows))
    bad = [(r["name"], f, c["max_abs_diff"]) for r in rows for f, c in r["forms"].items()
           if c.get("max_abs_diff", 0.0) > 1e-3]
    if bad:
        print("results differ from lax.cond:", bad)


if __name__ == "__main__":
    main()
