"""The first call of a function the process has never seen, split into its stages.

    python -m benchmarks.first_call [rounds] [--cpu] [case ...]
    python -m benchmarks.first_call [rounds] --profile[=STAGE] [case ...]

What a user waits for the first time they call ``autograph.to_graph(f)`` on a new
function, against the same function written by hand with ``jax.lax``:
conversion (autograph only), trace (``jit(...).trace``, where autograph's runtime
runs its operators), lower (to StableHLO) and compile (XLA), then the first run.

Every round writes the programs into a new module file and imports it, so that
nothing about them is cached anywhere (code objects, ``linecache``, conversion,
JAX's trace caches): the stages are measured as a user meets them. The two
implementations alternate which goes first; the figures are medians over the
rounds, and ratios of medians taken in the same run.

``--profile`` samples where autograph's convert stage (or ``--profile=trace``, its
trace stage) spends its CPU time in that setting (``benchmarks.sampling``): a
conversion right after an XLA compile meets caches a hot loop keeps warm.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph
from autograph import api
from autograph.context import ConversionOptions

from . import programs
from .sampling import StackSamples

STAGES = ("convert", "trace", "lower", "compile", "run")
HEADER = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\nimport autograph\n\n"


@dataclass(frozen=True)
class Case:
    """A program (its eager source and its hand-written lax twin) and its inputs."""

    name: str
    original: Callable
    hand: Callable
    make_args: Callable[[], tuple]
    helpers: tuple[Callable, ...] = ()


def _rnn_args():
    rng = np.random.default_rng(0)
    params = {"w_xh": jnp.asarray(rng.normal(size=(8, 16)), jnp.float32),
              "w_hh": jnp.asarray(rng.normal(size=(16, 16)) * 0.2, jnp.float32),
              "b": jnp.zeros(16, jnp.float32)}
    return params, jnp.asarray(rng.normal(size=(20, 4, 8)), jnp.float32)


def counted_sum(x):
    """A sum over a 100-step Python range with a Python-int counter beside it: the
    loop's probe judges the counter for int32 overflow (``runtime/int_overflow.py``)."""
    total = jnp.zeros((), x.dtype)
    count = 0
    for i in range(100):
        total = total + x[i] * count
        count += 1
    return total, count


def counted_sum_lax(x):
    """:func:`counted_sum` as ``lax.fori_loop``, the counter carried as an int32."""
    def body(i, carry):
        total, count = carry
        return total + x[i] * count, count + 1

    return lax.fori_loop(0, 100, body, (jnp.zeros((), x.dtype), 0))


CASES = (
    Case("collatz", programs.collatz, programs.collatz_lax, lambda: (jnp.int32(27),)),
    Case("triangle_sum", programs.triangle_sum, programs.triangle_sum_lax,
         lambda: (jnp.linspace(0.0, 1.0, 16), jnp.int32(10))),
    Case("rnn_forward", programs.rnn_forward, programs.rnn_forward_lax, _rnn_args),
    Case("fibonacci_while", programs.fibonacci_while, programs.fibonacci_while_lax,
         lambda: (jnp.array([0, 1], jnp.int32), jnp.int32(20))),
    Case("huber_loss", programs.huber_loss, programs.huber_loss_lax,
         lambda: (jnp.float32(2.5),)),
    Case("row_sum", programs.row_sum, programs.row_sum_lax,
         lambda: (jnp.asarray(np.random.default_rng(0).normal(size=(500, 10)),
                              jnp.float32),)),
    Case("counted_sum", counted_sum, counted_sum_lax,
         lambda: (jnp.linspace(0.0, 1.0, 100, dtype=jnp.float32),)),
)


def _module_source(case: Case) -> str:
    parts = [inspect.getsource(f) for f in (*case.helpers, case.original, case.hand)]
    return HEADER + "\n\n".join(parts)


def _fresh_module(directory: Path, case: Case, index: int):
    name = f"ag_first_call_{case.name}_{index}"
    path = directory / f"{name}.py"
    path.write_text(_module_source(case))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The clock the stages are read on: wall-clock time, or with ``--cpu`` the process's
# CPU time (all its threads), steadier on a machine shared with other work.
_clock = time.perf_counter
# With ``--profile``: the stage of autograph's first call to sample, and the samples.
_profiled: tuple[str, StackSamples] | None = None


def _sampled(stage: str, convert: bool):
    """The samples to take during ``stage`` (autograph's, under ``--profile``), else
    a context that does nothing."""
    if convert and _profiled is not None and _profiled[0] == stage:
        return _profiled[1]
    return contextlib.nullcontext()


def _stages(fn: Callable, args: tuple, convert: bool) -> tuple[dict[str, float], object]:
    """Seconds per stage of the first call of ``fn`` (converted first if ``convert``)."""
    times = {}
    clock = _clock
    start = clock()
    if convert:
        with _sampled("convert", convert):
            api._TRANSPILER.program(fn, ConversionOptions())
            fn = autograph.convert(fn)
    mark = clock()
    times["convert"] = mark - start
    with _sampled("trace", convert):
        traced = jax.jit(fn).trace(*args)
    times["trace"], mark = clock() - mark, clock()
    lowered = traced.lower()
    times["lower"], mark = clock() - mark, clock()
    compiled = lowered.compile()
    times["compile"], mark = clock() - mark, clock()
    out = jax.block_until_ready(compiled(*args))
    times["run"] = clock() - mark
    times["total"] = sum(times[s] for s in STAGES)
    return times, out


def measure_case(case: Case, rounds: int, directory: Path) -> dict:
    """Median stage times of ``case`` for autograph and hand-written lax."""
    samples = {"autograph": [], "hand_lax": []}
    outputs = {}
    global _profiled
    profiled, _profiled = _profiled, None               # (not sampled)
    try:
        _stages(_fresh_module(directory, case, -1).__dict__[case.original.__name__],
                case.make_args(), convert=True)        # one-time imports and warm-ups
    finally:
        _profiled = profiled
    for r in range(rounds):
        module = _fresh_module(directory, case, r)
        args = case.make_args()
        order = [("autograph", case.original.__name__, True),
                 ("hand_lax", case.hand.__name__, False)]
        for kind, name, convert in order if r % 2 == 0 else order[::-1]:
            times, outputs[kind] = _stages(getattr(module, name), args, convert)
            samples[kind].append(times)
        sys.modules.pop(module.__name__, None)
    result = {"name": case.name, "rounds": rounds}
    for kind, runs in samples.items():
        result[kind] = {f"{s}_s": statistics.median(t[s] for t in runs)
                        for s in (*STAGES, "total")}
    result["agree"] = bool(np.allclose(np.asarray(outputs["autograph"]),
                                       np.asarray(outputs["hand_lax"]), rtol=1e-4, atol=1e-4))
    auto, hand = result["autograph"], result["hand_lax"]
    result["ratio_total"] = auto["total_s"] / hand["total_s"]
    result["ratio_trace"] = auto["trace_s"] / hand["trace_s"]
    result["trace_share"] = auto["trace_s"] / auto["total_s"]
    return result


def measure(rounds: int = 5, cases=CASES) -> list[dict]:
    """One row per case (see ``measure_case``); a failing case is recorded, not raised."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            try:
                rows.append(measure_case(case, rounds, Path(tmp)))
            except Exception as exc:  # noqa: BLE001 - the suite goes on
                rows.append({"name": case.name, "error": f"{type(exc).__name__}: {exc}"})
    return rows


def format_rows(rows: list[dict]) -> list[list[str]]:
    """Table rows: per case and implementation, each stage, the total and the ratio."""
    from .suite import format_seconds

    out = []
    for row in rows:
        if "error" in row:
            out.append([row["name"], "error", row["error"][:60]]
                       + [""] * (len(COLUMNS) - 3))
            continue
        for kind in ("autograph", "hand_lax"):
            e = row[kind]
            tail = ([f"{row['ratio_total']:.2f}", f"{row['trace_share']:.0%}"]
                    if kind == "autograph" else ["1.00", f"{e['trace_s'] / e['total_s']:.0%}"])
            out.append([row["name"], kind, *(format_seconds(e[f"{s}_s"]) for s in STAGES),
                        format_seconds(e["total_s"]), *tail])
    return out


COLUMNS = ["program", "impl", *STAGES, "first call", "vs hand", "trace share"]


def primitive_counts(closed_jaxpr) -> Counter:
    """How many equations of each primitive ``closed_jaxpr`` holds, nested jaxprs
    (loop bodies, branches, calls) included."""
    counts = Counter()
    todo = [closed_jaxpr.jaxpr]
    while todo:
        jaxpr = todo.pop()
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        todo.append(inner)
    return counts


# Why autograph's jaxpr differs from the hand-written one where it does (the HLO of
# the first two is the hand version's, but for a no-op convert).
WHY = {
    "triangle_sum": "reverse_guard: an identity whose transpose names the unbounded loop "
                    "for grad (lowers to nothing); convert: `total = 0.0` starts weakly "
                    "typed (the hand version: jnp.zeros) and the body's add makes it strong",
    "huber_loss": "the staged if is a custom_vmap (a later vmap selects, unbatched operands "
                  "left as they are) in a custom_jvp (no NaN from the branch not taken)",
    "fibonacci_while": "not the same program: the list is a buffer grown by autograph "
                       "(pad, update, stack); the hand version preallocates and scatters",
}


def equation_diffs(cases=CASES) -> list[list[str]]:
    """Per case: the equations of autograph's jaxpr and of the hand-written one, the
    primitives one has more of than the other, and why (``WHY``)."""
    rows = []
    for case in cases:
        args = case.make_args()
        auto = primitive_counts(jax.make_jaxpr(autograph.convert(case.original))(*args))
        hand = primitive_counts(jax.make_jaxpr(case.hand)(*args))
        extra = ", ".join(f"+{n} {p}" for p, n in sorted((auto - hand).items()))
        missing = ", ".join(f"-{n} {p}" for p, n in sorted((hand - auto).items()))
        rows.append([case.name, str(sum(auto.values())), str(sum(hand.values())),
                     "; ".join(x for x in (extra, missing) if x) or "same",
                     WHY.get(case.name, "") if auto != hand else ""])
    return rows


def main(rounds: int = 7, cpu: bool = False, names=()) -> None:
    from .report import _table

    global _clock
    _clock = time.process_time if cpu else time.perf_counter
    cases = tuple(c for c in CASES if not names or c.name in names)
    rows = measure(rounds, cases)
    print(f"first call of a new function, medians of {rounds} interleaved rounds "
          f"(jax {jax.__version__}, {jax.default_backend()}"
          f"{', CPU time' if cpu else ''})")
    print(_table(COLUMNS, format_rows(rows)))
    print("\njaxpr equations (nested included), autograph vs hand-written lax")
    print(_table(["program", "autograph", "hand_lax", "difference", "why"],
                 equation_diffs(cases)))


def profile(stage: str = "convert", rounds: int = 30, names=(), rows: int = 40) -> dict:
    """Run the cases ``names`` (all if empty) as ``measure`` does, sampling
    autograph's ``stage`` of each round (``benchmarks.sampling``); print and return
    each function's share of the samples."""
    global _profiled
    samples = StackSamples()
    _profiled = (stage, samples)
    try:
        with samples.running():
            rows_ = measure(rounds, tuple(c for c in CASES if not names or c.name in names))
    finally:
        _profiled = None
    for row in rows_:
        if "error" in row:
            print(f"{row['name']}: {row['error']}")
    print(f"autograph's {stage} stage, {rounds} rounds of {', '.join(names) or 'every case'}")
    return samples.report(None, rows)


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    names = [a for a in sys.argv[1:] if a not in flags and a not in numbers]
    profiled = [f.partition("=")[2] or "convert" for f in flags if f.startswith("--profile")]
    if profiled:
        profile(profiled[0], *map(int, numbers), names=names)
    else:
        main(*map(int, numbers), cpu="--cpu" in flags, names=names)
