"""The fuzzer's ``loops`` feature: loops that stage only as an optimisation (issue 17)
and Python loops over state of any size (issue 21.1).

With ``loops``, a program's body also holds, each folded into an int variable so a
wrong value changes the program's result in every mode:

- ``grow``: static loops whose carry changes shape (a Python list or a ``jnp``
  vector grown each iteration, a matrix padded, a list of lists filled by nested
  loops): unrolled under a trace, as ``jax.jit`` of the original;
- ``triangle``: nests ``for i in range(K): for j in range(i)`` (and ``range(i + 1,
  K)``, ``reversed(range(i))``): the inner bound derived from the outer one;
- ``window``: slices of static width at a static loop's index (``w[i:i + k]``,
  ``m[:, i:i + k]``, writes ``w[i:i + k] += v`` into a NumPy buffer), some
  running past the end (where Python clips);
- ``stack``: lists appended in static loops, then stacked with ``jnp.stack``,
  taken ``len`` of, indexed, iterated, or returned: at the top level of the body,
  a list ``out0`` bound first and returned with the other results; as many
  appends in every branch of an ``if``/``elif``/``else`` on traced values (the
  length stays known after the loop);
- ``pystate``: Python loops over big state, dict keys that do not sort (complex
  numbers), lists nested thousands deep;
- ``while_list``: a ``while`` on a traced counter, bounded by
  ``set_loop_options(maximum_iterations=B)`` (B above every trip count, so that the
  bound never cuts Python's loop short), appending integers to a list it reads at
  ``[-1]``, ``[-2]`` (once two are there), ``[0]`` and a traced index, then its
  ``len`` and items after the loop: staged, an integer loop (a plain
  ``while_loop``) over a buffer read at a traced length. The counter starts at 0 or
  a traced value; some loops step a second counter (up or down, from a constant or
  a traced start) or append under a traced ``if``: the counters and the list's
  length that step together are carried once (``runtime/loop_counters.py``).

Each kind's loop variables are named after it (``gi``, ``ti``, ``wi``, ``si``,
``pi``, ``wl`` and a number), so ``kinds(source)`` tells which kinds a program holds.
"""

from __future__ import annotations

import re

INT_VARS = ("x", "y", "z")
PRELUDE = "import jax.numpy as jnp\nimport numpy as np\nimport autograph"
KINDS = {"grow": "gi", "triangle": "ti", "window": "wi", "stack": "si", "pystate": "pi",
         "while_list": "wl"}
RETURNED_LIST = "out0"


def kinds(source: str) -> set:
    """The kinds of loop statement ``source`` holds."""
    return {kind for kind, prefix in KINDS.items() if re.search(rf"\b{prefix}\d+\b", source)}


class LoopStatements:
    """Statement generators of the ``loops`` feature, drawing from a program
    generator's random source and counters (``gen.rng``, ``gen._loop_var``)."""

    def __init__(self, gen):
        self.gen = gen
        self.count = 0

    @property
    def rng(self):
        return self.gen.rng

    def _name(self, kind):
        self.count += 1
        return f"{KINDS[kind]}{self.count}"

    def statement(self, scope, top_level: bool) -> list:
        """One statement of a random kind; ``top_level``: directly in the body of a
        function whose result includes the list ``out0`` (which it may append to)."""
        kind = self.rng.choice(list(KINDS))
        return getattr(self, "_" + kind)(scope, top_level)

    def _atom(self, scope):
        return self.rng.choice(scope)

    # -- grow -----------------------------------------------------------------------

    def _grow(self, scope, top_level):
        r = self.rng
        i, v = self._name("grow"), self._name("grow")
        target, k = r.choice(INT_VARS), r.randint(1, 4)
        atom = self._atom(scope)
        form = r.randint(0, 3)
        if form == 0:   # a Python list concatenated
            return [f"{v} = [{atom} % 7]", f"for {i} in range({k}):",
                    [f"{v} = {v} + [{v}[-1] + {i} * {r.randint(1, 3)}]"],
                    f"{target} = (sum({v}) + len({v})) % 97"]
        if form == 1:   # a jnp vector concatenated
            return [f"{v} = jnp.zeros(1, jnp.int32) + {atom} % 5",
                    f"for {i} in range({k}):",
                    [f"{v} = jnp.concatenate([{v}, {v}[-1:] + {i}])"],
                    f"{target} = int(jnp.sum({v})) % 97"]
        if form == 2:   # a matrix padded
            return [f"{v} = jnp.ones((1, 1), jnp.int32) * ({atom} % 4)",
                    f"for {i} in range({k}):",
                    [f"{v} = jnp.pad({v}, 1) + {i}"],
                    f"{target} = (int(jnp.sum({v})) + {v}.shape[0]) % 97"]
        j, row = self._name("grow"), self._name("grow")   # a list of lists
        return [f"{v} = []", f"for {i} in range({k}):",
                [f"{row} = []", f"for {j} in range({r.randint(1, 3)}):",
                 [f"{row}.append({atom} % 5 + {i} * {j})"], f"{v}.append({row})"],
                f"{target} = ({v}[-1][-1] + len({v}) * len({v}[0])) % 97"]

    # -- triangle -------------------------------------------------------------------

    def _triangle(self, scope, top_level):
        r = self.rng
        i, j = self._name("triangle"), self._name("triangle")
        k = r.randint(1, 5)
        inner = r.choice([f"range({i})", f"range({i} + 1, {k})", f"reversed(range({i}))",
                          f"range({k} - 1 - {i})"])
        target = r.choice(INT_VARS)
        body = r.choice([
            [f"{target} = ({target} + {i} * {j} + {self._atom(scope)}) % 97"],
            [f"g = (g + {j} * 0.25) % 64.0"],
            [f"{target} = ({target} * 2 + {j}) % 89"],
        ])
        return [f"for {i} in range({k}):", [f"for {j} in {inner}:", body]]

    # -- window ---------------------------------------------------------------------

    def _window(self, scope, top_level):
        r = self.rng
        i, w = self._name("window"), self._name("window")
        size, width = r.randint(3, 7), r.randint(1, 3)
        # Some loops run past the end, where Python's slices come out shorter.
        stop = size - width + 1 + r.choice([0, 0, 0, 1, 2])
        target, atom = r.choice(INT_VARS), self._atom(scope)
        form = r.randint(0, 2)
        if form == 0:
            return [f"{w} = jnp.arange({size}) * ({atom} % 3 + 1)",
                    f"for {i} in range({stop}):",
                    [f"{target} = ({target} + int(jnp.sum({w}[{i}:{i} + {width}]))) % 97"]]
        if form == 1:
            return [f"{w} = jnp.arange({2 * size}).reshape(2, {size}) + {atom} % 4",
                    f"for {i} in range({stop}):",
                    [f"{target} = ({target} + int(jnp.sum({w}[:, {i}:{i} + {width}]) * "
                     f"{i})) % 97"]]
        return [f"{w} = np.zeros({size + width}, np.int32)",
                f"for {i} in range({min(stop, size)}):",
                [f"{w}[{i}:{i} + {width}] += {atom} % 5 + {i}"],
                f"{target} = int({w}.sum()) % 97"]

    # -- stack ----------------------------------------------------------------------

    def _stack(self, scope, top_level):
        r = self.rng
        i, lst = self._name("stack"), self._name("stack")
        k, target, atom = r.randint(1, 4), r.choice(INT_VARS), self._atom(scope)
        form = r.randint(0, 4 if top_level else 3)
        if form == 3:   # as many appends in every branch of an if on a traced value
            other, times = self._atom(scope), 2 if r.random() < 0.4 else 1
            branches = [f"if {atom} > {i}:", [f"{lst}.append({atom} % 9 + {i})"] * times]
            if r.random() < 0.5:
                branches += [f"elif {other} < {r.randint(-3, 3)}:",
                             [f"{lst}.append({other} % 9 - {i})"] * times]
            branches += ["else:", [f"{lst}.append(({atom} - {other}) % 9)"] * times]
            return [f"{lst} = []", f"for {i} in range({k}):", branches,
                    f"{target} = (len({lst}) + int(jnp.sum(jnp.stack({lst})))) % 97"]
        if form == 0:
            return [f"{lst} = []", f"for {i} in range({k}):",
                    [f"{lst}.append({atom} % 9 + {i})"],
                    f"{target} = int(jnp.sum(jnp.stack({lst}))) % 97"]
        if form == 1:
            return [f"{lst} = [{atom} % 5]", f"for {i} in range({k}):",
                    [f"{lst}.append({lst}[-1] * 2 % 13 + {i})"],
                    f"{target} = (len({lst}) + {lst}[-1] + int(jnp.array({lst})[0])) % 97"]
        if form == 2:
            item = self._name("stack")
            return [f"{lst} = []", f"for {i} in range({k}):",
                    [f"{lst}.append({atom} % 7 - {i})"],
                    f"for {item} in {lst}:", [f"{target} = ({target} + {item}) % 97"]]
        return [f"for {i} in range({k}):",   # form 4, at the top level
                [f"{RETURNED_LIST}.append(({atom} + {i}) % 11)"]]

    # -- while_list -----------------------------------------------------------------

    def _while_list(self, scope, top_level):
        r = self.rng
        c, lst = self._name("while_list"), self._name("while_list")
        target, atom, other = r.choice(INT_VARS), self._atom(scope), self._atom(scope)
        most = r.randint(0, 4)          # trips: at most (most + 4)
        bound = most + 4 + r.choice([1, 2, 7])
        start = [f"{atom} % 7"] + ([f"{other} % 5"] if r.random() < 0.5 else [])
        read = r.choice([f"{lst}[-1] * {r.randint(1, 3)}",
                         f"{lst}[-1] + {lst}[{c} % len({lst})]",
                         f"{lst}[0] - {lst}[len({lst}) // 2]",
                         f"{lst}[-1] + ({lst}[-2] if len({lst}) > 1 else {c})"])
        append = f"{lst}.append(({read} + {c}) % 31)"
        body = [f"autograph.set_loop_options(maximum_iterations={bound})"]
        if r.random() < 0.2:   # an append on a traced condition: the length steps apart
            body += [f"if ({c} + {atom}) % 3 != 1:", [append]]
        else:
            body.append(append)
        if r.random() < 0.3:
            body.append(f"{target} = ({target} + {lst}[-1]) % 97")
        # counters stepping with the list's length (carried once, loop_counters.py):
        # the loop's own from 0 or a traced start, another up or down from elsewhere
        first = r.choice(["0", f"{other} % 3"])
        extra = []
        if r.random() < 0.5:
            d = self._name("while_list")
            extra = [f"{d} = {r.choice(['5', f'{atom} % 4', '-2'])}"]
            body.append(f"{d} {r.choice(['+= 1', '-= 2', '+= 1'])}")
        body.append(f"{c} += 1")
        after = r.choice([f"len({lst}) + {lst}[-1]", f"{lst}[-1] * 2 - {lst}[0]",
                          f"{lst}[len({lst}) // 2] + len({lst})"])
        if extra:
            after = f"{after} + {d} * 3 + {c}"
        return [f"{lst} = [{', '.join(start)}]", f"{c} = {first}", *extra,
                f"while {c} < {other} % 5 + {most}:", body,
                f"{target} = ({target} + {after}) % 97"]

    # -- pystate --------------------------------------------------------------------

    def _pystate(self, scope, top_level):
        r = self.rng
        i, s = self._name("pystate"), self._name("pystate")
        k, target = r.randint(1, 4), r.choice(INT_VARS)
        form = r.randint(0, 2)
        if form == 0:   # dict keys that do not sort
            return [f"{s} = {{complex(key, 1): key for key in range({r.randint(50, 300)})}}",
                    f"for {i} in range({k}):", [f"{s}[complex({i}, 2)] = {i}"],
                    f"{target} = ({target} + len({s})) % 97"]
        if form == 1:   # deep nesting
            depth = self._name("pystate")
            return [f"{s} = []", f"for {i} in range({r.randint(1500, 3000)}):",
                    [f"{s} = [{s}]"], f"{depth} = 0", f"while {s}:",
                    [f"{s} = {s}[0]", f"{depth} += 1"],
                    f"{target} = ({target} + {depth}) % 97"]
        return [f"{s} = list(range({r.randint(2000, 6000)}))", f"for {i} in range({k}):",
                [f"{s}.append({i})"], f"{target} = ({target} + len({s}) + {s}[-1]) % 97"]
