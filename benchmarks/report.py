"""Present suite results: terminal tables, a JSON file, a PNG chart."""

from __future__ import annotations

import json
from pathlib import Path

from . import first_call, lambda_files, python_loops, unrolling, vmap_select
from .suite import format_seconds
from .workloads import AUTOGRAPH, EAGER, HAND_LAX, KINDS, UNROLLED

RATIO_TARGET = 1.05


def _cell(entry: dict | None, key: str = "median_s") -> str:
    if entry is None:
        return "-"
    if "error" in entry:
        return "error"
    if "skipped" in entry:
        return "skipped"
    value = entry.get(key)
    return "-" if value is None else format_seconds(value)


def _table(headers: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def per_call_table(results: dict, markdown: bool = False) -> str:
    """Median time per call of each implementation, and the ratios to hand lax."""
    rows = []
    for w in results["workloads"]:
        impls = w["impls"]
        agree = all(e.get(k, True) for e in impls.values() for k in e if k.startswith("agrees"))
        rows.append([w["name"], *(_cell(impls.get(k)) for k in KINDS),
                     _ratio(w, "ratio_autograph_to_hand_lax"),
                     _ratio(w, "min_ratio_autograph_to_hand_lax"),
                     _ratio(w, "ratio_unrolled_to_hand_lax"),
                     "yes" if agree else "NO"])
    return _table(["workload", *KINDS, "autograph/hand", "(of minima)", "unrolled/hand",
                   "results agree"], rows, markdown)


def _ratio(result: dict, key: str) -> str:
    value = result.get(key)
    return f"{value:.2f}" if value else "-"


def first_call_table(results: dict, markdown: bool = False) -> str:
    """First-call cost of the compiled implementations, split into stages, jaxpr sizes,
    and the compiled program's temporary memory."""
    rows = []
    for w in results["workloads"]:
        for kind in (AUTOGRAPH, HAND_LAX, UNROLLED):
            e = w["impls"].get(kind)
            if e is None or "trace_s" not in e:
                continue
            rows.append([w["name"], kind, format_seconds(e.get("convert_s", 0.0)),
                         format_seconds(e["trace_s"]), format_seconds(e["lower_s"]),
                         format_seconds(e["compile_s"]), format_seconds(e["first_call_s"]),
                         f"{e['eqns']['top']}", f"{e['eqns']['total']}",
                         format_bytes(e.get("temp_bytes"))])
    return _table(["workload", "impl", "convert", "trace", "lower", "compile", "first call",
                   "eqns (top)", "eqns (all)", "temp memory"], rows, markdown)


def format_bytes(count: int | None) -> str:
    """A short reading of a byte count: 512 B, 12.3 KiB, 4.56 MiB ("-" when unknown)."""
    if count is None:
        return "-"
    if count < 1024:
        return f"{count} B"
    if count < 1024 ** 2:
        return f"{count / 1024:.1f} KiB"
    return f"{count / 1024 ** 2:.2f} MiB"


def errors_table(results: dict, markdown: bool = False) -> str:
    """Every implementation that failed, was skipped, or disagreed, with the reason."""
    rows = []
    for w in results["workloads"]:
        for kind, e in w["impls"].items():
            if "error" in e:
                rows.append([w["name"], kind, "error: " + _shorten(e["error"])])
            elif "skipped" in e:
                rows.append([w["name"], kind, "skipped: " + e["skipped"]])
            elif "mismatch" in e:
                rows.append([w["name"], kind, "results differ: " + e["mismatch"]])
    return _table(["workload", "impl", "status"], rows, markdown) if rows else ""


def _shorten(text: str, limit: int = 150) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def conversion_table(results: dict, markdown: bool = False) -> str:
    """Cold and cached conversion time per function."""
    rows = []
    for name, c in results["conversion"].items():
        if "error" in c:
            rows.append([name, "error: " + _shorten(c["error"]), "", "", ""])
        else:
            rows.append([name, format_seconds(c["cold_s"]), format_seconds(c["cold_min_s"]),
                         format_seconds(c["cached_s"]), format_seconds(c["decorate_s"])])
    return _table(["function", "cold (median)", "cold (min)", "cached", "convert() wrapper"],
                  rows, markdown)


def scaling_table(results: dict, markdown: bool = False) -> str:
    """Trace + lower + compile time of ``for i in range(n)`` per n and implementation."""
    by_n: dict[int, dict[str, str]] = {}
    for row in results["scaling"]:
        if "error" in row:
            cell = "error"
        elif "skipped" in row:
            cell = "skipped"
        else:
            cell = f"{format_seconds(row['total_s'])} ({row['eqns']['total']} eqns)"
        by_n.setdefault(row["n"], {})[row["kind"]] = cell
    kinds = (AUTOGRAPH, HAND_LAX, UNROLLED)
    rows = [[str(n), *(cells.get(k, "-") for k in kinds)] for n, cells in by_n.items()]
    return _table(["n", *kinds], rows, markdown)


def render_text(results: dict) -> str:
    """The whole report as terminal text."""
    env = results["environment"]
    plan = results["settings"]["plan"]
    parts = [
        f"jax {env['jax']} on {env['backend']} ({env['device']}), {env['cpu_count']} CPUs, "
        f"python {env['python']}; {'quick' if results['settings']['quick'] else 'full'} run, "
        f"{plan['rounds']} interleaved rounds, medians",
        "",
        "Per-call time (median)",
        per_call_table(results),
        "",
        "First call (compiled implementations) and jaxpr equation counts",
        first_call_table(results),
    ]
    problems = errors_table(results)
    if problems:
        parts += ["", "Errors, skips and mismatches", problems]
    parts += ["", "Conversion time per function", conversion_table(results)]
    if results["scaling"]:
        parts += ["", "Compile-time scaling of `for i in range(n)` (trace + lower + compile)",
                  scaling_table(results)]
    parts += _source_sections(results)
    parts += ["", f"total wall time {results['wall_s']:.1f} s"]
    return "\n".join(parts)


def render_markdown(results: dict) -> str:
    """The report as Markdown tables (what the README's Benchmarks section shows)."""
    env = results["environment"]
    mode = "quick" if results["settings"]["quick"] else "full"
    parts = [
        f"Measured with `autograph bench{' --quick' if mode == 'quick' else ''}` on "
        f"{env['backend']} ({env['device']}, {env['cpu_count']} CPUs), jax {env['jax']}, "
        f"python {env['python']}, {env['time']}; "
        f"{results['settings']['plan']['rounds']} interleaved rounds, medians.",
        "",
        "#### Time per call (median) and ratio to hand-written lax",
        per_call_table(results, markdown=True),
        "",
        "#### First call (conversion, trace, lower, compile) and jaxpr equations",
        first_call_table(results, markdown=True),
        "",
        "#### Conversion time per function",
        conversion_table(results, markdown=True),
    ]
    if results["scaling"]:
        parts += ["", "#### Compile time of `for i in range(n)` (trace + lower + compile)",
                  scaling_table(results, markdown=True)]
    parts += _source_sections(results, markdown=True)
    problems = errors_table(results, markdown=True)
    if problems:
        parts += ["", "#### Errors, skips and mismatches", problems]
    return "\n".join(parts) + "\n"


def _source_sections(results: dict, markdown: bool = False) -> list[str]:
    """The first-call split and the lambda-file rows, where the run has them."""
    heading = "#### " if markdown else ""
    parts = []
    if results.get("first_call_split"):
        parts += ["", f"{heading}First call of a new function, split into stages "
                      "(medians of fresh modules)",
                  _table(first_call.COLUMNS, first_call.format_rows(results["first_call_split"]),
                         markdown)]
    if results.get("lambda_files"):
        parts += ["", f"{heading}Converting every lambda of a file of lambdas",
                  _table(lambda_files.COLUMNS, lambda_files.format_rows(results["lambda_files"]),
                         markdown)]
    if results.get("python_loops"):
        parts += ["", f"{heading}Loops run as Python (Python values): cost per iteration, "
                      "original vs converted, by the size of the loop's state",
                  _table(python_loops.COLUMNS, python_loops.format_rows(
                      results["python_loops"]), markdown)]
    if results.get("unrolling"):
        parts += ["", f"{heading}Static loops staged and unrolled (unrolled only where the "
                      "body needs Python iteration)",
                  _table(unrolling.COLUMNS, unrolling.format_rows(results["unrolling"]),
                         markdown)]
    if results.get("vmap_select"):
        table = vmap_select.format_table(results["vmap_select"])
        parts += ["", f"{heading}A staged if under vmap: time per call and XLA temp memory",
                  f"```\n{table}\n```" if markdown else table]
    return parts


def write_markdown(results: dict, out_dir: Path) -> Path:
    """Write ``results.md`` (Markdown tables) under ``out_dir``; return its path."""
    path = out_dir / "results.md"
    path.write_text(render_markdown(results))
    return path


def write_json(results: dict, out_dir: Path) -> Path:
    """Write ``results.json`` under ``out_dir``; return its path."""
    path = out_dir / "results.json"
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return path


def write_chart(results: dict, out_dir: Path) -> Path | None:
    """Write ``results.png`` (ratios per workload, eager speed-up, scaling curve).

    Returns None, writing nothing, when matplotlib is not installed.
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, (ratios, speedup, scaling) = plt.subplots(
        1, 3, figsize=(19, 6.5), gridspec_kw={"width_ratios": [1.2, 1, 1]})
    _plot_ratios(ratios, results)
    _plot_speedup(speedup, results)
    _plot_scaling(scaling, results)
    env = results["environment"]
    mode = "quick" if results["settings"]["quick"] else "full"
    fig.suptitle(f"jax-autograph benchmarks ({mode} run): jax {env['jax']}, "
                 f"{env['backend']} ({env['device']}), {env['cpu_count']} CPUs")
    fig.tight_layout()
    path = out_dir / "results.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


COLORS = {AUTOGRAPH: "tab:blue", HAND_LAX: "tab:orange", UNROLLED: "tab:green",
          EAGER: "tab:gray"}


def _workload_axis(ax, results: dict) -> None:
    names = [w["name"] for w in results["workloads"]]
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)


def _plot_ratios(ax, results: dict) -> None:
    height = 0.38
    for k, (kind, label) in enumerate(((AUTOGRAPH, "autograph"), (UNROLLED, "jit, unrolled"))):
        ys, xs = [], []
        for i, w in enumerate(results["workloads"]):
            ratio = w.get(f"ratio_{kind}_to_hand_lax")
            if ratio:
                ys.append(i + (k - 0.5) * height)
                xs.append(ratio)
        if not xs:
            continue
        ax.barh(ys, xs, height=height, label=label, color=COLORS[kind])
        for y, x in zip(ys, xs, strict=True):
            ax.annotate(f"{x:.2f}", (x, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize="x-small")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(RATIO_TARGET, color="red", linestyle="--", linewidth=0.8,
               label=f"target {RATIO_TARGET}")
    ax.set_xscale("log")
    _workload_axis(ax, results)
    ax.set_xlabel("median time per call / hand-written lax (log; lower is faster)")
    ax.set_title("Compiled run time relative to hand-written jax.lax")
    ax.legend(loc="lower right", fontsize="small")


def _plot_speedup(ax, results: dict) -> None:
    ys, xs = [], []
    for i, w in enumerate(results["workloads"]):
        eager = w["impls"].get(EAGER, {}).get("median_s")
        compiled = w["impls"].get(AUTOGRAPH, {}).get("median_s")
        if eager and compiled:
            ys.append(i)
            xs.append(eager / compiled)
    ax.barh(ys, xs, height=0.6, color=COLORS[AUTOGRAPH])
    for y, x in zip(ys, xs, strict=True):
        ax.annotate(f"{x:,.0f}x", (x, y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize="x-small")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    _workload_axis(ax, results)
    ax.set_xlabel("eager time per call / autograph.to_graph time per call (log)")
    ax.set_title("Speed-up of autograph.to_graph over eager")


def _plot_scaling(ax, results: dict) -> None:
    for kind, label in ((AUTOGRAPH, "autograph"), (HAND_LAX, "hand lax"),
                        (UNROLLED, "jit, unrolled")):
        points = [(r["n"], r["total_s"]) for r in results["scaling"]
                  if r["kind"] == kind and "total_s" in r]
        if points:
            ns, ts = zip(*points, strict=True)
            ax.plot(ns, ts, marker="o", label=label, color=COLORS[kind])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("trip count n of `for i in range(n)`")
    ax.set_ylabel("trace + lower + compile (s)")
    ax.set_title("First-call compile time vs trip count")
    ax.legend(fontsize="small")
