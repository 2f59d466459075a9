"""Random eager-style programs for differential fuzzing (seeded, reproducible).

    gen = ProgramGenerator(seed=7, features={"jumps", "logic"})
    source = gen.function("f_7")      # the text of ``def f_7(a, b, n): ...``

Every program has the signature ``(a, b, n)``: ``a`` and ``b`` small ints, ``n`` a
small non-negative int used as a traced loop bound (``range(n)``). A program uses
nested ``if``/``elif``/``else``, ternaries, ``while`` loops that always terminate
(each has its own counter, incremented first thing in the body, so ``continue``
cannot skip it), ``for`` over static ranges, over tuples and over ranges whose
bounds are arguments, augmented assignment, int and float arithmetic; with the
feature ``"jumps"`` also ``break``/``continue``/early ``return``, with ``"logic"``
also ``and``/``or``/``not``, with ``"loops"`` the loops of ``loop_programs`` (carries
that grow, triangular nests, slices of static width, lists stacked or returned,
Python loops over big, unsortable or deep state), with ``"strings"`` multi-line string literals in a
function defined indented (see ``string_programs``), with ``"directives"`` loops
whose body starts with ``set_loop_options(...)`` (bounds above any trip count here,
so the results stay the same; the module must import ``set_loop_options``, see
``PRELUDE``), with ``"scopes"`` nested scopes among the statements: functions (never
called, at the top level of the body) that declare a variable ``global`` or
``nonlocal`` and assign it, and classes whose body computes from the function's
variables (which makes those closure cells), with ``"generators"`` nested generator
functions and coroutines (called, iterated, driven with ``send``), with ``"match"``
``match`` statements on Python-valued subjects whose cases assign, branch and
return, with ``"names"`` statements sharing names and objects by identity
(closures, ``nonlocal`` writers, late binding, first-iteration bindings, loop
``else``, mutated objects, ``except ... as``, ``del``, assignment expressions in
conditions; see ``name_programs``). Issue 16's features: with ``"values"``
``and``/``or`` whose values are used (mixed int, float and bool operands, made
float where the variable is, so its type stays one), with ``"exits"`` returns
under conditions that Python decides (a constant ``p``, the item of a loop over a
tuple) mixed with traced ones, with ``"try"`` ``try``/``finally`` around returns and
jumps, jumps in ``finally``, ``try``/``except``/``else`` around straight-line code
and returns, with ``"recursion"`` a nested function recursing to a static depth
through traced branches, with ``"dtype"`` a loop over a traced bound whose carry
starts as a Python int and becomes a float. ``generator.kinds`` names the kinds a
program used (``generator.name_kinds`` counts the ``names`` statements).

Values are kept small by construction (``%`` by constants, multiplication by small
constants only) and floats stay exactly representable (quarters, doubling,
halving), so that a comparison never flips between float64 in Python and float32
under JAX. ``validation_source`` rewrites a program so that it computes with numpy
int32/float32 scalars under ``np.errstate(all='raise')``: a program whose
validation overflows or disagrees with plain Python is discarded by the runner.

Every variable keeps one type throughout (int or float), every path returns the
same tuple structure, and every variable is bound before the first statement
that may read it, so a program is meaningful both in Python and staged.
"""

from __future__ import annotations

import ast
import random
import re

from tests.fuzz import dead_programs, loop_programs, string_programs
from tests.fuzz.name_programs import NameFeatures
from tests.fuzz.silent_programs import GLOBAL_OBJECT_PRELUDE, SilentFeatures

INT_VARS = ("x", "y", "z")
FLOAT_VARS = ("g",)
ARGS = ("a", "b", "n")
# The lines a module of programs starts with, by feature.
PRELUDE = {"directives": "from autograph import set_loop_options",
           "loops": loop_programs.PRELUDE,
           "silent_alias_writes": "import operator",
           "silent_numpy_writes": "import numpy as np",
           "silent_number_types": "import numpy as np",
           "silent_side_effects": "import collections\nimport random",
           "silent_strong_join": "import jax.numpy as jnp",
           "silent_with_suppress": "import contextlib",
           "silent_held_objects": "import types",
           "silent_global_object": GLOBAL_OBJECT_PRELUDE,
           "silent_weak_isinstance": "import jax"}
# No loop whose trip count is traced runs more than 6 times here (counters and
# ranges are small; static trip counts ignore the bound), so these
# bounds never cut a loop short.
LOOP_OPTIONS = ("maximum_iterations=8", "maximum_iterations=20", "checkpoint=True",
                "maximum_iterations=12, checkpoint=True", "checkpoint=False")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


class ProgramGenerator:
    """Random programs from one seed. ``features`` widens the syntax used."""

    def __init__(self, seed: int, features=frozenset(), max_depth: int = 3):
        self.rng = random.Random(seed)
        self.features = frozenset(features)
        self.max_depth = max_depth
        self.kinds = set()
        self.int_vars = INT_VARS
        self._names = None

    @property
    def name_kinds(self):
        """How many statements of each ``names`` kind the last program has."""
        return self._names.kinds if self._names is not None else {}

    # -- the program -------------------------------------------------------------------

    def function(self, name: str) -> str:
        r = self.rng
        self._loops = 0
        self._counters = 0
        self._scopes = 0
        self._nested = 0                      # nested generators, coroutines, matches
        self._static = ()                     # loop variables that hold Python ints
        self._recursive = False
        self._budget = r.randint(4, 14)       # statements, roughly
        self.returned = self._return_spec()
        self._loop_statements = loop_programs.LoopStatements(self)
        self._returns_list = "loops" in self.features and r.random() < 0.3
        lines = [f"def {name}(a, b, n):"]
        body = [f"g = {self._float_const()}"]
        if self._returns_list:
            body.insert(0, f"{loop_programs.RETURNED_LIST} = []")
            self.returned += (loop_programs.RETURNED_LIST,)
        for k, var in enumerate(INT_VARS):
            body.append(f"{var} = {self._int_expr(scope=ARGS + INT_VARS[:k], depth=1)}")
        if "exits" in self.features:
            body.append(f"p = {r.randint(0, 3)}")        # a Python value throughout
        module_level, self._rec_name = [], "rec"
        if "recursion" in self.features and r.random() < 0.5:
            helper = self._recursive_helper()
            # Every other program's helper is a module-level function calling itself
            # by its global name (a Python twin calls itself straight, issue 30);
            # decided apart from ``r``, so the rest of each seed's program stays as it was.
            if "strings" not in self.features and random.Random(name).random() < 0.5:
                self._rec_name = f"rec_{name}"
                module_level = _rename_rec(helper, self._rec_name)
                self.kinds.add("recursion_global")
            else:
                body.extend(helper)
        if "try" in self.features:
            body.extend(["def fail(v):", ["raise ValueError(v)"]])
        self._names = NameFeatures(self) if "names" in self.features else None
        self._silent = SilentFeatures(self)   # issue 26's kinds (silent_programs.py)
        if self._names is not None:
            body.extend(self._names.prelude(INT_VARS))
        body.extend(self._block(depth=0, scope=ARGS + INT_VARS, loop=None, min_stmts=2))
        body.append(f"return {self._return_expr()}")
        if "strings" in self.features:
            return string_programs.wrapped(r, name, _indent_all(body))
        lines.extend("    " + line for line in _indent_all(body))
        if module_level:
            lines = [*_indent_all(module_level), "", "", *lines]
        return "\n".join(lines) + "\n"

    def _return_spec(self):
        r = self.rng
        kind = r.random()
        if kind < 0.15:
            return (r.choice(INT_VARS),)            # one bare value
        names = list(INT_VARS + FLOAT_VARS)
        r.shuffle(names)
        return tuple(names[: r.randint(2, 4)])

    def _return_expr(self):
        if len(self.returned) == 1:
            return self.returned[0]
        return "(" + ", ".join(self.returned) + ")"

    # -- statements --------------------------------------------------------------------

    def _block(self, depth, scope, loop, min_stmts=1):
        """Lines of a block (nested blocks are lists of lines, indented later)."""
        r = self.rng
        count = r.randint(min_stmts, 3 if depth else 5)
        out = []
        for _ in range(count):
            out.extend(self._statement(depth, scope, loop))
            if out and out[-1] in ("break", "continue") or _ends_in_return(out):
                break
        return out

    def _statement(self, depth, scope, loop):
        r = self.rng
        self._budget -= 1
        choices = [("assign", 5), ("aug", 4), ("float", 2), ("ternary", 2)]
        if depth < self.max_depth and self._budget > 0:
            choices += [("if", 4), ("for", 2), ("for_traced", 2), ("while", 2),
                        ("for_tuple", 1)]
        if "strings" in self.features:
            choices += [("string", 3)]
        if "loops" in self.features:
            choices += [("loops", 3)]
        if "scopes" in self.features:
            # (A function defined in a staged block that writes a global is refused.)
            choices += [("nested_def", 2 if depth == 0 else 0), ("class_body", 1)]
        if "jumps" in self.features:
            if loop is not None:
                choices += [("break", 1), ("continue", 1)]
            choices += [("return", 1)]
        if "generators" in self.features and self._budget > 0:
            choices += [("generator", 2), ("coroutine", 1)]
        if "match" in self.features and depth < self.max_depth and self._budget > 0:
            choices += [("match", 3)]
        if "values" in self.features:
            choices += [("logic_value", 3)]
        if "exits" in self.features:
            choices += [("python_exit", 2 if depth < self.max_depth else 0)]
        if "try" in self.features and depth < self.max_depth and self._budget > 0:
            choices += [("try_finally", 2), ("try_except", 1)]
        if "recursion" in self.features and self._recursive:
            choices += [("recursive_call", 2)]
        if "dtype" in self.features and depth < self.max_depth:
            choices += [("dtype_change", 2)]
        if self._names is not None and self._budget > -3:
            choices += self._names.choices(depth, loop)
        if "dead" in self.features:
            choices += dead_programs.choices(depth)
        choices += self._silent.choices(depth, loop)
        kind = _weighted(r, choices)
        if kind in dead_programs.KINDS:
            return dead_programs.statement(self, kind, scope)
        if kind.startswith("silent_"):
            return self._silent.statement(kind, depth, scope, loop)
        if kind.startswith("names_"):
            return getattr(self._names, kind[len("names_"):])(depth, scope, loop)
        return getattr(self, "_stmt_" + kind)(depth, scope, loop)

    # -- issue 16: and/or values, Python exits, try, recursion --------------------------

    def _logic_operand(self, scope, kind):
        r = self.rng
        pick = r.random()
        if pick < 0.3:
            return self._cond(scope, depth=0)                    # a bool (or an int)
        if kind == "float" and pick < 0.65:
            return r.choice(["g", self._float_const(), "0.0"])
        return r.choice([self._int_atom(scope), "0", self._int_expr(scope, 1)])

    def _stmt_logic_value(self, depth, scope, loop):
        """``x = (a or b and c)`` with the value used: int variables take int and bool
        operands, ending in an int; the float one takes any, made float."""
        r = self.rng
        self.kinds.add("values")
        kind = "float" if r.random() < 0.35 else "int"
        count = r.randint(2, 4)
        operands = [self._logic_operand(scope, kind) for _ in range(count - 1)]
        last = (r.choice(["g", self._float_const()]) if kind == "float"
                else r.choice([self._int_atom(scope), str(r.randint(-3, 9))]))
        expr = f"({operands[0]})"
        for operand in operands[1:] + [last]:
            expr = f"({expr} {r.choice(['and', 'or'])} ({operand}))"
        if kind == "float":
            return [f"g = {expr} * 1.0"]
        # A bool result (a comparison operand decided) is made an int, as numpy's
        # validation needs (Python's `-True` is -1, numpy refuses `-bool_`).
        return [f"{r.choice(INT_VARS)} = {expr} + 0"]

    def _python_cond(self, scope):
        r = self.rng
        items = [v for v in scope if v.startswith("t")]    # items of tuple loops
        subject = r.choice(["p"] * 3 + items)
        return f"{subject} {r.choice(CMP_OPS)} {r.randint(0, 3)}"

    def _stmt_python_exit(self, depth, scope, loop):
        """Returns under a Python condition mixed with traced ones: every path of the
        ``if`` returns (so what follows is Python's to skip), or some do."""
        r = self.rng
        self.kinds.add("exits")
        inner = [f"if {self._cond(scope)}:", [f"return {self._return_expr()}"]]
        if r.random() < 0.5:
            inner += ["else:", self._block(depth + 2, scope, loop)
                      + [f"return {self._return_expr()}"]]
        else:
            inner += [f"return {self._return_expr()}"]
        body = self._block(depth + 1, scope, loop) + inner if r.random() < 0.4 else inner
        lines = [f"if {self._python_cond(scope)}:", body]
        if r.random() < 0.4:
            lines += ["else:", self._block(depth + 1, scope, loop)]
        if r.random() < 0.3:
            var = f"t{self._loops + 1}"
            self._loops += 1
            items = ", ".join(str(r.randint(0, 3)) for _ in range(r.randint(1, 3)))
            body = [f"if {var} {r.choice(CMP_OPS)} {r.randint(0, 3)}:",
                    [f"return {self._return_expr()}"]] + self._block(
                        depth + 1, scope + (var,), loop=var)
            lines += [f"for {var} in ({items},):", body]
        return lines

    def _stmt_try_finally(self, depth, scope, loop):
        """``try``/``finally`` around a block that may return or jump; the ``finally``
        updates a variable and sometimes jumps itself (discarding what was pending)."""
        r = self.rng
        self.kinds.add("try")
        body = self._block(depth + 1, scope, loop)
        if r.random() < 0.4:
            body = body + [f"if {self._cond(scope)}:", [f"return {self._return_expr()}"]]
        final = [f"{r.choice(INT_VARS)} += {r.randint(1, 5)}"]
        jumps = ["return " + self._return_expr()] + (["break", "continue"]
                                                      if loop is not None else [])
        if r.random() < 0.35:
            self.kinds.add("finally_jump")
            jump = r.choice(jumps)
            final += [f"if {self._cond(scope)}:", [jump]] if r.random() < 0.5 else [jump]
        return ["try:", body, "finally:", final]

    def _stmt_try_except(self, depth, scope, loop):
        """``try``/``except``/``else`` around straight-line code (no staged region may
        sit inside an ``except``'s ``try``: no ternaries) that may return, or raise in
        a called function, the call's value returned or assigned."""
        r = self.rng
        self.kinds.add("try")
        body = [f"{r.choice(INT_VARS)} = {self._int_atom(scope)} {r.choice('+-')} "
                f"{self._int_atom(scope)}",
                f"{r.choice(INT_VARS)} = abs({self._int_atom(scope)})"]
        end = r.random()
        if end < 0.25:
            body.append(f"return {self._return_expr()}")
        elif end < 0.4:
            body.append(f"return fail({self._int_atom(scope)})")
        elif end < 0.6:
            body.append(f"{r.choice(INT_VARS)} = fail({self._int_atom(scope)})")
        lines = ["try:", body, "except ValueError:", [f"{r.choice(INT_VARS)} = 0"]]
        if r.random() < 0.5:
            lines += ["else:", [f"{r.choice(INT_VARS)} -= 1"]]
        return lines

    def _stmt_dtype_change(self, depth, scope, loop):
        """A loop carry that starts as a Python int (weakly typed) and becomes a float
        in the loop (JAX's loop promotes it), added to ``g`` after the loop (so its
        type is float on every path, as when the loop does not run)."""
        r = self.rng
        self.kinds.add("dtype")
        self._counters += 1
        var = f"h{self._counters}"
        step = f"{var} = {var} + {r.choice(['0.25', '0.5', '-0.75'])}"
        if r.random() < 0.5:
            step += f" * {self._int_atom(scope)}"
        if r.random() < 0.5:
            head = f"for {var}i in {r.choice(['range(n)', 'range(a % 4)', 'range(1, n)'])}:"
            body = [step]
        else:
            head = f"while {var}w < {r.choice(['n', 'b % 3 + 1'])}:"
            body = [f"{var}w += 1", step]
        lines = [f"{var} = {r.randint(-2, 3)}"]
        if head.startswith("while"):
            lines.append(f"{var}w = 0")
        return lines + [head, body, f"g = g + {var}"]

    _rec_name = "rec"

    def _recursive_helper(self):
        """A nested function recursing to the static depth it is called with, through
        branches on its traced argument (the calls: ``_stmt_recursive_call``)."""
        r = self.rng
        self._recursive = True
        step = r.randint(1, 3)
        return ["def rec(v, d):", [
            "if d <= 0:", ["return v"],
            f"if v % {r.randint(2, 4)} == {r.randint(0, 1)}:",
            [f"return rec(v - {step}, d - 1) + 1" if r.random() < 0.5
             else f"v = v + {step}"],
            f"return rec(v % {r.randint(7, 13)}, d - 1)"]]

    def _stmt_recursive_call(self, depth, scope, loop):
        self.kinds.add("recursion")
        var = self.rng.choice(INT_VARS)
        return [f"{var} = {self._rec_name}({self._int_atom(scope)}, "
                f"{self.rng.randint(0, 4)})"]

    def _stmt_assign(self, depth, scope, loop):
        var = self.rng.choice(INT_VARS)
        return [f"{var} = {self._int_expr(scope, depth=2)}"]

    def _stmt_aug(self, depth, scope, loop):
        r = self.rng
        var = r.choice(INT_VARS)
        op = r.choice(["+=", "-=", "*=", "%=", "//=", "+=", "-="])
        if op == "*=":
            return [f"{var} *= {r.choice([-2, -1, 2, 3])}", f"{var} %= {r.randint(11, 97)}"]
        if op in ("%=", "//="):
            return [f"{var} {op} {r.randint(2, 9)}"]
        return [f"{var} {op} {self._int_expr(scope, depth=1)}"]

    def _stmt_float(self, depth, scope, loop):
        r = self.rng
        kind = r.randint(0, 5)
        if kind == 0:
            return [f"g += {self._float_const()}"]
        if kind == 1:
            return [f"g = g * {r.choice(['2.0', '0.5', '-1.0'])} % 64.0"]
        if kind == 2:
            return [f"g = g + {self._int_atom(scope)}"]
        if kind == 3:
            return [f"g = {self._int_atom(scope)} / {r.choice([2, 4])}"]
        if kind == 4:
            return [f"g -= {self._int_atom(scope)} * 0.25"]
        return [f"g = g % {r.choice(['4.0', '8.5', '16.0'])}"]

    def _stmt_string(self, depth, scope, loop):
        return string_programs.statement(self.rng, depth)

    def _stmt_ternary(self, depth, scope, loop):
        r = self.rng
        if r.random() < 0.25:
            return [f"g = {self._float_const()} if {self._cond(scope)} else g"]
        var = r.choice(INT_VARS)
        return [f"{var} = {self._int_expr(scope, 1)} if {self._cond(scope)} "
                f"else {self._int_expr(scope, 1)}"]

    def _stmt_loops(self, depth, scope, loop):
        top_level = depth == 0 and loop is None and self._returns_list
        return self._loop_statements.statement(scope, top_level)

    def _stmt_nested_def(self, depth, scope, loop):
        r = self.rng
        self._scopes += 1
        var = r.choice(INT_VARS)
        declaration = r.choice(["global", "nonlocal"])
        return [f"def h{self._scopes}():", [f"{declaration} {var}",
                                            f"{var} = {r.randint(-3, 9)}"]]

    def _stmt_class_body(self, depth, scope, loop):
        self._scopes += 1
        name = f"K{self._scopes}"
        return [f"class {name}:", [f"v = {self._int_expr(scope, depth=2)}"],
                f"{self.rng.choice(INT_VARS)} = {name}.v"]

    def _stmt_if(self, depth, scope, loop):
        r = self.rng
        lines = [f"if {self._cond(scope)}:", self._block(depth + 1, scope, loop)]
        for _ in range(r.choice([0, 0, 1, 2])):
            lines += [f"elif {self._cond(scope)}:", self._block(depth + 1, scope, loop)]
        if r.random() < 0.6:
            lines += ["else:", self._block(depth + 1, scope, loop)]
        return lines

    def _loop_var(self):
        self._loops += 1
        return f"i{self._loops}"

    def _stmt_for(self, depth, scope, loop):
        r = self.rng
        var = self._loop_var()
        args = r.choice([f"{r.randint(0, 5)}", f"{r.randint(-2, 2)}, {r.randint(0, 5)}",
                         f"{r.randint(4, 7)}, {r.randint(-1, 2)}, -{r.randint(1, 3)}",
                         f"0, {r.randint(3, 8)}, {r.randint(2, 3)}"])
        return self._for_lines(var, f"range({args})", depth, scope)

    def _stmt_for_traced(self, depth, scope, loop):
        r = self.rng
        var = self._loop_var()
        bound = r.choice(["range(n)", "range(n)", "range(1, n)", "range(a % 4)",
                          "range(n, 0, -1)", "range(b % 3, n + 1)", "range(0, n, 2)"])
        return self._for_lines(var, bound, depth, scope)

    def _stmt_for_tuple(self, depth, scope, loop):
        var = self._loop_var()
        items = ", ".join(str(self.rng.randint(-3, 6)) for _ in range(self.rng.randint(1, 3)))
        static, self._static = self._static, self._static + (var,)
        try:
            return self._for_lines(var, f"({items},)", depth, scope)
        finally:
            self._static = static

    # -- nested generators and coroutines (stay Python inside converted code) ----------

    def _stmt_generator(self, depth, scope, loop):
        """A nested generator over a static range, consumed by ``sum``, by a ``for``
        loop or by ``next`` (also once an iteration of a loop over a static range,
        which then runs unrolled). It reads the function's arguments as a closure
        (never reassigned: a closure over a reassigned variable is issue 15's
        family)."""
        r = self.rng
        self._nested += 1
        k = self._nested
        name, item = f"gen{k}", f"j{k}"
        target = r.choice(INT_VARS)
        loop_body = [f"yield (v{k} + {item} * {r.choice(ARGS)}) % {r.randint(5, 23)}"]
        if r.random() < 0.3:
            loop_body.insert(0, f"if {item} == {r.randint(0, 3)}:")
            loop_body.insert(1, ["continue"])
        body = [f"v{k} = v{k} % {r.randint(3, 9)}",
                f"for {item} in range({r.randint(1, 4)}):", loop_body]
        if r.random() < 0.3:
            body.append(f"yield from range({r.randint(0, 3)})")
        lines = [f"def {name}(v{k}):", body]
        use = r.randint(0, 3)
        arg = self._int_atom(scope)
        if use == 0:
            lines.append(f"{target} = ({target} + sum({name}({arg}))) % {r.randint(50, 99)}")
        elif use == 1:
            var = f"t{k}"
            lines += [f"for {var} in {name}({arg}):",
                      [f"{target} = ({target} + {var}) % {r.randint(50, 99)}"]]
        elif use == 2:
            lines += [f"it{k} = {name}({arg})",
                      f"{target} = {target} + next(it{k}, -1) - next(it{k}, 0)"]
        else:   # a step a loop over a static range takes (it then runs unrolled)
            lines += [f"it{k} = {name}({arg})",
                      f"for s{k} in range({r.randint(1, 4)}):",
                      [f"{target} = ({target} + next(it{k}, -1) * {r.choice(ARGS)}) "
                       f"% {r.randint(50, 99)}"]]
        return lines

    def _stmt_coroutine(self, depth, scope, loop):
        """A coroutine awaiting a nested one, driven to completion by ``send`` in a
        nested driver function."""
        r = self.rng
        self._nested += 1
        k = self._nested
        target = r.choice(INT_VARS)
        drive = [f"def drive{k}(c):",
                 ["try:", ["c.send(None)"],
                  "except StopIteration as done:", ["return done.value"],
                  "return None"]]
        coroutine = [f"async def co{k}(u):",
                     ["async def inc(w):", [f"return w + {r.choice(ARGS)}"],
                      f"for s in range({r.randint(1, 3)}):",
                      [f"if s == {r.randint(1, 3)}:", [f"return u * {r.randint(-2, 3)}"],
                       f"u = await inc(u) % {r.randint(20, 60)}"],
                      "return u"]]
        call = f"{target} = drive{k}(co{k}({self._int_atom(scope)}))"
        return drive + coroutine + [call]

    # -- match statements on Python values -------------------------------------------

    def _stmt_match(self, depth, scope, loop):
        r = self.rng
        self._nested += 1
        k = self._nested
        subject = f"m{k}"
        if self._static and r.random() < 0.6:
            head = [f"{subject} = {r.choice(self._static)}"]
        else:
            head = [f"{subject} = {r.randint(-1, 5)}"]
        cases = [f"case {r.randint(-1, 2)} | {r.randint(3, 4)}:",
                 f"case {r.randint(0, 5)}:",
                 f"case c{k} if c{k} > {r.randint(0, 4)}:",
                 "case _:"]
        chosen = [c for c in cases[:3] if r.random() < 0.7] + (
            [cases[3]] if r.random() < 0.7 else [])
        if not chosen:
            chosen = [cases[3]]
        returning = r.randrange(len(chosen)) if r.random() < 0.6 else None
        lines = [*head, f"match {subject}:"]
        body = []
        for i, case in enumerate(chosen):
            block = self._block(depth + 1, scope, loop)
            if i == returning and not _ends_in_return(block):
                block = [*block, *self._maybe_guarded(f"return {self._return_expr()}",
                                                      scope)]
            body += [case, block]
        lines.append(body)
        return lines

    def _for_lines(self, var, iterable, depth, scope):
        body = self._block(depth + 1, scope + (var,), loop=var)
        return [f"for {var} in {iterable}:", self._directive() + body]

    def _directive(self):
        """Sometimes a ``set_loop_options`` line, to start a loop body with."""
        if "directives" in self.features and self.rng.random() < 0.4:
            return [f"set_loop_options({self.rng.choice(LOOP_OPTIONS)})"]
        return []

    def _stmt_while(self, depth, scope, loop):
        r = self.rng
        self._counters += 1
        counter = f"w{self._counters}"
        limit = r.choice([str(r.randint(0, 5)), "a % 4 + 1", "n", "b % 3 + 2"])
        test = f"{counter} < {limit}"
        if r.random() < 0.4:
            extra = self._cond(scope)
            test = (f"{test} and {extra}" if "logic" in self.features
                    else f"({test}) * ({extra})")
        body = [f"{counter} += 1"] + self._block(depth + 1, scope + (counter,), loop=counter)
        return [f"{counter} = 0", f"while {test}:", self._directive() + body]

    def _stmt_break(self, depth, scope, loop):
        return self._maybe_guarded("break", scope)

    def _stmt_continue(self, depth, scope, loop):
        return self._maybe_guarded("continue", scope)

    def _stmt_return(self, depth, scope, loop):
        return self._maybe_guarded(f"return {self._return_expr()}", scope)

    def _maybe_guarded(self, jump, scope):
        if self.rng.random() < 0.8:
            return [f"if {self._cond(scope)}:", [jump]]
        return [jump]

    # -- expressions -------------------------------------------------------------------

    def _int_atom(self, scope):
        r = self.rng
        if r.random() < 0.3:
            return str(r.randint(-3, 9))
        if self._names is not None and r.random() < 0.15:
            shared = self._names.atom()
            if shared is not None:
                return shared
        return r.choice(scope)

    def _int_expr(self, scope, depth):
        r = self.rng
        if depth <= 0 or r.random() < 0.3:
            return self._int_atom(scope)
        kind = r.randint(0, 7)
        left = self._int_expr(scope, depth - 1)
        if kind <= 2:
            op = r.choice(["+", "-"])
            return f"({left} {op} {self._int_expr(scope, depth - 1)})"
        if kind == 3:
            return f"{left} * {r.randint(-3, 4)}"
        if kind == 4:
            return f"{left} % {r.randint(2, 9)}"
        if kind == 5:
            return f"{left} // {r.randint(1, 5)}"
        if kind == 6:
            return r.choice([f"-{left}", f"abs({left})"])
        return f"({left} if {self._cond(scope)} else {self._int_expr(scope, depth - 1)})"

    def _float_const(self):
        return repr(self.rng.randint(-12, 12) / 4)

    def _cond(self, scope, depth=1):
        r = self.rng
        logic = "logic" in self.features
        kind = r.random()
        if logic and depth > 0 and kind < 0.25:
            op = r.choice(["and", "or"])
            return f"({self._cond(scope, depth - 1)} {op} {self._cond(scope, depth - 1)})"
        if logic and depth > 0 and kind < 0.35:
            return f"not {self._cond(scope, depth - 1)}"
        if kind < 0.45:
            return f"{self._int_expr(scope, 1)} % {r.randint(2, 4)}"   # truthiness of an int
        if kind < 0.55:
            return f"g {r.choice(CMP_OPS)} {self._float_const()}"
        return f"{self._int_expr(scope, 1)} {r.choice(CMP_OPS)} {self._int_expr(scope, 1)}"


def _weighted(rng, choices):
    total = sum(w for _, w in choices)
    pick = rng.uniform(0, total)
    for kind, weight in choices:
        pick -= weight
        if pick <= 0:
            return kind
    return choices[-1][0]


def _flat(lines):
    """``lines`` with empty nested blocks dropped."""
    return [line for line in lines if line != []]


def _ends_in_return(lines):
    return bool(lines) and isinstance(lines[-1], str) and lines[-1].startswith("return")


def _indent_all(lines, level=0):
    """Flatten nested lists of lines: a list is the indented block of the line above."""
    out = []
    for item in lines:
        if isinstance(item, list):
            out.extend(_indent_all(item, level + 1))
        else:
            out.append("    " * level + item)
    return out


class _NumpyScalars(ast.NodeTransformer):
    """Int constants become ``_I(k)`` (np.int32), float constants ``_F(k)`` (np.float32)."""

    def visit_Constant(self, node):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            return node
        wrapper = "_I" if isinstance(node.value, int) else "_F"
        return ast.copy_location(
            ast.Call(func=ast.Name(id=wrapper, ctx=ast.Load()), args=[node], keywords=[]),
            node)

    def visit_match_case(self, node):
        # A pattern holds literals, not expressions: it stays as written.
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(stmt) for stmt in node.body]
        return node


def validation_source(source: str) -> str:
    """``source`` computing in numpy int32/float32 scalars (see the module docstring)."""
    tree = _NumpyScalars().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _rename_rec(lines, name):
    """The recursive helper's lines with ``rec`` renamed ``name`` (its definition and
    its calls of itself)."""
    if isinstance(lines, list):
        return [_rename_rec(line, name) for line in lines]
    return re.sub(r"\brec\(", f"{name}(", lines)
