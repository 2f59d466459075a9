"""The fuzzer's ``strings`` feature: multi-line string literals in indented functions.

With ``strings``, a program's body also holds statements that use multi-line
string literals (triple-quoted, raw, bytes, f-strings with format specs, escapes,
backslash continuations), whose continuation lines sit at any column, column 0
included; and the function itself is indented: a method, a static method of a
nested class, or a function nested in a factory, each with a multi-line
docstring. A string is compared by value with its expected value written on one
line (``repr``), or counted (``len``), into an int variable, so a string that
conversion changes changes the program's result in every mode::

    class _Holder_f_7:
        def run(self, a, b, n):
            '''Doc
      of f_7'''
            x = x + ('''ab
    cd''' == 'ab\\n    cd') * 3
            ...

    f_7 = _Holder_f_7().run
"""

from __future__ import annotations

INT_VARS = ("x", "y", "z")
_WORDS = ("alpha", "be", "gamma", "d", "eps", "zeta", "  ", "x y", "#not a comment",
          "def f():", "if 1:", "-", "%s", "%%")


def literal(rng) -> tuple[str, str]:
    """A string literal spanning several lines, and its value written on one line."""
    kind = rng.choice(["plain", "plain", "raw", "bytes", "fstring", "continued"])
    quote = rng.choice(['"""', "'''"])
    lines = [_content(rng, kind) for _ in range(rng.randint(2, 4))]
    if kind == "continued":          # a one-quote string continued by backslashes
        quote = rng.choice(['"', "'"])
        text = quote + "\\\n".join(lines) + quote
    else:
        prefix = {"plain": "", "raw": "r", "bytes": "b", "fstring": "f"}[kind]
        joiner = "\\\n" if kind == "plain" and rng.random() < 0.3 else "\n"
        text = prefix + quote + joiner.join(lines) + quote
    value = eval(text)  # noqa: S307 - a literal this module just wrote
    return text, repr(value)


def _content(rng, kind) -> str:
    """One line of a literal's content: any indentation, column 0 included."""
    indent = rng.choice(["", "", " ", "  ", "    ", "        ", "            ", "\t",
                         "\t    "])
    words = [rng.choice(_WORDS) for _ in range(rng.randint(0, 3))]
    if kind == "plain" and rng.random() < 0.3:
        words.append(rng.choice(["\\t", "\\n", "\\x41", "\\u00e9"]))
    if kind == "fstring" and rng.random() < 0.7:
        value = rng.randint(-20, 300)
        spec = rng.choice(["", "!r", ":>6", ":<4", ":^7", ":05d", ":x"])
        words.append("{" + str(value) + spec + "}")
    if kind == "fstring":
        words = [w.replace("{", "{{").replace("}", "}}") if not w.startswith("{") else w
                 for w in words]
    return indent + " ".join(words).rstrip("\\")


def statement(rng, depth) -> list:
    """Lines of a statement folding a multi-line literal into an int variable."""
    text, expected = literal(rng)
    var = rng.choice(INT_VARS)
    kind = rng.randint(0, 3 if depth == 0 else 2)
    if kind == 0:
        return [f"{var} = {var} + ({text} == {expected}) * {rng.randint(1, 5)}"]
    if kind == 1:
        return [f"{var} = ({var} + len({text})) % {rng.randint(11, 97)}"]
    if kind == 2:
        return [f"{var} = (lambda v: v + ({text} == {expected}) * 2)({var})"]
    helper = f"helper_{rng.randint(0, 10**6)}"     # a nested def, at the top level only
    return [f"def {helper}(v):", [f"return (v + len({text})) % {rng.randint(11, 97)}"],
            f"{var} = {helper}({var})"]


def wrapped(rng, name: str, body_lines: list[str]) -> str:
    """The source of ``name``: a function of ``(a, b, n)`` whose body is ``body_lines``
    (lines of the body, unindented; a multi-line literal is one item whose
    continuation lines are verbatim), defined indented inside a class or a factory."""
    doc_text, _ = literal(rng)
    if doc_text.startswith(("b", "f")):
        doc_text = doc_text[1:]                      # a docstring is a plain string
    body = [doc_text, *body_lines]
    form = rng.choice(["method", "static", "nested_class", "factory"])
    holder = f"_Holder_{name}"
    if form == "method":
        head = [f"class {holder}:", "    def run(self, a, b, n):"]
        tail = [f"{name} = {holder}().run"]
        level = 2
    elif form == "static":
        head = [f"class {holder}:", "    @staticmethod", f"    def {name}(a, b, n):"]
        tail = [f"{name} = {holder}.{name}"]
        level = 2
    elif form == "nested_class":
        head = [f"class {holder}:", "    class Inner:", "        @staticmethod",
                f"        def {name}(a, b, n):"]
        tail = [f"{name} = {holder}.Inner.{name}"]
        level = 3
    else:
        head = [f"def _make_{name}():", f"    def {name}(a, b, n):"]
        tail = [f"    return {name}", "", f"{name} = _make_{name}()"]
        level = 2
    lines = head + ["    " * level + line for line in body]
    return "\n".join(lines + ([""] if form != "factory" else []) + tail) + "\n"
