"""Overhead of a converted ``print`` / ``assert`` inside a compiled loop.

    python benchmarks/print_assert_overhead.py [iterations] [repeats]

Times one compiled call of the same loop (a 1000-element update per step) without
and with a traced ``assert`` or ``print`` in its body, interleaving the variants
run by run, and reports each variant's median over the plain loop's median in the
same mode, and the staged f-string ``print`` (formatted at run time, format specs
included) over the hand-written ``jax.debug.print`` of the same line.
``VARIANTS=plain,fstring`` runs a subset (variants interfere with each other's
timings on a small machine; compare within one run).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp

import autograph

SINK = open(os.devnull, "w")  # noqa: SIM115  where the benchmark's prints go


def plain(x, n):
    s = x
    for i in range(n):
        s = jnp.sin(s) * 0.999 + i
    return s


def with_assert(x, n):
    s = x
    for i in range(n):
        s = jnp.sin(s) * 0.999 + i
        assert s[0] >= 0, "negative"
    return s


def with_print(x, n):
    s = x
    for i in range(n):
        s = jnp.sin(s) * 0.999 + i
        print("step", i, s[0], file=SINK)
    return s


def hand_written_print(x, n):
    def body(i, s):
        s = jnp.sin(s) * 0.999 + i
        jax.debug.print("step {} {}", i, s[0], ordered=True)
        return s
    return jax.lax.fori_loop(0, n, body, x)


def with_fstring_print(x, n):
    s = x
    for i in range(n):
        s = jnp.sin(s) * 0.999 + i
        print(f"step {i:>4}: value {s[0]:.3f}", file=SINK)
    return s


def hand_written_fstring_print(x, n):
    def body(i, s):
        s = jnp.sin(s) * 0.999 + i
        jax.debug.print("step {:>4}: value {:.3f}", i, s[0], ordered=True)
        return s
    return jax.lax.fori_loop(0, n, body, x)


def main(iterations=1000, repeats=30):
    x = jnp.ones(int(os.environ.get("WIDTH", "1000")), jnp.float32)  # elements per step
    variants = {
        "plain, to_graph": autograph.to_graph(plain, static_argnums=1),
        "plain, jit(convert)": jax.jit(autograph.convert(plain), static_argnums=1),
        "assert, to_graph": autograph.to_graph(with_assert, static_argnums=1),
        "assert, jit(convert)": jax.jit(autograph.convert(with_assert),
                                                   static_argnums=1),
        "print, to_graph": autograph.to_graph(with_print, static_argnums=1),
        "print, jit(convert)": jax.jit(autograph.convert(with_print), static_argnums=1),
        "print, jit(hand-written jax.debug.print)": jax.jit(hand_written_print,
                                                           static_argnums=1),
        "fstring, to_graph": autograph.to_graph(with_fstring_print, static_argnums=1),
        "fstring, jit(convert)": jax.jit(autograph.convert(with_fstring_print),
                                         static_argnums=1),
        "fstring, jit(hand-written jax.debug.print)": jax.jit(hand_written_fstring_print,
                                                             static_argnums=1),
    }
    only = os.environ.get("VARIANTS")      # e.g. VARIANTS=plain,assert
    if only:
        variants = {k: v for k, v in variants.items() if k.split(",")[0] in only.split(",")}
    with contextlib.redirect_stdout(SINK):
        _run(variants, x, iterations, repeats)


def _run(variants, x, iterations, repeats):
    times = {name: [] for name in variants}
    for fn in variants.values():           # compile
        jax.block_until_ready(fn(x, iterations))
    jax.effects_barrier()
    names = list(variants)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:  # rotate the order
            fn = variants[name]
            start = time.perf_counter()
            jax.block_until_ready(fn(x, iterations))
            jax.effects_barrier()
            times[name].append(time.perf_counter() - start)
    out = sys.__stdout__
    print(f"{iterations}-step loop, median of {repeats} interleaved runs "
          f"({jax.devices()[0].platform}); ratio to the plain loop in the same mode", file=out)
    for name, ts in times.items():
        med = statistics.median(ts)
        mode = name.split(", ", 1)[1].split(" ")[0].split("(")[0]
        plain = times.get(f"plain, {mode}") or times.get("plain, jit(convert)")
        ratio = f"x{med / statistics.median(plain):9.2f}" if plain else "(no plain run)"
        print(f"  {name:42s} {med * 1e3:9.3f} ms   {ratio}", file=out)
    hand = times.get("fstring, jit(hand-written jax.debug.print)")
    for name in ("fstring, to_graph", "fstring, jit(convert)"):
        if hand and name in times:
            ratio = statistics.median(times[name]) / statistics.median(hand)
            print(f"  staged f-string print ({name.split(', ')[1]}) / hand-written "
                  f"jax.debug.print: x{ratio:.2f}", file=out)


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
