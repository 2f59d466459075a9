"""The user's context managers, run as converted code.

``with Tag():`` calls ``Tag.__enter__`` and ``Tag.__exit__``; run as they are, a
``print`` in them would print while tracing, once per trace, before anything the
staged body prints when the program runs ("enter, exit, x 2.0" where Python
prints "enter, x 2.0, exit"). ``handlers.managed`` asks here for the two calls:

- a class's ``__enter__``/``__exit__``: through ``converted_call``, so a ``print``
  in them is staged in program order, as the body's is;
- a ``@contextmanager`` generator of the user's (a generator has no converted
  form): each step of it, under ``jit``, runs with what it writes to
  ``sys.stdout``/``sys.stderr`` held back and staged as one ``print`` of that text,
  in program order (refused where its arguments are traced: the text would be
  the tracer's);
- ``ExitStack.callback``/``push``/``enter_context`` (``registering``): the function
  or context manager registered, converted the same way.
"""

from __future__ import annotations

import contextlib
import sys
import threading

from autograph.call_policy import is_library_file
from autograph.errors import ConversionError
from autograph.runtime.trace_context import under_jit
from autograph.runtime.tracing import caller_location, has_tracer


def calls_of(manager, enter, leave, call):
    """``(enter, leave)``: ``manager``'s ``__enter__`` and ``__exit__`` (bound) as
    converted code calls them (see the module docstring); ``call``: the caller's
    ``converted_call``."""
    if type(manager) is contextlib._GeneratorContextManager and _users(manager.func):
        # (its __enter__ drops func, args and kwds)
        generator = (manager.func.__qualname__, has_tracer((manager.args, manager.kwds)))
        return _Stepped(enter, generator), _Stepped(leave, generator)
    return call(enter), call(leave)


def _users(func) -> bool:
    code = getattr(func, "__code__", None)
    return code is not None and not is_library_file(code.co_filename)


class _Stepped:
    """A step of a user's ``@contextmanager`` generator (its ``__enter__`` or
    ``__exit__``), its output staged under ``jit``."""

    __slots__ = ("step", "generator")

    def __init__(self, step, generator):
        self.step, self.generator = step, generator   # (its name, traced arguments?)

    def __call__(self, *args):
        if not under_jit():
            return self.step(*args)
        held = {}
        try:
            with _held_back(held):
                return self.step(*args)
        finally:   # (what it wrote before raising too, as Python's print made it)
            _replay(held, *self.generator)


@contextlib.contextmanager
def _held_back(held: dict):
    """While the block runs, what this thread writes to ``sys.stdout`` and
    ``sys.stderr`` is held back (other threads write through), in ``held``:
    ``{stream: [text...]}`` by the stream it was meant for."""
    swapped = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            continue
        recorder = _Recorder(stream, held.setdefault(stream, []))
        setattr(sys, name, recorder)
        swapped.append((name, stream, recorder))
    try:
        yield
    finally:
        for name, stream, recorder in swapped:
            if getattr(sys, name) is recorder:
                setattr(sys, name, stream)


class _Recorder:
    """A stream that keeps what this thread writes, and passes on the rest."""

    def __init__(self, stream, kept: list):
        self._stream, self._kept, self._thread = stream, kept, threading.get_ident()

    def write(self, text):
        if threading.get_ident() != self._thread:
            return self._stream.write(text)
        self._kept.append(text)
        return len(text)

    def flush(self):
        if threading.get_ident() != self._thread:
            self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _replay(held, name, traced_arguments):
    """Stage the text ``held`` as ``print``s, in program order."""
    # (printing imports handlers, which imports this module)
    from autograph.runtime.printing import print_

    for stream, parts in held.items():
        text = "".join(parts)
        if not text:
            continue
        if traced_arguments:
            where = caller_location()
            raise ConversionError(
                f"the @contextmanager generator '{name}' writes "
                "output and is given traced arguments: a generator runs as it is "
                "(it has no converted form), while tracing, so its text would be the "
                "tracer's, not the value's. Write the context manager as a class with "
                "__enter__ and __exit__ (autograph converts those), or pass it Python "
                "values.", where.filename, where.lineno)
        print_(text, end="", file=None if stream is sys.stdout else stream)


def registering(method, call):
    """``ExitStack.callback``/``push``/``enter_context`` (the bound ``method``) with
    the function or context manager it registers converted: the stack calls them
    at its ``__exit__``, outside converted code."""
    name = method.__name__
    if name == "enter_context":
        # (handlers imports this module)
        from autograph.runtime.handlers import managed

        return lambda manager: method(managed(manager, call))

    def register(target, /, *args, **kwargs):
        if name == "push" and _has_exit(target):
            method(call(type(target).__exit__.__get__(target)))
        else:
            method(call(target), *args, **kwargs)
        return target

    return register


def _has_exit(obj) -> bool:
    return any("__exit__" in base.__dict__ for base in type(obj).__mro__)


def exit_stack_methods() -> frozenset:
    """The ids of the ``ExitStack`` methods ``registering`` handles."""
    stack = contextlib.ExitStack
    return frozenset(id(getattr(stack, name)) for name in ("callback", "push",
                                                            "enter_context"))
