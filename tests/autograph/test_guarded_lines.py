"""The lines converted code runs inside a ``try`` (``autograph/guarded_lines.py``):
computed when a function is converted, kept with the code in the disk cache, and
what the runtime's checks look up by a frame's line (``runtime/try_lines.py``)."""

from __future__ import annotations

import textwrap

from autograph import disk_cache
from autograph.runtime import try_lines
from autograph.transpiler import Transpiler
from tests.autograph.test_disk_cache import _module

SOURCE = textwrap.dedent('''\
    def f(x):
        y = x                       # 2
        try:
            y = g(x)                # 4: handled
            if x > 0:               # 5: handled (and the helpers made of its branches)
                y = g(y)            # 6: handled
            def later(z):           # 7
                return g(z)         # 8: its own function, called anywhere
        except ValueError:
            y = g(y + 1)            # 10: not handled (no finally)
        try:
            try:
                y = g(y)            # 13: handled, discarded
            except KeyError:
                y = g(y + 2)        # 15: handled by the outer try, discarded
        finally:
            y = g(y + 3)            # 17: neither
            return y                # 18
        return later(y)


    def g(x):
        return x
    ''')


def facts_of(module, transpiler):
    transpiler.convert(module.f)
    filename = module.f.__code__.co_filename
    return {anchor: try_lines._FACTS.get((filename, anchor)) for anchor in (1, 7)}


def test_handled_and_discarding_lines_of_a_definition(tmp_path):
    module = _module(tmp_path, SOURCE, "ag_guarded_lines")
    facts = facts_of(module, Transpiler())
    handled, discarding = facts[1]
    assert {4, 5, 6, 13, 15} <= handled.keys()
    assert not {2, 8, 10, 17, 18} & handled.keys()
    assert handled[4] == handled[6] == {"ValueError"}
    assert handled[13] == {"KeyError", "BaseException"}  # (the kept exception's handler)
    assert handled[15] == {"BaseException"}
    assert {13, 15} <= discarding
    assert not {2, 4, 5, 6, 10, 17, 18} & discarding
    assert facts[7] is None   # `later`: no try of its own


def test_a_disk_cache_hit_records_the_same_lines(tmp_path):
    module = _module(tmp_path, SOURCE, "ag_guarded_lines_cached")
    cache_dir = tmp_path / "cache"
    writer = Transpiler(disk_cache=disk_cache.DiskCache(cache_dir))
    written = facts_of(module, writer)
    writer.disk_cache.flush()           # (read back from the file, not from memory)
    filename = module.f.__code__.co_filename
    for key in [k for k in try_lines._FACTS if k[0] == filename]:
        del try_lines._FACTS[key]
    reader = Transpiler(disk_cache=disk_cache.DiskCache(cache_dir))
    assert facts_of(module, reader) == written
    assert reader.disk_cache.hits == 1


def test_a_newer_conversion_at_the_same_line_replaces_the_facts(tmp_path):
    # The file edited and imported again: the definition at line 1 has no `try` now.
    module = _module(tmp_path, SOURCE, "ag_guarded_lines_edited")
    assert facts_of(module, Transpiler())[1] is not None
    edited = _module(tmp_path, "def f(x):\n    return x\n", "ag_guarded_lines_edited")
    assert facts_of(edited, Transpiler())[1] is None
