"""What a deferred output call returns (``printing.call_when_run``).

Python's ``stream.write(text)`` returns the number of characters (a text stream) or
bytes (a binary one) written; ``writelines``, ``log.info`` and ``warnings.warn``
return None. A call made when the compiled program runs has not run yet when the
traced code goes on, so its result is what Python's call would return, found while
tracing: a standard stream's ``write`` of a static ``str`` (text) or bytes-like
value (binary) writes all of it, so the count is its length. Where the count is
not known while tracing (text holding traced values, a stream class whose ``write``
is its own), the call gives an ``UnknownCount``, which refuses every use at the
user's line: only a call whose result is dropped keeps Python's meaning.
"""

from __future__ import annotations

import io

from autograph.errors import ConversionError

# The standard streams whose write takes all it is given and returns its length.
_TEXT_WRITES = frozenset({io.TextIOWrapper.write, io.StringIO.write})
_BINARY_WRITES = frozenset({io.BufferedWriter.write, io.BufferedRandom.write,
                            io.BytesIO.write})


def result_of(f, args, kwargs, where):
    """What Python's ``f(*args, **kwargs)`` returns, for ``f`` an output call made
    when the program runs (``output_calls.py``), where it is known while tracing;
    else an ``UnknownCount`` naming ``where`` (the user's line of the call)."""
    name = getattr(f, "__name__", None)
    owner = getattr(f, "__self__", None)
    if name != "write" or owner is None:
        return None   # writelines, a logger's methods, warnings.warn: None
    write = getattr(type(owner), "write", None)
    if len(args) == 1 and not kwargs:
        text = args[0]
        if write in _TEXT_WRITES and type(text) is str:
            return len(text)
        if write in _BINARY_WRITES and isinstance(text, (bytes, bytearray, memoryview)):
            return memoryview(text).nbytes
    return UnknownCount(f"{type(owner).__name__}.write", where)


class UnknownCount:
    """The count a deferred ``write`` returns where it is not known while tracing:
    any use of it is a ``ConversionError`` at the call's line."""

    __slots__ = ("_what", "_where")

    def __init__(self, what, where):
        self._what = what
        self._where = where

    def __repr__(self):
        return f"<the count {self._what} returns when the compiled program runs>"

    def _refuse(self, *_, **__):
        where = self._where
        raise ConversionError(
            f"the count of characters {self._what} returns is used here, but the write "
            "is made when the compiled program runs (its text holds traced values, or "
            "the stream's own write decides the count), so the count is not known "
            "while tracing. Use the length of the text instead (len(text) of a "
            "str you format before the call), or leave the result unused.",
            where.filename, where.lineno)

    __bool__ = __int__ = __index__ = __float__ = __complex__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _refuse
    __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = _refuse
    __format__ = __str__ = __jax_array__ = __array__ = _refuse
