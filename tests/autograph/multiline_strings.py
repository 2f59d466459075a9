"""Functions holding multi-line string literals, indented in every way a definition
can be (methods, nested functions, lambdas): conversion must keep every string's
value exactly (``tests/autograph/test_source_strings.py``)."""

from __future__ import annotations


class Strings:
    def indented_lines(self):
        s = """a
        b"""
        return s

    def lines_at_column_zero(self):
        s = """first
second
  third"""
        return s

    def docstring_and_string(self):
        """The docstring,
        on two lines."""
        t = """x
    y
"""
        return t

    def fstring(self, n):
        s = f"""n is {n}
        twice {n * 2}
{n + 1} at column zero"""
        return s

    def bytes_and_raw(self):
        b = b"""raw\tbytes
   indented
end"""
        r = r"""back\slash
    \n kept"""
        return b, r

    def continuation_at_column_zero(self, x):
        y = x + \
1
        s = "one line \
continued at column zero"
        return y, s

    def implicit_concatenation(self):
        s = ("first\n"
             "  second "
             """third
   fourth""")
        return s

    def string_inside_branch(self, x):
        if x > 0:
            s = """positive
        indented"""
        else:
            s = """not positive
at zero"""
        return x + len(s), s == "positive\n        indented"

    @staticmethod
    def static(x):
        s = """keep
            these spaces"""
        return x * len(s)

    def returns_a_lambda(self):
        return lambda x: x + len("""lambda
        body""")


def make_nested():
    def nested(x):
        s = """nested
    four
        eight
none"""
        total = 0
        for line in s.split("\n"):
            total += len(line)
        return x + total

    return nested


def outer_with_inner(x):
    def inner(y):
        s = """inner
            spaces"""
        return y + len(s)

    return inner(x)


class Outer:
    class Inner:
        def deep(self, x):
            if x > 0:
                n = len("""deep
                    in a class in a class""")
            else:
                n = len("""deep
at zero""")
            return x + n


TABLE = {
    "first": lambda x: x + len("""table
    entry"""),
    "second": lambda x: x * len("""table
entry at zero"""),
}


def _register(fn, *args):
    return fn


# The first line of this lambda parses alone (``lambda x: x * 10``): its body goes on
# in the lines below, which a parse of that line alone would cut off.
CONTINUED = _register(
    lambda x: x * 10
    if x > 0
    else -x,
)


class _Private:
    """Private names (``__x``) are mangled by the class: ``self._Private__scale``."""

    __slots__ = ("__scale",)
    __offset = 3

    def __init__(self, scale):
        self.__scale = scale

    def __helper(self, x):
        return x * self.__scale

    def apply(self, x):
        __local = self.__helper(x)
        if __local > 10:
            __local = __local - _Private.__offset

        def __inner(y):
            return y + self.__scale

        return __inner(__local)

    double = staticmethod(lambda x, __k=2: x * __k)

    def nested_class(self, x):
        """A class defined in a method mangles its own private names, with its name."""
        class Inner:
            __factor = x

            def get(self):
                return self.__factor

            def __class_getitem__(cls, item):   # a dunder: never mangled
                return item

        Inner._Inner__bonus = 1
        return Inner().get() + Inner._Inner__bonus + self.__scale

    def uses_class_cell(self, x):
        """A class body whose methods use ``super()``: the compiler stores its cell
        (``__classcell__``) at the body's last line."""
        class Base:
            def value(self):
                return x

        class Child(Base):
            def value(self):
                return super().value() + 1
            alias = value

        return Child().alias()
