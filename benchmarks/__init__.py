"""The jax-autograph benchmark suite (run it with ``autograph bench``).

- ``programs``: the benchmarked functions, eager originals and hand-written lax;
- ``workloads``: inputs and the implementations compared on each workload;
- ``harness``: interleaved timing, AOT first-call split, jaxpr sizes;
- ``conversion`` and ``scaling``: conversion time and compile-time scaling;
- ``suite``: runs it all into one JSON-ready dict; ``report``: tables, JSON, PNG.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["run_and_report"]


def run_and_report(config, out_dir: str | Path, progress: Callable[[str], None] = print,
                   chart: bool = True) -> dict:
    """Run the suite with ``config``, print the report, write JSON (and PNG) to ``out_dir``.

    Returns the results dict with ``files`` added: the paths written.
    """
    from . import report
    from .suite import run_suite

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = run_suite(config, progress)
    progress("")
    progress(report.render_text(results))
    files = {"json": str(report.write_json(results, out)),
             "markdown": str(report.write_markdown(results, out))}
    if chart:
        png = report.write_chart(results, out)
        if png is None:
            progress("matplotlib is not installed: skipping the PNG chart "
                     "(pip install -e '.[bench]')")
        else:
            files["png"] = str(png)
    progress("wrote " + ", ".join(files.values()))
    results["files"] = files
    return results
