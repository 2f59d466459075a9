"""Long fuzzing profile as a script: ``python -m tests.fuzz.run --count 10000``.

Prints the number of programs checked and every mismatch (the program's source,
the mode that disagreed and the arguments); exits 1 if any new wrong value or
internal error was found (refusals and known differences are listed, not failures).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--compile-every", type=int, default=10,
                        help="compile every N-th program whole with XLA (0: never)")
    parser.add_argument("--features", default=None,
                        help="comma-separated (jumps, logic, scopes, directives, strings, values, "
                             "exits, try, recursion, dtype, loops, generators, match; "
                             "silent or silent_<kind>, tests/fuzz/silent_programs.py; "
                             "with --kind idioms: its kinds); "
                             "default: detected")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--show", action="store_true", help="print each program")
    parser.add_argument("--kind", choices=("programs", "bounded_grad", "idioms", "replay"),
                        default="programs",
                        help="bounded_grad: bounded loops under grad against masked scans "
                             "(tests/fuzz/bounded_grad.py); idioms: input checks, math, "
                             "reductions, membership (tests/fuzz/idiom_programs.py); replay: "
                             "effects in bounded loops carrying floats, traced again for "
                             "grad (tests/fuzz/replay_programs.py)")
    args = parser.parse_args(argv)
    if args.kind == "bounded_grad":
        return _bounded_grad(args)
    if args.kind == "idioms":
        return _idioms(args)
    if args.kind == "replay":
        return _replay(args)

    from tests.fuzz import harness

    features = (harness.detect_features() if args.features is None
                else frozenset(f for f in args.features.split(",") if f))
    print(f"features: {sorted(features) or 'none'}", flush=True)
    start = time.time()

    def progress(done, mismatches):
        if done % 200 == 0 or done == args.count:
            print(f"{done} programs, {len(mismatches)} mismatches, "
                  f"{time.time() - start:.0f}s", flush=True)

    if args.jobs > 1:
        programs, mismatches, kinds = _parallel(args, features)
    else:
        programs, mismatches = harness.fuzz(args.seed, args.count, args.compile_every,
                                            features, progress)
        kinds = _kinds(programs)
    if args.show:
        for p in programs:
            if p is not None:
                print(p.source)
    if args.jobs <= 1:
        for m in mismatches:
            print(m)
    silent = sum(1 for m in mismatches
                 if (m[0] if isinstance(m, tuple) else m.silent and not m.known))
    if kinds:
        print("programs by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"programs fuzzed: {len(programs)}; mismatches: {len(mismatches)} "
          f"({silent} new wrong values or internal errors; the rest refused with "
          f"ConversionError or known, see test_regressions.py); "
          f"{time.time() - start:.0f}s")
    return 1 if silent else 0   # refusals and known differences are not failures


def _idioms(args) -> int:
    from tests.fuzz import idiom_programs

    start = time.time()
    kinds = tuple(args.features.split(",")) if args.features else idiom_programs.KINDS
    programs, mismatches, refusals = idiom_programs.fuzz(args.seed, args.count, kinds)
    for program, problem in mismatches + refusals:
        print(f"--- seed {program.seed} ({program.kind}): {problem}\n{program.source}")
    by_kind = collections.Counter(p.kind for p in programs)
    bad = collections.Counter(p.kind for p, _ in mismatches + refusals)
    print("clean by kind: " + ", ".join(f"{k} {by_kind[k] - bad[k]}/{by_kind[k]}"
                                       for k in idiom_programs.KINDS))
    print(f"programs fuzzed: {len(programs)}; mismatches: {len(mismatches)}; refusals: "
          f"{len(refusals)}; {time.time() - start:.0f}s")
    return 1 if mismatches else 0


def _replay(args) -> int:
    from tests.fuzz import replay_programs

    start = time.time()
    programs, mismatches, refusals = replay_programs.fuzz(
        args.seed, args.count, _progress(start, 20, args.count))
    for program, mode, problem in mismatches + refusals:
        print(f"--- seed {program.seed} ({mode}): {problem}\n{program.source}")
    counts = replay_programs.by_effect(programs, mismatches)
    print("mismatching programs by effect: " + ", ".join(
        f"{e} {bad}/{n}" for e, (n, bad) in counts.items()))
    print(f"replay programs fuzzed: {len(programs)}; mismatches: {len(mismatches)} "
          f"(in {len({p.seed for p, _, _ in mismatches})} programs); refusals: "
          f"{len(refusals)}; {time.time() - start:.0f}s")
    return 1 if mismatches else 0


def _bounded_grad(args) -> int:
    from tests.fuzz import bounded_grad

    start = time.time()
    programs, mismatches = bounded_grad.fuzz(args.seed, args.count,
                                             progress=_progress(start, 20, args.count))
    for m in mismatches:
        print(m)
    silent = [m for m in mismatches if m.silent]
    print(f"bounded_grad programs fuzzed: {len(programs)}; mismatches: {len(silent)} "
          f"(and {len(mismatches) - len(silent)} refused by both forms with a "
          f"ConversionError); {time.time() - start:.0f}s")
    return 1 if silent else 0


def _progress(start, every, count):
    """A progress report: a line every ``every`` programs and at the last."""
    def progress(done, mismatches):
        if done % every == 0 or done == count:
            print(f"{done} programs, {len(mismatches)} mismatches, "
                  f"{time.time() - start:.0f}s", flush=True)
    return progress


def _worker(job):
    from tests.fuzz import harness

    first_seed, count, compile_every, features = job
    programs, mismatches = harness.fuzz(first_seed, count, compile_every, features)
    return (len(programs), [(m.silent and not m.known, str(m)) for m in mismatches],
            _kinds(programs))


def _kinds(programs):
    """How many programs hold each kind of statement their features generate (the
    generator's ``kinds``, and the ``loops`` feature's, read from the source)."""
    from tests.fuzz import loop_programs

    counts = collections.Counter()
    for p in programs:
        if p is None:
            continue
        counts.update(p.kinds)
        counts.update(loop_programs.kinds(p.source))
    return counts


def _parallel(args, features):
    import multiprocessing

    chunk = 250
    jobs = [(args.seed + 1_000_000 * k, min(chunk, args.count - k * chunk),
             args.compile_every, features)
            for k in range((args.count + chunk - 1) // chunk)]
    done, found, kinds = 0, [], collections.Counter()
    start = time.time()
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for count, mismatches, counted in pool.imap_unordered(_worker, jobs):
            done += count
            kinds.update(counted)
            found.extend(mismatches)
            for _, m in mismatches:
                print(m, flush=True)
            print(f"{done} programs, {len(found)} mismatches, {time.time() - start:.0f}s",
                  flush=True)
    return [None] * done, found, kinds


if __name__ == "__main__":
    sys.exit(main())
