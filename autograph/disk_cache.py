"""A persistent conversion cache: converted code kept on disk across processes.

A restarted process that converts a function it has converted before reads the
compiled converted code from disk instead of parsing, analysing, rewriting and
compiling the function again. An entry is found under a key made of everything
the conversion depends on:

- the text of the function's source file (any edit of the file is a new key)
  and the function's own code object (its bytecode, names, constants and
  positions: which function of the file, compiled from which text);
- what the names the function reads from outside are bound to, as far as the
  converters look (a library module or function, a directive, a module's name,
  a closure variable, a global, a builtin, nothing), and the call policy's
  verdict on each;
- the conversion options;
- the Python version (marshalled code is specific to it), the gast and JAX
  versions, and the code of autograph itself (each of its files' size and
  modification time, as Python's own ``.pyc`` check does): an upgraded or edited
  autograph never reads an entry an older one wrote.

Safe across edits as the in-memory path is: an entry is written only after a
full conversion whose stale-source check passed, for exactly that file text and
that code object; a process whose module was imported before its file was
edited holds a code object that was never written with the new text, so it
misses and its conversion raises the stale-source error as it always has.

Only what ``marshal`` writes is kept (the converted code object, the name the
runtime goes by, and the lines it runs inside a ``try``: ``guarded_lines``); the
converted tree is not: ``to_code`` of a function read from disk converts it again
to show its source. Errors are never cached.

Entries are written atomically (a temporary file in the same folder, then
``os.replace``), so processes sharing the folder never read half an entry. A
conversion does not wait for its entry to be written: ``store_later`` hands it to
a thread that writes it a moment later (``autograph.pending_writes``), and this
process reads it back from memory until then; what is pending is written at exit. A
folder that cannot be written, or an entry that cannot be read, is a miss and
nothing more. The folder is created private to the user (mode 0o700): like
``__pycache__``, what is in it is run.

Environment variables (read when autograph is imported):

- ``AUTOGRAPH_DISK_CACHE=0`` (or ``off``, ``false``, ``no``): no disk cache;
- ``AUTOGRAPH_CACHE_DIR=path``: where the entries go (default
  ``$XDG_CACHE_HOME/autograph``, else ``~/.cache/autograph``).

``autograph.set_disk_cache(path)`` changes the folder at run time, and
``autograph.set_disk_cache(None)`` turns the cache off.
"""

from __future__ import annotations

import builtins
import hashlib
import marshal
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

import gast

from autograph import pending_writes
from autograph.directives import directive_name

FORMAT = 3                      # bump when the entry layout changes
_SUFFIX = ".agc"
_OFF_WORDS = frozenset({"0", "off", "false", "no"})


def from_environment() -> DiskCache | None:
    """The disk cache the environment asks for (see the module docstring), or None."""
    if os.environ.get("AUTOGRAPH_DISK_CACHE", "1").strip().lower() in _OFF_WORDS:
        return None
    directory = os.environ.get("AUTOGRAPH_CACHE_DIR")
    if not directory:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "autograph")
    return DiskCache(directory)


class DiskCache:
    """Converted code objects in the folder ``directory``, one file per key.

    ``key(fn, lines, options, policy)`` is the entry's key; ``load(key)`` gives
    ``(code, runtime_name, guarded)`` or None; ``store(key, code, runtime_name,
    guarded)`` writes it (``guarded``: ``guarded_lines``' facts), ``store_later``
    has it written off the caller's thread, ``flush()`` waits until it is.
    ``hits``, ``misses`` and ``writes`` count what happened (tests, benchmarks;
    reading ``writes`` flushes first).
    """

    def __init__(self, directory):
        self.directory = Path(directory)
        self._folder = os.fspath(self.directory)
        self.hits = self.misses = self._written = 0
        self._made = False
        self._file_digests: dict = {}     # filename -> (lines, digest of their text)
        self._lock = threading.Lock()

    def __repr__(self):
        return f"DiskCache({str(self.directory)!r})"

    # -- keys --------------------------------------------------------------------------

    def key(self, fn, lines, options, policy) -> str:
        """The key of ``fn``'s conversion with ``options``, its file's current text
        being ``lines`` (``linecache``'s list) and ``policy`` judging library code."""
        digest = hashlib.sha256(_environment_digest())
        digest.update(repr(options).encode())
        digest.update(self._file_digest(fn.__code__.co_filename, lines))
        _add_code(digest, fn.__code__)
        digest.update(_names_signature(fn, policy).encode())
        return digest.hexdigest()

    def _file_digest(self, filename, lines) -> bytes:
        known = self._file_digests.get(filename)
        if known is not None and known[0] is lines:
            return known[1]
        text_digest = hashlib.sha256("".join(lines).encode("utf-8", "surrogatepass")).digest()
        self._file_digests[filename] = (lines, text_digest)
        return text_digest

    # -- entries -----------------------------------------------------------------------

    @property
    def writes(self) -> int:
        """How many entries were written (those pending are written first)."""
        self.flush()
        return self._written

    def _path(self, key: str) -> str:
        return f"{self._folder}{os.sep}{key}{_SUFFIX}"

    def load(self, key: str):
        """``(code, runtime_name, guarded)`` stored under ``key`` (or handed to
        ``store_later`` and not yet written), or None."""
        path = self._path(key)
        found = pending_writes.pending(path)
        if found is not None:
            self.hits += 1
            return found
        try:
            with open(path, "rb") as entry:
                data = entry.read()
            stored_format, stored_key, runtime_name, code, guarded = marshal.loads(data)
        except (OSError, EOFError, ValueError, TypeError):
            self.misses += 1
            return None
        if stored_format != FORMAT or stored_key != key or not isinstance(
                code, types.CodeType) or not isinstance(guarded, tuple):
            self.misses += 1
            return None
        self.hits += 1
        return code, runtime_name, guarded

    def store_later(self, key: str, code: types.CodeType, runtime_name: str,
                    guarded: tuple = ()) -> None:
        """``store``, off the caller's thread, a moment later (``load`` finds the
        entry meanwhile; it is written at exit at the latest)."""
        pending_writes.submit(self._path(key), (code, runtime_name, guarded),
                              lambda: self.store(key, code, runtime_name, guarded))

    def flush(self) -> None:
        """Wait until every entry handed to ``store_later`` is written."""
        pending_writes.flush()

    def store(self, key: str, code: types.CodeType, runtime_name: str,
              guarded: tuple = ()) -> None:
        """Write the entry for ``key`` atomically; a failure to write is ignored."""
        try:
            data = marshal.dumps((FORMAT, key, runtime_name, code, guarded))
            if not self._made:
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                self._made = True
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX,
                                             dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(temporary, self._path(key))
            except BaseException:
                os.unlink(temporary)
                raise
        except (OSError, ValueError):
            return
        self._written += 1

    def clear(self) -> int:
        """Delete every entry in the folder; returns how many were deleted."""
        removed = 0
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return 0
        for entry in entries:
            if entry.suffix == _SUFFIX:
                try:
                    entry.unlink()
                    removed += 1
                except OSError:
                    pass
        return removed


# -- what the key is made of -----------------------------------------------------------

_ENVIRONMENT: list = []


def _environment_digest() -> bytes:
    """The Python, gast and JAX versions and the code of autograph (each file's name,
    size and modification time), computed once per process."""
    if not _ENVIRONMENT:
        import jax

        digest = hashlib.sha256()
        digest.update(f"{FORMAT} {sys.version} {sys.implementation.cache_tag} "
                      f"{gast.__version__} {jax.__version__}".encode())
        package = Path(__file__).resolve().parent
        for root, dirs, files in os.walk(package, followlinks=True):   # (runtime: a link)
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    stat = os.stat(path)
                    digest.update(f"{os.path.relpath(path, package)} {stat.st_size} "
                                  f"{stat.st_mtime_ns}\n".encode())
        _ENVIRONMENT.append(digest.digest())
    return _ENVIRONMENT[0]


def _add_code(digest, code) -> None:
    """Feed ``digest`` with what defines ``code`` and the code nested in it."""
    digest.update(code.co_code)
    digest.update(code.co_linetable)
    digest.update(code.co_exceptiontable)
    digest.update(repr((code.co_qualname, code.co_filename, code.co_firstlineno,
                        code.co_flags, code.co_argcount, code.co_posonlyargcount,
                        code.co_kwonlyargcount, code.co_names, code.co_varnames,
                        code.co_freevars, code.co_cellvars)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _add_code(digest, const)
        else:
            digest.update(_constant_text(const).encode())
        digest.update(b"\0")


def _constant_text(value) -> str:
    """A text for a code constant that is the same in every process (a frozenset's
    items sorted: their order follows string hashing, which differs per process)."""
    if isinstance(value, tuple):
        return "(" + ",".join(_constant_text(v) for v in value) + ")"
    if isinstance(value, frozenset):
        return "{" + ",".join(sorted(_constant_text(v) for v in value)) + "}"
    return f"{type(value).__name__}:{value!r}"


# (a dict lookup: ``hasattr`` on the module raises and drops an AttributeError for
# each name that is no builtin, about 5 us each)
_BUILTINS = vars(builtins)


def _names_signature(fn, policy) -> str:
    """What each name ``fn``'s code (or code nested in it) reads from outside is
    bound to, as far as the converters look: where it is found (closure, module,
    builtins, nowhere) and, for its value, the call policy's verdict, the directive
    it is, and what module, function or class it is. Names bound inside the
    function are among them too (harmless: they only make the key more specific)."""
    names = set(fn.__code__.co_freevars)
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        names.update(code.co_freevars)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    module_globals = fn.__globals__
    parts = []
    for name in sorted(names):
        if name in closure:
            try:
                value = closure[name].cell_contents
            except ValueError:
                parts.append(f"{name}=c?")
                continue
            where = "c"
        elif name in module_globals:
            value, where = module_globals[name], "g"
        elif name in _BUILTINS:      # (as the converters see them: transpiler._namespace)
            value, where = _BUILTINS[name], "b"
        else:
            parts.append(f"{name}=-")
            continue
        parts.append(f"{name}={where}{_value_tag(value, policy)}")
    return ";".join(parts)


def _value_tag(value, policy) -> str:
    tag = "L" if policy.is_library_value(value) else ""
    name = directive_name(value)
    if name is not None:
        return f"{tag}D{name}"
    if isinstance(value, types.ModuleType):
        return f"{tag}M{value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{tag}F{getattr(value, '__module__', '')}.{value.__qualname__}"
    return f"{tag}V{type(value).__module__}.{type(value).__qualname__}"
