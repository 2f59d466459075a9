"""The fuzzer's ``dead`` feature (issue 26.8 and 26.10): names whose value a block
need not carry out, and annotated names closures read after an early return.

With ``dead``, a function's body (at its top level) may also hold:

- ``dead_after_if``: a variable assigned and read in a branch of an ``if`` on a
  traced condition, given another type there (a tuple where it was an int), and
  dead after the ``if``; or, after an early ``return`` under the condition,
  rebound to a tuple (``t = x; if c: return ...; t = (t, t + 1)``);
- ``first_iteration``: a variable bound in the first iteration of a static inner
  loop (``if i == 0: q = ...``) inside a loop over a traced range, read in every
  iteration after;
- ``annotated_closure``: an early ``return`` under a condition, then ``w: int =
  ...`` that a lambda reads.

Every such variable is folded into an int variable, so a wrong value changes the
program's result; ``gen.kinds`` counts the kinds used.
"""

from __future__ import annotations

KINDS = ("dead_after_if", "first_iteration", "annotated_closure")


def choices(depth):
    """The statement kinds this feature adds at ``depth`` (only the top level: an
    early ``return`` and a traced loop there stay simple to read)."""
    return [(kind, 1) for kind in KINDS] if depth == 0 else []


def statement(gen, kind, scope):
    """Lines of one ``kind`` statement, drawn from the program generator ``gen``."""
    gen.kinds.add(kind)
    gen.dead_count = getattr(gen, "dead_count", 0) + 1
    return _GENERATORS[kind](gen, gen.dead_count, scope)


def _target(gen):
    return gen.rng.choice(("x", "y", "z"))


def _dead_after_if(gen, k, scope):
    r = gen.rng
    t, out = f"dv{k}", _target(gen)
    lines = [f"{t} = {gen._int_expr(scope, 1)}"]
    cond = f"a > {r.randint(-3, 5)}" if r.random() < 0.7 else gen._cond(scope, 0)
    if r.random() < 0.5:
        return lines + [f"if {cond}:", [f"{out} = {out} + {t}", f"return {gen._return_expr()}"],
                        f"{t} = ({t}, {t} + {r.randint(1, 4)})",
                        f"{out} = {out} + {t}[1] - {t}[0] * {r.randint(0, 3)}"]
    branch = [f"{t} = ({t}, {t} * {r.randint(1, 3)})",
              f"{out} = {out} + {t}[1] - {t}[0]"]
    other = [f"{out} = {out} - {t}"] if r.random() < 0.6 else [f"{t} = {t} + 1",
                                                               f"{out} = {out} + {t}"]
    if r.random() < 0.5:
        branch, other = other, branch
    return lines + [f"if {cond}:", branch, "else:", other]


def _first_iteration(gen, k, scope):
    r = gen.rng
    q, out = f"fq{k}", _target(gen)
    bound = r.choice(["range(n)", "range(1, n)", "range(a % 4)"])
    first = [f"if di{k} == 0:", [f"{q} = {gen._int_expr(scope, 1)}"]]
    inner = first + [f"{out} = {out} + {q} % {r.randint(3, 9)}"]
    return [f"for dj{k} in {bound}:",
            [f"for di{k} in range({r.randint(1, 3)}):", inner]]


def _annotated_closure(gen, k, scope):
    r = gen.rng
    w, f, out = f"an{k}", f"fan{k}", _target(gen)
    cond = f"a > {r.randint(-3, 5)}" if r.random() < 0.6 else f"n < {r.randint(0, 3)}"
    return [f"if {cond}:", [f"return {gen._return_expr()}"],
            f"{w}: int = {gen._int_expr(scope, 1)}",
            f"{f} = lambda: {w} * {r.randint(1, 3)}",
            f"{out} = {out} + {f}()"]


_GENERATORS = {"dead_after_if": _dead_after_if, "first_iteration": _first_iteration,
               "annotated_closure": _annotated_closure}
