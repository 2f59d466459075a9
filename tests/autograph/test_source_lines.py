"""source_lines.read: the very lines linecache reads, or None where it must read them."""

from __future__ import annotations

import linecache

import pytest

from autograph import source_lines

CASES = {
    "plain": b"def f(x):\n    return x + 1\n",
    "no final newline": b"def f(x):\n    return x\n\n\n# end",
    "empty": b"",
    "only newlines": b"\n\n\n",
    "unicode": "def f(x):\n    s = 'é \u2028 \x0c \x1c'\n    return x\n".encode(),
    "form feed and vertical tab": b"a = 1\x0c\nb = 2\x0b\n",
    "crlf": b"def f(x):\r\n    return x\r\n",
    "lone cr": b"a = 1\rb = 2\n",
    "bom": b"\xef\xbb\xbfdef f(x):\n    return x\n",
    "latin-1 cookie": "# -*- coding: latin-1 -*-\ns = 'é'\n".encode("latin-1"),
    "cookie on line 2": "#!/usr/bin/env python\n# coding: latin-1\ns = 'é'\n".encode("latin-1"),
    "invalid utf-8": b"s = '\xff'\n",
}
# The files read here; linecache reads the others.
READ_HERE = {"plain", "no final newline", "empty", "only newlines", "unicode",
             "form feed and vertical tab"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lines_and_the_cache_entry_are_linecaches(tmp_path, name):
    path = str(tmp_path / "module.py")
    with open(path, "wb") as file:
        file.write(CASES[name])
    linecache.checkcache(path)
    fast = source_lines.read(path)
    fast_entry = linecache.cache.pop(path, None)
    expected = linecache.getlines(path)
    entry = linecache.cache.pop(path, None)
    assert (fast is not None) == (name in READ_HERE)
    if fast is not None:
        assert fast == expected and fast_entry == entry
    else:
        assert fast_entry is None       # nothing entered: linecache reads it


def test_what_it_reads_and_what_it_leaves(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(CASES["plain"])
    assert source_lines.read(str(path)) is not None
    assert source_lines.read(str(path)) is None          # cached already: linecache's
    linecache.cache.pop(str(path))
    assert source_lines.read(str(tmp_path / "absent.py")) is None
    assert source_lines.read("<stdin>") is None
