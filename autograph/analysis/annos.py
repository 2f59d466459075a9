"""Annotation keys the analyses and converters attach to AST nodes, and their accessors."""

import gast

LIVE_OUT = "live_out"              # If/While/For: names live after the statement
LIVE_IN_BODY = "live_in_body"      # If/While/For: names live on entry to the body
LIVE_IN_ORELSE = "live_in_orelse"  # If: names live on entry to the else branch
LIVE_AT_HEAD = "live_at_head"      # While/For: names live at the top of each iteration
DEFINED_IN = "defined_in"          # If/While/For: names bound on every path to the statement
MAYBE_DEFINED_IN = "maybe_defined_in"  # If/While/For: names bound on some path
MAYBE_UNDEFINED = "maybe_undefined"    # Name (load): the name may be unbound when read
DEFINED_OUT = "defined_out"        # If: names bound on every path after it
READ_UNBOUND = "read_unbound"      # FunctionDef: names some read or del may find unbound
EXTRA_TEST = "extra_test"          # For: an expression of the state, true while it may go on
IN_TRY = "in_try"                  # If/While/For/IfExp: line of the enclosing `try` (or None)
LOOP_OPTIONS = "loop_options"      # While/For: keywords of its set_loop_options directive
DIRECTIVE = "directive"            # Call: the name of the directive it calls
STAYS_PYTHON = "stays_python"      # def/lambda: a generator or coroutine, left unconverted
RUNTIME = "runtime"                # Attribute: `ag__.<name>` a converter made: that name
FINALLY_JUMP = "finally_jump"      # jump in a `finally` (later its flag assignment): overrides
CATCHES_VALUE_ERRORS = "catches_value_errors"  # Try: an except may catch an error on values
KEEPS_ERRORS = "keeps_errors"      # Try the try converter adds: keeps errors for the finally
OPERAND = "operand"                # Lambda: an and_/or_ operand (walked by assigning tests)
CONSUMED = "consumed"              # GeneratorExp: a call's argument, consumed on the spot

# Runtime operators earlier converters write that change their first argument in
# place and give it back (``x = ag__.list_append(x, v)``): the same object after.
IN_PLACE_OPERATORS = frozenset({"list_append", "list_pop", "setitem", "augmented_assign"})

_PREFIX = "_ag_"


def get(node, key, default=None):
    """The annotation ``key`` of ``node``, or ``default``."""
    return getattr(node, _PREFIX + key, default)


def set(node, key, value):  # noqa: A001 - mirrors get
    """Attach ``value`` to ``node`` under ``key``."""
    setattr(node, _PREFIX + key, value)


def runtime_operator(node):
    """``'and_'`` for a call of ``ag__.and_`` that a converter made (the ``RUNTIME``
    annotation of its function), else None."""
    func = getattr(node, "func", None)
    return getattr(func, _PREFIX + RUNTIME, None) if isinstance(node, gast.Call) else None
