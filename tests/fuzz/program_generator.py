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
also ``and``/``or``/``not``, with ``"strings"`` multi-line string literals in a
function defined indented (see ``string_programs``), with ``"directives"`` loops
whose body starts with ``set_loop_options(...)`` (bounds above any trip count here,
so the results stay the same; the module must import ``set_loop_options``, see
``PRELUDE``), with ``"scopes"`` nested scopes among the statements: functions (never
called, at the top level of the body) that declare a variable ``global`` or
``nonlocal`` and assign it, and classes whose body computes from the function's
variables (which makes those closure cells), with ``"names"`` statements sharing
names and objects by identity (closures, ``nonlocal`` writers, late binding,
first-iteration bindings, loop ``else``, mutated objects, ``except ... as``, ``del``,
assignment expressions in conditions; see ``name_programs``).

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

from tests.fuzz import string_programs
from tests.fuzz.name_programs import NameFeatures

INT_VARS = ("x", "y", "z")
FLOAT_VARS = ("g",)
ARGS = ("a", "b", "n")
# The lines a module of programs starts with, by feature.
PRELUDE = {"directives": "from autograph import set_loop_options"}
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
        self.int_vars = INT_VARS
        self._names = None

    @property
    def kinds(self):
        """How many statements of each ``names`` kind the last program has."""
        return self._names.kinds if self._names is not None else {}

    # -- the program -------------------------------------------------------------------

    def function(self, name: str) -> str:
        r = self.rng
        self._loops = 0
        self._counters = 0
        self._scopes = 0
        self._budget = r.randint(4, 14)       # statements, roughly
        self.returned = self._return_spec()
        lines = [f"def {name}(a, b, n):"]
        body = [f"g = {self._float_const()}"]
        for k, var in enumerate(INT_VARS):
            body.append(f"{var} = {self._int_expr(scope=ARGS + INT_VARS[:k], depth=1)}")
        self._names = NameFeatures(self) if "names" in self.features else None
        if self._names is not None:
            body.extend(self._names.prelude(INT_VARS))
        body.extend(self._block(depth=0, scope=ARGS + INT_VARS, loop=None, min_stmts=2))
        body.append(f"return {self._return_expr()}")
        if "strings" in self.features:
            return string_programs.wrapped(r, name, _indent_all(body))
        lines.extend("    " + line for line in _indent_all(body))
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
        if "scopes" in self.features:
            # (A function defined in a staged block that writes a global is refused.)
            choices += [("nested_def", 2 if depth == 0 else 0), ("class_body", 1)]
        if "jumps" in self.features:
            if loop is not None:
                choices += [("break", 1), ("continue", 1)]
            choices += [("return", 1)]
        if self._names is not None and self._budget > -3:
            choices += self._names.choices(depth, loop)
        kind = _weighted(r, choices)
        if kind.startswith("names_"):
            return getattr(self._names, kind[len("names_"):])(depth, scope, loop)
        return getattr(self, "_stmt_" + kind)(depth, scope, loop)

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
        return self._for_lines(var, f"({items},)", depth, scope)

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


def validation_source(source: str) -> str:
    """``source`` computing in numpy int32/float32 scalars (see the module docstring)."""
    tree = _NumpyScalars().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
