"""How much of the numerical corpus compiles: each call of ``tests/corpus/numerical.py``
and ``tests/corpus/numerical_methods.py`` run as Python and through
``autograph.to_graph`` with its arguments as arrays.

    python -m benchmarks.numerical_corpus                       # this checkout
    python -m benchmarks.numerical_corpus --autograph /work/main  # another one (before)
    python -m benchmarks.numerical_corpus --calls               # one line per call

The corpus is always this checkout's; ``--autograph`` picks the checkout whose
autograph compiles it (its root goes first on ``sys.path``), so the same table
gives the counts before and after a change. A row counts calls by outcome: the
same value as Python, the same exception (an input check that fails), a
ConversionError (refused, with a reason), another error, or a wrong value (a silent
difference: should be none). ``jax.jit`` of the original is counted too.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_ROOT = Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autograph", default=str(_ROOT),
                        help="root of the checkout whose autograph compiles the corpus")
    parser.add_argument("--calls", action="store_true", help="print every call's outcome")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(args.autograph).resolve()))
    import jax

    import autograph

    corpus = _load("numerical_corpus_functions", _ROOT / "tests/corpus/numerical.py")
    methods = _load("numerical_corpus_methods", _ROOT / "tests/corpus/numerical_methods.py")
    cases = corpus.CASES + methods.CASES
    outcomes = _load("numerical_corpus_outcomes", _ROOT / "tests/corpus/outcomes.py")
    print(f"autograph from {Path(autograph.__file__).parent.parent}")
    counts = {"to_graph": collections.Counter(), "jax.jit": collections.Counter()}
    functions = {"to_graph": collections.Counter(), "jax.jit": collections.Counter()}
    refusals = collections.Counter()
    for fn, calls, _ in cases:
        per_fn = {"to_graph": set(), "jax.jit": set()}
        for call_args in calls:
            python = outcomes.run(lambda fn=fn, a=call_args: fn(*a))
            staged = outcomes.compiled(autograph, fn, call_args)
            arrays = [outcomes.as_array(a) for a in call_args]
            jitted = outcomes.run(lambda fn=fn, a=arrays: jax.block_until_ready(jax.jit(fn)(*a)))
            for mode, outcome in (("to_graph", staged), ("jax.jit", jitted)):
                kind = outcomes.classify(autograph, python, outcome)
                counts[mode][kind] += 1
                per_fn[mode].add(kind)
                if mode == "to_graph" and kind not in (outcomes.SAME_VALUE,
                                                       outcomes.SAME_ERROR):
                    reason = f"{outcome[1].__name__}: {outcome[2]}" if outcome[0] == "raises" \
                        else repr(outcome[1])
                    refusals[(fn.__name__, kind, " ".join(reason.split())[:110])] += 1
                if args.calls and mode == "to_graph":
                    print(f"  {fn.__name__}{tuple(call_args)}: {kind}")
        for mode in per_fn:
            good = per_fn[mode] <= {outcomes.SAME_VALUE, outcomes.SAME_ERROR}
            functions[mode]["all calls as Python" if good else "some call differs"] += 1
    total = sum(counts["to_graph"].values())
    print(f"\n{len(cases)} functions, {total} calls with their arguments as arrays\n")
    width = max(len(k) for k in outcomes.KINDS) + 2
    print(f"{'outcome':<{width}}{'to_graph':>10}{'jax.jit':>10}")
    for kind in outcomes.KINDS:
        print(f"{kind:<{width}}{counts['to_graph'][kind]:>10}{counts['jax.jit'][kind]:>10}")
    compiled_ok = {m: counts[m][outcomes.SAME_VALUE] + counts[m][outcomes.SAME_ERROR]
                   for m in counts}
    print(f"{'as Python':<{width}}{compiled_ok['to_graph']:>10}{compiled_ok['jax.jit']:>10}"
          f"   (of {total})")
    print(f"{'functions as Python':<{width}}"
          f"{functions['to_graph']['all calls as Python']:>10}"
          f"{functions['jax.jit']['all calls as Python']:>10}   (of {len(cases)})")
    if refusals:
        print("\nto_graph calls not as Python:")
        for (name, kind, reason), n in sorted(refusals.items()):
            print(f"  {name} x{n} [{kind}] {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
