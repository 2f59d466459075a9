"""Fuzz statements for issue 26's classes: the silent corners of staging.

Its names start with ``sv_`` (apart from the other features' names). Each kind
is a feature of its own (``--features silent_try,silent_identity``), and
``silent`` turns all of them on; a program counts the kinds it used in
``generator.kinds`` (the runner reports them). Variables are the generator's
ints (``x``, ``y``, ``z``, kept small with ``% 97``); traced when compiled.

- ``silent_closure_escape``: a lambda made in a loop escapes it (as a variable,
  or appended to a list) and is called after the loop (26.1).
- ``silent_cell_branch``: a cell assigned in one branch of an ``if`` and read by a
  lambda there, read before assignment in the other (26.2).
- ``silent_try``: ``try`` around and inside staged regions: ``except ValueError``
  around a static loop, ``except ZeroDivisionError`` in a branch (26.3).
- ``silent_item_helper``: a helper writes an item of a list it was passed,
  called in loops (26.4).
- ``silent_identity``: ``flag is True`` / ``is not False`` on flags that become
  traced (26.5).
- ``silent_side_effects``: ``stack.pop()`` in an expression, ``next(it)`` of a ``zip``
  (read once in a static loop: its signature held its iterators' identities only) and
  loop bodies, a helper appending Python values to a list (or counting them in a
  ``collections.Counter``) under an ``if`` or in a
  ``while`` of traced trip count (26.6, 26.9), or in the right operand of an ``and``/``or``
  or a ``while`` condition (static or traced), or draws from a ``random.Random`` in a
  loop or an ``if``; sometimes beside a ``nonlocal`` writer,
  whose cell the region carries by wrapping its blocks (the wrapped body must still
  be watched).
- ``silent_item_writes``: a list whose items a loop writes and reads (26.7).
- ``silent_dead_after_if``: a variable of different types in the two branches of
  an ``if``, dead after it (26.8).
- ``silent_first_binding``: a name bound in the first iteration of a static
  loop nested in a traced loop (26.8).
- ``silent_alias_writes``: a list or dict that a second name holds too
  (``b = a``), changed in place (item writes, appends) or rebound in an ``if``,
  ``while`` or ``for``, or changed in place in one branch of an ``if`` and rebound
  in the other (refused when staged), then read through both names (26.4's residue);
  or rebound in one branch only (or in a loop that may run zero times, or by a
  conditional expression that may give the old object) and changed in place through
  either name afterwards (refused when staged, at the change).
- ``silent_numpy_writes``: a NumPy array that something else holds too (a helper's
  parameter, ``b = a``, a row view ``m[0]``, a list it was put in) gets a value
  derived from the program's ints written into it, plainly or in an ``if``, ``for``
  or ``while``, and is read through the other holder (Python writes in place:
  refused when the value is traced); or a local array only its own name holds
  (staged as a new array, Python's values); sometimes beside a ``nonlocal`` writer.
- ``silent_python_scalar``: a Python int or float bound before an ``if`` and
  computed on in a branch (Python's ``//``, ``%``, ``**``, true division, mixed with
  the program's ints), read after it: the branch computes with the Python value
  (out10; the out-of-range forms, ``10 ** 12`` and ``k // 0``, are in
  tests/runtime/test_conditionals.py, as they are loud by design).
- ``silent_decided_raise``: a ``raise`` (``if g < 0: raise``, ``else: raise``, in a
  helper) or an ``assert`` that a Python value decides, inside an ``if`` or ``while``
  on the program's values; where it would fail, the region is never entered (Python
  never raises), so a staged region must not fail while tracing (out11).
- ``silent_strong_join``: a strongly typed int32 array given a weak float
  (``s + 0.5``) in one branch of an ``if`` or conditional expression, its dtype
  read after it: the join made it float32 either way (and lost digits beyond
  2**24); or a Python int that a small int array's dtype cannot hold (``-1`` and a
  uint8: 255); refused now where the condition is traced (out11); or such an int
  before a loop over ``range(n % 3)`` that makes it that array (no iteration: Python
  keeps -1, the staged start was 255; refused now, loops._check_starts_fit). No probe: the fixed
  class refuses, so ``test_silent_fuzz`` checks it on its own.
- ``silent_finally_raise``: a ``raise`` (in the ``if`` or in a helper) or an
  ``assert`` under an ``if`` on the program's values, sometimes after an inner
  ``try``/``except ValueError``, in a ``try`` whose ``finally`` returns (or, in a
  loop, ``break``s or ``continue``s): Python discards the error where it is
  raised; staged, it was raised while tracing and discarded for every input
  (out12, program fuzz seed 41065). No probe: refused now.
- ``silent_with_suppress``: the same raises (and a ``raise`` in a ``while`` on the
  program's values) in a ``with contextlib.suppress(ValueError)``: the context
  manager discarded the raise of tracing for every input, or the compiled check
  raised where Python suppresses (out12). No probe: refused now.
- ``silent_held_objects``: objects a list holds (``types.SimpleNamespace``) whose
  attributes a loop over the list sets, inside an ``if`` or a ``while`` on the
  program's values (set once while tracing, whatever the condition or trip count:
  refused now, side_effects.watch) or a static ``for`` (unrolled: Python's values).
  No probe: checked on its own.
- ``silent_global_object``: a plain object a module global holds
  (``SV_G = types.SimpleNamespace()``, in the module's prelude) whose attribute an
  ``if``, a ``while`` on the program's values or a static ``for`` sets, directly or
  through a module-level helper: a staged loop read the attribute once (three
  iterations counted one), a staged ``if`` kept the last branch's write (out13;
  carried now as a closure's object is, ``objects.GlobalCell``).
- ``silent_undone_attr``: a class attribute (``SV_K.n``, the module's prelude) or
  the attribute of an object a list holds, stepped up in one branch of an ``if`` and
  back down in the other (the false branch read the true branch's write, and the
  final int was the start's object: the watch saw no change, out13), or a class
  stepped through an instance (``type(o).n += 1``, ``o.__class__.n += 1``: not
  watched). Refused now where the condition is traced (settled between the two
  branches' traces). No probe: checked on its own.
- ``silent_number_types``: a Python int or float a staged ``if`` steps by literals
  (or gives a number of the other type in one branch), then ``isinstance``/``type``
  of it, or ``str``/``repr``/an f-string of it outside ``print`` (out13: Python's
  ``True``/text, staged ``False``/the tracer's text; now Python's answer where the
  branches agree on the type, else refused: ``runtime/types_of.py``); also
  ``'{}'.format(m)`` and ``'%s' % (m,)`` (the tracer's text until refused like
  f-strings: seed 8300, 150 programs, 24 wrong before); ``float(m)`` meeting a
  float16 array (a strong float32 before: the product float32, not float16).
- ``silent_sorted_floats``: ``sorted`` (or ``.sort()``) of a list of floats a
  conditional expression on the program's values makes NaN, ``-0.0`` or ``0.0``
  (out13: staged ``jnp.sort`` put the NaN last, ``-0.0`` first; now Python's order:
  ``reductions.python_order``), read by position with ``!=`` against itself; some
  sorted by a key (``key=abs``: refused before, now ``python_permutation``); or one
  item picked by ``min``/``max`` with ``key=`` (refused, or a bare
  ``TracerBoolConversionError``, before: ``builtins._pick_by_key``).
- ``silent_sequence_compare``: a tuple or list display compared (``<``, ``<=``, ``==``...)
  with another whose items are the program's values, and ``xs.count(v)`` of a list a
  name holds (silent14: a bare ``TracerBoolConversionError`` when compiled; now
  Python's item-by-item order, staged: ``runtime/sequence_compare.py``). No probe
  (one would turn the kind on in the general fuzz, whose programs it would change):
  checked on its own.
- ``silent_weak_isinstance``: ``isinstance(..., jax.Array)`` of a Python number a
  staged ``if`` steps, or of a value computed from it (silent14: JAX's ``True`` where
  Python says ``False``; now Python's answer for the noted number, refused for the
  value computed from it). No probe: checked on its own.
- ``silent_joined_numbers``: a name an ``if`` on the program's values (or a conditional
  expression) leaves an int on one path and a float on the other, then a value derived
  from it by arithmetic (``m * 2``, ``-m``, ``abs(m)``, ``m // 2``, an augmented
  assignment) whose type is read (``type(d) is int``, ``isinstance``, its product's dtype
  with an int32 or float32 array) or whose value is used (either15: the derived value
  was a fresh float32 with no note, so ``type``/``isinstance`` gave JAX's answer and
  ``d * int32_array`` was float32; now Python's answer where the paths agree, else
  refused: ``runtime/joined_numbers.py``); or carried by a loop over the program's
  values, or handed to a lambda, and its type read (refused). No probe: checked on
  its own.
"""

from __future__ import annotations

# The module-level lines ``silent_global_object`` needs (a program's prelude; also
# bound where ``harness.is_valid`` runs a program on its own).
GLOBAL_OBJECT_PRELUDE = ("import types\n\nSV_G = types.SimpleNamespace(a=0)\n\n\n"
                         "def sv_gbump(d):\n    SV_G.a = (SV_G.a + d + 1) % 97\n\n\n"
                         "class SV_K:\n    n = 0\n")

KINDS = ("closure_escape", "cell_branch", "try", "item_helper", "identity",
         "side_effects", "item_writes", "dead_after_if", "first_binding", "alias_writes",
         "numpy_writes", "python_scalar", "decided_raise", "strong_join", "finally_raise",
         "with_suppress", "held_objects", "global_object", "undone_attr", "number_types",
         "sorted_floats", "sequence_compare", "weak_isinstance", "joined_numbers")
FEATURES = tuple(f"silent_{k}" for k in KINDS)


# The minimal program of each kind, a probe for ``harness.detect_features``:
# its value under jit must be Python's, so a kind is fuzzed by default once the
# checkout fixes its class (kinds fixed in another branch join at the merge).
PROBES = {
    "silent_closure_escape": "def probe(n):\n    i = 0\n    b = n\n    for i in range(3):\n"
                             "        g = lambda: i + b\n        b = b + 1\n"
                             "    fs = []\n    c = 1\n    for j in range(3):\n"
                             "        fs.append(lambda: j * 2 + c)\n        c = c + 3\n"
                             "    return g() + fs[0]()\n",
    "silent_cell_branch": "def probe(n):\n    t = n\n    if n > 0:\n        t = t + 1\n"
                          "        g = lambda: t\n        c = g()\n    else:\n"
                          "        c = t\n    return c\n",
    "silent_try": "def probe(n):\n    x = n\n    try:\n        for i in range(3):\n"
                  "            x = x * 2 + i\n    except ValueError:\n        x = -1\n"
                  "    return x\n",
    "silent_item_helper": "def probe(n):\n    w = [n, 1]\n    def put(ws, v):\n"
                          "        ws[0] = v\n    for i in range(2):\n"
                          "        put(w, w[0] + i)\n    return w[0] + w[1]\n",
    "silent_identity": "def probe(n):\n    f = True\n    c = 0\n    while f is True:\n"
                       "        c += 1\n        f = c < n + 1\n    return c\n",
    "silent_side_effects": "def probe(n):\n    st = [1, 2, 3]\n    t = 0\n"
                           "    for i in range(3):\n        t = t + n * st.pop()\n    return t\n",
    "silent_item_writes": "def probe(n):\n    y = [n, 1]\n    k = n\n    while k > 0:\n"
                          "        k -= 1\n        y[0] += 2\n    return y[0] + y[1]\n",
    "silent_dead_after_if": "def probe(n):\n    t = n\n    if n > 5:\n        return t\n"
                            "    t = [t, t + 1]\n    return t[0] + t[1]\n",
    "silent_alias_writes": "def probe(n):\n    a = [n, 1]\n    b = a\n    k = n\n"
                           "    while k > 0:\n        k -= 1\n        a[0] += 2\n"
                           "    return b[0] + b[1]\n",
    "silent_numpy_writes": "def probe(n):\n    a = np.zeros(2, np.int32)\n"
                           "    for i in range(2):\n        a[i] = n + i\n"
                           "    return a[0] + a[1]\n",
    "silent_python_scalar": "def probe(n):\n    k = 7\n    if n > 0:\n"
                            "        k = k // 2 + isinstance(k, int)\n    return n + k\n",
    "silent_decided_raise": "def probe(n):\n    g = -1\n    if n > 5:\n"
                            "        assert g >= 0\n        n = n + 1\n    return n\n",
    "silent_global_object": "def probe(n):\n    SV_G.a = 0\n    for i in range(3):\n"
                            "        SV_G.a = SV_G.a + n\n    if n > 1:\n"
                            "        sv_gbump(n)\n    return SV_G.a\n",
    "silent_number_types": "def probe(n):\n    m = int('0')\n    if n > 1:\n"
                            "        m = m + int('2')\n    return n + isinstance(m, int)\n",
    "silent_sorted_floats": "def probe(n):\n    v = float('nan') if n > 1 else 1.0\n"
                            "    s = sorted([3.0, v, 1.0])\n"
                            "    return n + (s[0] != s[0]) * 2 + (s[1] != s[1])\n",
    "silent_first_binding": "def probe(n):\n    s = 0\n    for j in range(n):\n"
                            "        for i in range(2):\n            if i == 0:\n"
                            "                q = n\n            s = s + q\n    return s\n",
}


def enabled(features) -> tuple:
    """The kinds ``features`` turns on (``silent``: all)."""
    if "silent" in features:
        return KINDS
    return tuple(k for k in KINDS if f"silent_{k}" in features)


class SilentFeatures:
    """The statements of the kinds ``features`` enables, for one program of ``gen``."""

    def __init__(self, gen):
        self.gen = gen
        self.kinds = enabled(gen.features)
        self._count = 0

    def _next(self) -> int:
        self._count += 1
        return self._count

    def choices(self, depth, loop) -> list:
        if depth >= self.gen.max_depth or self.gen._budget <= 0:
            return []
        return [(f"silent_{k}", 2) for k in self.kinds]

    def statement(self, kind, depth, scope, loop) -> list:
        self.gen.kinds.add(kind)
        return getattr(self, "_" + kind[len("silent_"):])(depth, scope, loop)

    def _var(self):
        return self.gen.rng.choice(("x", "y", "z"))

    def _cond(self):
        r = self.gen.rng
        return f"{r.choice(('a', 'b', 'x', 'y'))} {r.choice(('>', '<=', '!='))} {r.randint(-3, 3)}"

    # -- the kinds -------------------------------------------------------------------

    def _closure_escape(self, depth, scope, loop):
        r, k, v = self.gen.rng, self._next(), self._var()
        bound = r.choice(("2", "3", "n % 3"))
        if r.random() < 0.5:
            return [f"sv_ce{k} = 0", f"sv_fe{k} = lambda: 0",
                    f"for sv_ce{k} in range({bound}):",
                    [f"sv_fe{k} = lambda: sv_ce{k} + {v}", f"{v} = ({v} + 1) % 97"],
                    f"{self._var()} = ({v} + sv_fe{k}()) % 97"]
        return [f"sv_le{k} = []", f"for sv_ce{k} in range({bound}):",
                [f"sv_le{k}.append(lambda: sv_ce{k} * 2 + {v})", f"{v} = ({v} + 3) % 97"],
                f"for sv_he{k} in sv_le{k}:", [f"{self._var()} = ({v} + sv_he{k}()) % 97"]]

    def _cell_branch(self, depth, scope, loop):
        k, v, w = self._next(), self._var(), self._var()
        return [f"sv_tc{k} = {v}", f"if {self._cond()}:",
                [f"sv_tc{k} = {self.gen.rng.choice(('5', f'sv_tc{k} + 1'))}",
                 f"sv_rc{k} = lambda: sv_tc{k}", f"sv_cc{k} = sv_rc{k}()"],
                "else:", [f"sv_cc{k} = sv_tc{k}"],
                f"{w} = ({w} + sv_cc{k}) % 97"]

    def _try(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        if r.random() < 0.5:
            return ["try:", [f"for sv_it{k} in range({r.choice(('2', 'n % 3'))}):",
                             [f"{v} = ({v} * 2 + sv_it{k} + {w}) % 97"]],
                    "except ValueError:", [f"{v} = {v} - 1"]]
        return [f"if {self._cond()}:",
                ["try:", [f"{v} = ({w} + 7) // ({v} - {r.randint(-2, 2)})"],
                 "except ZeroDivisionError:", [f"{v} = {r.randint(0, 9)}"]]]

    def _item_helper(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        return [f"sv_wh{k} = [{v}, {w}]", f"def sv_seth{k}(ws, val):", ["ws[0] = val"],
                f"for sv_ih{k} in range({r.choice(('2', 'n % 3'))}):",
                [f"sv_seth{k}(sv_wh{k}, (sv_wh{k}[0] + sv_ih{k} + {v}) % 97)"],
                f"{w} = (sv_wh{k}[0] + sv_wh{k}[1]) % 97"]

    def _identity(self, depth, scope, loop):
        r, k, v = self.gen.rng, self._next(), self._var()
        test = r.choice((f"sv_fi{k} is True", f"sv_fi{k} is not False", f"True is sv_fi{k}"))
        # bool(...): the validation's NumPy comparisons give np.bool_, never `True`.
        return [f"sv_fi{k} = bool({self._cond()})", f"sv_ci{k} = 0",
                f"while {test} and sv_ci{k} < 6:",
                [f"sv_ci{k} += 1",
                 f"sv_fi{k} = bool(sv_ci{k} < {r.choice(('n', '2', 'n % 3 + 1'))})"],
                f"{v} = ({v} + sv_ci{k}) % 97"]

    def _cell_writer(self, k, v) -> tuple[list, list]:
        """Sometimes a ``nonlocal`` writer of ``v`` (the region then carries a closure
        cell, which wraps its blocks) and sometimes a call of it for the region's
        body: ``(definition, call)``, either may be empty."""
        r = self.gen.rng
        if r.random() >= 0.3:
            return [], []
        return ([f"def sv_cw{k}(d):", [f"nonlocal {v}", f"{v} = ({v} + d) % 97"]],
                [f"sv_cw{k}(1)"] if r.random() < 0.5 else [])

    def _side_effects(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        if r.random() < 0.3:   # a helper appending Python values under an `if` or `while`
            cell, bump = self._cell_writer(k, w)
            call = [*bump, f"sv_em{k}({r.randint(1, 5)})"]
            if r.random() < 0.5:
                region = [f"if {self._cond()}:", call,
                          *(["else:", [f"sv_em{k}({r.randint(1, 5)})"]] if r.random() < 0.5
                            else [])]
            else:
                region = [f"sv_kq{k} = n % 3", f"while sv_kq{k} > 0:", [f"sv_kq{k} -= 1", *call]]
            if r.random() < 0.3:   # a dict subclass (watched since issue 26's residue)
                start, change, size = ("collections.Counter()", f"sv_lg{k}[val] += 1",
                                       f"sum(sv_lg{k}.values())")
            else:
                start, change, size = "[]", f"sv_lg{k}.append(val)", f"len(sv_lg{k})"
            return [f"sv_lg{k} = {start}", *cell, f"def sv_em{k}(val):", [change],
                    *region, f"{v} = ({v} + {size}) % 97"]
        if r.random() < 0.3:   # a helper changing a list in an operand or loop condition
            helper = [f"sv_lg{k} = []", f"def sv_ck{k}(val):",
                      [f"sv_lg{k}.append(val)", f"return val < {r.randint(2, 6)}"]]
            form = r.choice(("and", "or", "static_while", "while"))
            if form in ("and", "or"):
                use = [f"sv_ok{k} = ({self._cond()}) {form} sv_ck{k}({w} % 7)",
                       f"{v} = ({v} + (1 if sv_ok{k} is True else 0)) % 97"]
            elif form == "static_while":   # a Python condition beside traced state
                use = [f"sv_i{k} = 0", f"while sv_ck{k}(sv_i{k}):",
                       [f"sv_i{k} += 1", f"{w} = ({w} + {v}) % 97"]]
            else:   # a condition on a value that may be traced
                use = [f"sv_i{k} = {w} % 5", f"while sv_ck{k}(sv_i{k}):", [f"sv_i{k} += 1"]]
            return [*helper, *use, f"{v} = ({v} + len(sv_lg{k})) % 97"]
        if r.random() < 0.25:   # draws from a Python random number generator
            head = r.choice((f"for sv_ir{k} in range({r.choice(('2', '3', 'n % 3'))}):",
                             f"if {self._cond()}:"))
            return [f"sv_rg{k} = random.Random('s{r.randint(0, 99)}')", head,
                    [f"{v} = ({v} + sv_rg{k}.randint(1, 9)) % 97"],
                    f"{w} = ({w} + sv_rg{k}.randint(1, 9)) % 97"]
        if r.random() < 0.5:
            return [f"sv_st{k} = [{r.randint(1, 5)}, {r.randint(1, 5)}, {r.randint(1, 5)}]",
                    f"for sv_is{k} in range({r.choice(('3', '2', 'n % 3'))}):",
                    [f"{v} = ({v} + {w} * sv_st{k}.pop()) % 97"]]
        if r.random() < 0.5:   # a zip's step (its own iterators' positions, lead13)
            head = r.choice((f"for sv_is{k} in range({r.choice(('2', '3'))}):",
                             f"if {self._cond()}:"))
            return [f"sv_zp{k} = zip([{r.randint(1, 9)}, {r.randint(1, 9)}, "
                    f"{r.randint(1, 9)}], (1, 2, 3))", head,
                    [f"sv_za{k}, sv_zb{k} = next(sv_zp{k})",
                     f"{v} = ({v} + sv_za{k} * sv_zb{k}) % 97"]]
        return [f"sv_nx{k} = iter([{r.randint(1, 9)}, {r.randint(1, 9)}, {r.randint(1, 9)}])",
                f"for sv_is{k} in range({r.choice(('2', '3'))}):",
                [f"{v} = ({v} + next(sv_nx{k})) % 97"]]

    def _item_writes(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        if r.random() < 0.5:
            head = [f"sv_kw{k} = n", f"while sv_kw{k} > 0:", [f"sv_kw{k} -= 1"]]
        else:
            head = [f"for sv_kw{k} in range({r.choice(('n', '3', 'n % 3'))}):", []]
        body = head[-1]
        body += [f"sv_lw{k}[{r.randint(0, 1)}] += {r.randint(1, 3)}"]
        if r.random() < 0.5:
            body += [f"if sv_lw{k}[0] > {r.randint(0, 9)}:", [f"sv_lw{k}[1] = sv_lw{k}[1] - 1"]]
        return [f"sv_lw{k} = [{v} % 13, {w} % 13]", *head,
                f"{v} = (sv_lw{k}[0] + sv_lw{k}[1]) % 97"]

    def _dead_after_if(self, depth, scope, loop):
        k, v, w = self._next(), self._var(), self._var()
        if self.gen.rng.random() < 0.5:
            # The form: carried past an early return, then of another type.
            return [f"sv_td{k} = {w}", f"if {self._cond()}:",
                    [f"return {self.gen._return_expr()}"],
                    f"sv_td{k} = [sv_td{k}, sv_td{k} + 1]",
                    f"{v} = (sv_td{k}[0] + sv_td{k}[1]) % 97"]
        return [f"if {self._cond()}:", [f"sv_td{k} = [{v}, {w} % 5]",
                                        f"{v} = ({v} + sv_td{k}[1]) % 97"],
                "else:", [f"sv_td{k} = {w}", f"{v} = ({v} - sv_td{k}) % 97"]]

    def _first_binding(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        return [f"for sv_jf{k} in range({r.choice(('n', 'n % 3', '2'))}):",
                [f"for sv_if{k} in range(2):",
                 [f"if sv_if{k} == 0:", [f"sv_qf{k} = {w}"],
                  f"{v} = ({v} + sv_qf{k}) % 97"]]]

    def _alias_writes(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        a, b = f"sv_la{k}", f"sv_lb{k}"
        if r.random() < 0.3:
            start, key, read = f"{{'p': {v} % 13, 'q': {w} % 13}}", r.choice(("'p'", "'q'")), \
                f"{b}['p'] + {b}['q'] + {a}['p']"
        else:
            start, key, read = f"[{v} % 13, {w} % 13]", str(r.randint(0, 1)), \
                f"{b}[0] + {b}[1] + {a}[0]"
        write = f"{a}[{key}] = ({a}[{key}] + {r.randint(1, 5)}) % 97"
        form = r.choice(("if", "if_else", "rebind", "mixed", "while", "for", "split",
                         "split_loop", "split_ifexp"))
        if form in ("split", "split_loop", "split_ifexp"):
            return self._alias_split(a, b, start, key, read, form, k)
        if form == "if":
            region = [f"if {self._cond()}:", [write]]
        elif form == "if_else":
            region = [f"if {self._cond()}:", [write], "else:",
                      [f"{a}[{key}] = ({a}[{key}] * 2) % 97"]]
        elif form == "rebind":   # both branches rebind: the other name keeps the old
            region = [f"if {self._cond()}:", [f"{a} = {start}"], "else:",
                      [f"{a} = {start.replace('13', '11')}"]]
        elif form == "mixed":   # one branch in place, the other rebinds: refused staged
            branches = [[write], [f"{a} = {start.replace('13', '11')}"]]
            r.shuffle(branches)
            region = [f"if {self._cond()}:", branches[0], "else:", branches[1]]
        elif form == "while":
            region = [f"sv_ka{k} = n % 4", f"while sv_ka{k} > 0:",
                      [f"sv_ka{k} -= 1", write]]
        else:
            region = [f"for sv_ia{k} in range({r.choice(('2', 'n % 3', 'n'))}):", [write]]
        return [f"{a} = {start}", f"{b} = {a}", *region, f"{v} = ({read}) % 97"]

    def _alias_split(self, a, b, start, key, read, form, k):
        """After the region, Python's ``a`` is the old object or a new one depending
        on the condition (one branch rebinds it; a loop that rebinds it may run zero
        times); then one of the names changes it in place."""
        r, v = self.gen.rng, self._var()
        fresh = start.replace("13", "11")
        if form == "split":
            region = [f"if {self._cond()}:", [f"{a} = {fresh}"]]
            if r.random() < 0.4:
                region += ["else:", [f"{v} = ({v} + {a}[{key}]) % 97"]]
        elif form == "split_ifexp":   # a conditional expression gives the old object
            pick = (f"{fresh} if {self._cond()} else {a}" if r.random() < 0.5
                    else f"{a} if {self._cond()} else {fresh}")
            region = [f"{a} = {pick}"]
        else:
            region = [f"sv_ka{k} = n % 3", f"while sv_ka{k} > 0:",
                      [f"sv_ka{k} -= 1", f"{a} = {fresh}"]]
        holder = r.choice((a, b))
        after = f"{holder}[{key}] = ({holder}[{key}] + {r.randint(1, 5)}) % 97"
        if r.random() < 0.2:   # a library function that changes its argument in place
            after = f"operator.setitem({holder}, {key}, {v} % 7)"
        after = [after]
        if start.startswith("[") and r.random() < 0.4:
            after = [r.choice((f"{holder}.append({v} % 5)",
                               f"{holder} += [{v} % 5]", f"{holder} *= 2",
                               f"operator.iadd({holder}, [{v} % 5])"))]
            if r.random() < 0.5:   # appended in a loop (staged where its range is traced)
                after = [f"for sv_ib{k} in range({r.choice(('2', 'n % 3'))}):", after]
            read = f"{read} + len({b})"
        elif start.startswith("{") and r.random() < 0.3:   # a dict merged in place
            after = [f"{holder} |= {{'r': {v} % 5}}"]
            read = f"{read} + len({b})"
        return [f"{a} = {start}", f"{b} = {a}", *region, *after, f"{v} = ({read}) % 97"]

    def _numpy_writes(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        arr, idx = f"sv_na{k}", r.randint(0, 1)
        value = f"({v} + {r.randint(1, 5)}) % 97"
        start = f"np.array([{r.randint(0, 5)}, {r.randint(0, 5)}], np.int32)"
        form = r.choice(("helper", "alias", "view", "listed", "local"))
        setup, target, read = [], arr, f"{arr}[0] + {arr}[1]"
        if form == "helper":
            setup = [f"def sv_npf{k}(arr, val):", [f"arr[{idx}] = val"]]
        elif form == "alias":
            setup, read = [f"sv_nb{k} = {arr}"], f"sv_nb{k}[0] + sv_nb{k}[1]"
        elif form == "view":
            start = "np.zeros((2, 2), np.int32)"
            setup, target, read = [f"sv_nr{k} = {arr}[0]"], f"sv_nr{k}", f"{arr}[0, {idx}]"
        elif form == "listed":
            setup, read = [f"sv_nl{k} = [{arr}]"], f"sv_nl{k}[0][{idx}]"
        cell, bump = self._cell_writer(k, w)
        setup += cell
        write = [*bump, f"sv_npf{k}({arr}, {value})" if form == "helper"
                 else f"{target}[{idx}] = {value}"]
        region = r.choice(("plain", "if", "for", "while"))
        if region == "if":
            write = [f"if {self._cond()}:", write]
        elif region == "for":
            write = [f"for sv_in{k} in range({r.choice(('2', 'n % 3'))}):", write]
        elif region == "while":
            write = [f"sv_kn{k} = n % 3", f"while sv_kn{k} > 0:", [f"sv_kn{k} -= 1", *write]]
        return [f"{arr} = {start}", *setup, *write, f"{w} = ({w} + {read}) % 97"]

    def _python_scalar(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        start = r.choice(("7", "10", "1", "2.5", "True"))
        op = r.choice((f"sv_ps{k} // {r.choice(('2', '-3'))}", f"sv_ps{k} % 5",
                       f"sv_ps{k} ** {r.randint(2, 4)}", f"sv_ps{k} / 4",
                       f"(sv_ps{k} * 3 + {v}) // 2", f"sv_ps{k} + isinstance(sv_ps{k}, int)"))
        branch = [f"sv_ps{k} = {op}"]
        if r.random() < 0.5:
            return [f"sv_ps{k} = {start}", f"if {self._cond()}:", branch,
                    f"{w} = int({w} + sv_ps{k}) % 97"]
        return [f"sv_ps{k} = {start}", f"if {self._cond()}:", branch,
                "else:", [f"sv_ps{k} = sv_ps{k} - 1"], f"{w} = int({w} + sv_ps{k}) % 97"]

    def _finally_raise(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        form = r.choice(("raise", "assert", "helper"))
        setup = []
        if form == "raise":
            failing = ['raise ValueError("sv")']
        elif form == "assert":
            failing = [f'assert {w} < {r.randint(-3, 3)}, "sv"']
        else:
            setup = [f"def sv_fr{k}(m):", ["if m > 2:", ['raise ValueError("sv")'],
                                           "return m + 1"]]
            failing = [f"{w} = sv_fr{k}({w} % 5)"]
        body = [f"if {self._cond()}:", [*failing, f"{v} = ({v} + {w} + 1) % 97"],
                "else:", [f"{v} = ({v} + 2) % 97"]]
        if r.random() < 0.4:
            body = ["try:", ["int('sv')"], "except ValueError:",
                    [f"{w} = ({w} + 3) % 97"]] + body
        jump = r.choice(["return " + self.gen._return_expr()]
                        + (["break", "continue"] if loop is not None else []))
        # Always taken: Python's run (the program's validation) discards the error.
        final = [f"{w} = ({w} + 5) % 97", jump]
        return setup + ["try:", body, "finally:", final]

    def _with_suppress(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        form = r.choice(("raise", "assert", "helper", "while"))
        setup = []
        if form == "helper":
            setup = [f"def sv_ws{k}(m):", ["if m > 2:", ['raise ValueError("sv")'],
                                           "return m + 1"]]
            body = [f"if {self._cond()}:", [f"{w} = sv_ws{k}({w} % 5)"]]
        elif form == "while":
            body = [f"while {self._cond()}:", ['raise ValueError("sv")']]
        elif form == "assert":
            body = [f"if {self._cond()}:", [f'assert {w} < {r.randint(-3, 3)}, "sv"']]
        else:
            body = [f"if {self._cond()}:", ['raise ValueError("sv")']]
        body = [*body, f"{v} = ({v} + {w} + 1) % 97"]
        manager = "contextlib.suppress(ValueError, AssertionError)"
        return setup + [f"with {manager}:", body]

    def _held_objects(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        held, item = f"sv_ho{k}", f"sv_hi{k}"
        setup = [f"{held} = [types.SimpleNamespace(a={v} % 7), types.SimpleNamespace(a=2)]"]
        move = [f"for {item} in {held}:", [f"{item}.a = ({item}.a + {w} + 1) % 97"]]
        form = r.choice(("if", "while", "for"))
        if form == "if":
            body = [f"if {self._cond()}:", move]
        elif form == "while":
            count = f"sv_hc{k}"
            body = [f"{count} = {w} % 3", f"while {count} > 0:", [*move, f"{count} = {count} - 1"]]
        else:
            body = [f"for sv_hr{k} in range({r.randint(1, 3)}):", move]
        return setup + body + [f"{v} = ({v} + {held}[0].a + {held}[1].a) % 97"]

    def _global_object(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        move = r.choice((f"SV_G.a = (SV_G.a + {w} + 1) % 97", f"sv_gbump({w})"))
        form = r.choice(("if", "while", "for"))
        if form == "if":
            body = [f"if {self._cond()}:", [move], "else:", ["SV_G.a = (SV_G.a + 3) % 97"]]
        elif form == "while":
            count = f"sv_gc{k}"
            body = [f"{count} = {w} % 3", f"while {count} > 0:", [move, f"{count} = {count} - 1"]]
        else:
            body = [f"for sv_gr{k} in range({r.randint(1, 3)}):", [move]]
        return [f"SV_G.a = {v} % 7", *body, f"{v} = ({v} + SV_G.a) % 97"]

    def _decided_raise(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        gate = r.randint(-3, 3)
        if gate < 0:     # it would fail: a region the arguments never enter
            test = r.choice(("a > 9", "b < -8", "n > 5", "a + b > 18"))
        else:
            test = self._cond()
        failing = [f"if sv_gr{k} < 0:", ['raise ValueError("sv")']]
        form = r.choice(("raise", "assert", "else", "helper"))
        if form == "assert":
            failing = [f'assert sv_gr{k} >= 0, "sv"']
        elif form == "else":
            failing = [f"if sv_gr{k} >= 0:", [f"{w} = ({w} + 1) % 97"], "else:",
                       ['raise ValueError("sv")']]
        elif form == "helper":
            failing = [f"{w} = ({w} + sv_ck{k}(sv_gr{k})) % 97"]
        setup = [f"sv_gr{k} = {gate}"]
        if form == "helper":
            setup += [f"def sv_ck{k}(m):", ["if m < 0:", ['raise ValueError("sv")'],
                                            "return m"]]
        body = [*failing, f"{v} = ({v} + {w} + 1) % 97"]
        if r.random() < 0.5:
            region = [f"if {test}:", body]
            if r.random() < 0.4:
                region += ["else:", [f"{v} = ({v} + 2) % 97"]]
        else:
            counter = f"sv_kr{k}"
            limit = test.split(" > ")[1] if gate < 0 and " > " in test else None
            start = {"a > 9": "a", "n > 5": "n", "a + b > 18": "a + b"}.get(test)
            if gate < 0 and start is None:    # `b < -8`
                region = [f"{counter} = b", f"while {counter} < -8:",
                          [f"{counter} += 1", *body]]
            elif gate < 0:
                region = [f"{counter} = {start}", f"while {counter} > {limit}:",
                          [f"{counter} -= 1", *body]]
            else:
                region = [f"{counter} = n % 3", f"while {counter} > 0:",
                          [f"{counter} -= 1", *body]]
        return [*setup, *region]

    def _strong_join(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        s = f"sv_sj{k}"
        if r.random() < 0.25:  # a Python start that a loop running no iteration keeps
            dtype, value = r.choice((("uint8", "-1"), ("uint8", "300"), ("int8", "200"),
                                     ("uint8", "7")))
            return [f"{s} = {value}", f"for sv_i{k} in range(n % 3):",
                    [f"{s} = jnp.{dtype}({v} % 13) + sv_i{k}"],
                    f"{w} = ({w} + jnp.int32({s})) % 97"]
        if r.random() < 0.4:   # a Python int out of a small int dtype's range
            dtype, value = r.choice((("uint8", "-1"), ("uint8", "300"), ("int8", "200"),
                                     ("int8", "-3"), ("uint8", "7")))
            pick = f"{value} if {self._cond()} else {s}"
            region = (r.choice(([f"{s} = {pick}"],
                                [f"if {self._cond()}:", [f"{s} = {value}"]])))
            return [f"{s} = jnp.{dtype}({v} % 13)", *region,
                    f"{w} = ({w} + jnp.int32({s})) % 97"]
        change = r.choice((f"{s} + 0.5", f"{s} * 1.5", f"{s} - 2.25"))
        if r.random() < 0.5:
            region = [f"if {self._cond()}:", [f"{s} = {change}"]]
            if r.random() < 0.4:
                region += ["else:", [f"{s} = {s} + 1"]]
        else:
            region = [f"{s} = {change} if {self._cond()} else {s}"]
        return [f"{s} = jnp.int32({v} % 13)", *region,
                f"{w} = ({w} + (1 if {s}.dtype == jnp.int32 else 2)) % 97"]

    def _undone_attr(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        form = r.choice(("class", "held", "type", "dunder"))
        if form in ("class", "held"):
            target = "SV_K.n" if form == "class" else f"sv_ua{k}[0].n"
            setup = [] if form == "class" else [
                f"sv_ua{k} = [types.SimpleNamespace(n=0)]"]
            return [*setup, f"{target} = 0", f"if {self._cond()}:",
                    [f"{target} = {target} + 1"], "else:", [f"{target} = {target} - 1"],
                    f"{w} = ({w} + {target} + 1) % 97"]
        reach = f"type(sv_uo{k})" if form == "type" else f"sv_uo{k}.__class__"
        return ["SV_K.n = 0", f"sv_uo{k} = SV_K()", f"if {self._cond()}:",
                [f"{reach}.n += 1", f"{v} = ({v} + 1) % 97"],
                f"{w} = ({w} + SV_K.n) % 97"]

    def _number_types(self, depth, scope, loop):
        r, k, w = self.gen.rng, self._next(), self._var()
        m = f"sv_nt{k}"
        # Literals as calls: the program's validation makes literals NumPy scalars
        # (harness.is_valid), which are not Python ints to isinstance.
        start = r.choice(("int('0')", "int('3')", "float('1.5')", "float('0.25')"))
        step = r.choice((f"{m} + int('2')", f"{m} * int('3')", f"{m} - int('1')",
                         f"{m} + float('0.5')", "float('4.0')", "int('2')"))
        region = [f"if {self._cond()}:", [f"{m} = {step}"]]
        if r.random() < 0.4:
            region += ["else:", [f"{m} = " + r.choice((f"{m} + int('1')", f"{m} * int('2')",
                                                        "float('1.0')"))]]
        read = r.choice((f"isinstance({m}, int)", f"isinstance({m}, float)",
                         f"isinstance({m}, (int, float))", f"type({m}) is int",
                         f"type({m}) is float", f"len(str({m}))", f"len(f'{{{m}}}')",
                         f"len(repr({m}))", f"len('{{}}'.format({m}))",
                         f"len('%s' % ({m},))",
                         # a Python float meets a float16 array and keeps its dtype
                         f"(float({m}) * np.ones(1, np.float16)).dtype == np.float16"))
        return [f"{m} = {start}", *region, f"{w} = ({w} + int({read}) * 3) % 97"]

    def _sorted_floats(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        odd = r.choice(("float('nan')", "-0.0", "0.0"))
        item = f"sv_sf{k}"
        items = [item, r.choice(("1.0", "-2.0", "0.0", "3.5")),
                 f"float({v} % 5)", r.choice(("-0.0", "2.0", item))]
        r.shuffle(items)
        listed = f"sv_sl{k}"
        sort = (r.choice(([f"{listed} = sorted([{', '.join(items)}])"],
                          [f"{listed} = sorted([{', '.join(items)}], reverse=True)"],
                          [f"{listed} = [{', '.join(items)}]", f"{listed}.sort()"],
                          # by a key: the items gathered in their keys' order
                          [f"{listed} = sorted([{', '.join(items)}], key=abs)"],
                          [f"{listed} = sorted([{', '.join(items)}], key=lambda q: -q, "
                           "reverse=True)"],
                          [f"{listed} = [{', '.join(items)}]",
                           f"{listed}.sort(key=lambda q: q * q)"],
                          # one item picked by a key: Python's pick (the first of
                          # equal keys, a NaN key never larger), four times
                          [f"{listed} = [{', '.join(items)}]",
                           f"{listed} = [min({listed}, key=abs)] * {len(items)}"],
                          [f"{listed} = [{', '.join(items)}]",
                           f"{listed} = [{listed}[max(range({len(items)}), "
                           f"key={listed}.__getitem__)]] * {len(items)}"])))
        at = r.randint(0, len(items) - 1)
        # a NaN is found by `!=` with itself; -0.0 by its sign (1.0 / -0.0 < 0 is not
        # computed: copysign-free) through `str`-free arithmetic: -0.0 + 0.0 hides it,
        # so the position of each odd item is read instead
        return [f"{item} = {odd} if {self._cond()} else {r.choice(('1.0', '-1.5'))}",
                *sort,
                f"{w} = ({w} + ({listed}[{at}] != {listed}[{at}]) * 5"
                f" + ({listed}[{at}] == 0.0) * 2 + int({listed}[{at}] > 0)) % 97"]

    def _sequence_compare(self, depth, scope, loop):
        r, k, v, w = self.gen.rng, self._next(), self._var(), self._var()
        if r.random() < 0.5:
            op = r.choice(("<", "<=", ">", ">=", "==", "!="))
            left = [v, str(r.randint(0, 3))]
            right = [r.choice((w, v, str(r.randint(-2, 3)))), str(r.randint(0, 3))]
            if r.random() < 0.3:
                right.append(self._var())
            display = r.choice(("({})", "[{}]"))
            shown = [display.format(", ".join(side) + ("," if display == "({})"
                                                      and len(side) == 1 else ""))
                     for side in (left, right)]
            return [f"sv_sq{k} = {shown[0]} {op} {shown[1]}",
                    f"{w} = ({w} + int(sv_sq{k}) * 3) % 97"]
        items = [v, w, str(r.randint(0, 3)), f"{v} % 4"]
        r.shuffle(items)
        return [f"sv_sl{k} = [{', '.join(items)}]",
                f"{w} = ({w} + sv_sl{k}.count({r.choice((v, w, str(r.randint(0, 3))))})) % 97"]

    def _weak_isinstance(self, depth, scope, loop):
        r, k, w = self.gen.rng, self._next(), self._var()
        m = f"sv_wi{k}"
        # (literals as calls: see _number_types)
        start = r.choice(("int('0')", "float('1.5')"))
        step = r.choice((f"{m} + int('2')", f"{m} * float('0.5')"))
        asked = r.choice((m, f"{m} * int('2')", f"{m} + float('1.0')"))
        return [f"{m} = {start}", f"if {self._cond()}:", [f"{m} = {step}"],
                f"{w} = ({w} + int(isinstance({asked}, jax.Array)) * 3) % 97"]

    def _joined_numbers(self, depth, scope, loop):
        r, k, w = self.gen.rng, self._next(), self._var()
        m, d = f"sv_jn{k}", f"sv_jd{k}"
        # (literals as calls: see _number_types)
        one, other = r.choice(("int('3')", "int('-2')", "int('0')")), \
            r.choice(("float('1.5')", "float('0.5')", "float('-2.0')"))
        if r.random() < 0.5:
            one, other = other, one
        region = r.choice((
            [f"{m} = {one}", f"if {self._cond()}:", [f"{m} = {other}"]],
            [f"if {self._cond()}:", [f"{m} = {one}"], "else:", [f"{m} = {other}"]],
            [f"{m} = {one} if {self._cond()} else {other}"]))
        derived = r.choice((f"{m} * int('2')", f"{m} + int('1')", f"-{m}", f"abs({m})",
                            f"{m} // int('2')", f"{m} * float('0.5')", f"{m} / int('2')",
                            f"({m} + int('1')) * int('3')", f"int('2') - {m}"))
        derive = r.choice(([f"{d} = {derived}"],
                           [f"{d} = {m}", f"{d} += {r.choice(('int(1)', 'float(1)'))}"],
                           # carried by a loop over the program's values (refused)
                           [f"{d} = {m}", f"for sv_ji{k} in range({self._var()} % 3):",
                            [f"{d} = {d} * int('2')"]]))
        read = r.choice((f"type({d}) is int", f"type({d}) is float",
                         f"isinstance({d}, int)", f"isinstance({d}, float)",
                         f"({d} * jnp.ones(2, jnp.int32)).dtype == jnp.int32",
                         f"({d} * jnp.ones(2, jnp.float32)).dtype == jnp.float32",
                         f"{d} * int('2') > int('1')",
                         # handed to a function (refused: its type is not carried)
                         f"type((lambda v: v * int('2'))({d})) is int"))
        return [*region, *derive, f"{w} = ({w} + int({read}) * 3) % 97"]
