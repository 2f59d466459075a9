"""The disk cache of converted code (issue 30, item 2): a restarted process reads
back what an earlier one converted; edits of the source, of the names it reads and
of autograph itself are new keys; a stale module is still refused; writes are
atomic; the environment variable turns it off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import pytest

import autograph
from autograph import disk_cache, parsing
from autograph.call_policy import CallPolicy
from autograph.context import ConversionOptions
from autograph.transpiler import Transpiler

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''\
import jax.numpy as jnp

SCALE = 3


def steps(n):
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += SCALE
    return count


def other(x):
    return x + 1
'''

# Run in a fresh interpreter: imports the module, converts ``steps`` with the API's
# transpiler, calls it, and prints what happened as JSON.
SCRIPT = '''\
import json, sys
sys.path.insert(0, sys.argv[1])
import autograph
from autograph import api
import {module}
result = {{}}
try:
    {before}
    fn = autograph.convert({module}.steps)
    result["value"] = fn(27)
    result["original"] = {module}.steps(27)
    result["to_code_has_while"] = "while_stmt" in autograph.to_code({module}.steps)
except autograph.ConversionError as e:
    result["error"] = str(e)
cache = api._TRANSPILER.disk_cache
result["cache"] = None if cache is None else [cache.hits, cache.misses, cache.writes]
print(json.dumps(result))
'''


# [hits, misses, writes] of a process converting `steps` once and calling it with
# Python values: the converted code (to_graph would run it) and its Python twin.
WRITTEN = [0, 2, 2]
READ = [2, 0, 0]


def _edit(path: Path, text: str) -> None:
    """Rewrite ``path`` with a modification stamp that moves forward."""
    stamp = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))


def _run(tmp_path, module="ag_disk_mod", before="pass", env=None, pythonpath=None):
    out = _python(tmp_path, SCRIPT.format(module=module, before=before), env, pythonpath)
    return json.loads(out.strip().splitlines()[-1])


def _python(tmp_path, text, env=None, pythonpath=None) -> str:
    """Run the script ``text`` in a fresh interpreter with the cache in
    ``tmp_path/cache`` and the modules of ``tmp_path/src``; its output."""
    script = tmp_path / "run_script.py"
    script.write_text(text)
    environment = {**os.environ, "AUTOGRAPH_CACHE_DIR": str(tmp_path / "cache"),
                   "PYTHONPATH": pythonpath or str(ROOT), "JAX_PLATFORMS": "cpu"}
    environment.pop("AUTOGRAPH_DISK_CACHE", None)
    environment.update(env or {})
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "src")],
                          capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    path = folder / "ag_disk_mod.py"
    path.write_text(MODULE)
    return path


def test_a_restarted_process_reads_the_conversion_back(tmp_path, source):
    first = _run(tmp_path)
    assert first["value"] == first["original"] == 3 * 111
    assert first["cache"] == WRITTEN             # missed, written: converted code and twin
    second = _run(tmp_path)
    assert second["value"] == second["original"] == 3 * 111
    assert second["cache"] == READ               # read back, nothing written
    assert second["to_code_has_while"]          # to_code converts again to show it
    assert len(list((tmp_path / "cache").glob("*.agc"))) == 2


def test_an_edit_between_runs_is_a_new_key(tmp_path, source):
    assert _run(tmp_path)["cache"] == WRITTEN
    _edit(source, MODULE.replace("count += SCALE", "count += SCALE + 1"))
    edited = _run(tmp_path)
    assert edited["value"] == edited["original"] == 4 * 111    # the new code, not the old
    assert edited["cache"] == WRITTEN
    assert _run(tmp_path)["cache"] == READ


def test_a_module_edited_after_import_is_still_refused(tmp_path, source):
    """Another process converted the edited file; this one imported the old text
    and the file changed under it: its code object was never stored with the new
    text, so it misses and the stale-source check refuses it as before."""
    edited = MODULE.replace("count += SCALE", "count += SCALE * 2")
    old_stamp = os.stat(source).st_mtime_ns
    _edit(source, edited)
    assert _run(tmp_path)["cache"] == WRITTEN                  # the edited text, stored
    source.write_text(MODULE)
    os.utime(source, ns=(old_stamp, old_stamp))
    before = (f"import os; open({str(source)!r}, 'w').write({edited!r}); "
              f"os.utime({str(source)!r}, ns=({old_stamp + 5 * 10**9}, "
              f"{old_stamp + 5 * 10**9}))")
    stale = _run(tmp_path, before=before)
    assert "changed since its module was imported" in stale.get("error", ""), stale
    assert stale["cache"] == [0, 1, 0]          # looked up, not found, nothing written


def test_the_environment_variable_turns_it_off(tmp_path, source):
    off = _run(tmp_path, env={"AUTOGRAPH_DISK_CACHE": "0"})
    assert off["cache"] is None and off["value"] == off["original"]
    assert not (tmp_path / "cache").exists()


def test_a_changed_autograph_never_reads_an_older_entry(tmp_path, source):
    package = tmp_path / "pkg"
    shutil.copytree(ROOT / "autograph", package / "autograph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert _run(tmp_path, pythonpath=str(package))["cache"] == WRITTEN
    assert _run(tmp_path, pythonpath=str(package))["cache"] == READ
    errors = package / "autograph" / "errors.py"
    errors.write_text(errors.read_text() + "\n# upgraded\n")
    assert _run(tmp_path, pythonpath=str(package))["cache"] == WRITTEN


# -- keys and entries, in this process --------------------------------------------------


def _module(tmp_path, text, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def _key(cache, fn, policy=None, options=None):
    return cache.key(fn, parsing.file_lines(fn), options or ConversionOptions(),
                     policy or CallPolicy())


def test_the_key_follows_what_the_names_are_bound_to(tmp_path):
    text = "def f(x):\n    set_loop_options(maximum_iterations=3)\n    return x\n"
    cache = disk_cache.DiskCache(tmp_path / "cache")
    module = _module(tmp_path, text, "ag_key_names")
    unbound = _key(cache, module.f)
    module.set_loop_options = autograph.set_loop_options        # now a directive
    directive = _key(cache, module.f)
    module.set_loop_options = lambda **k: None                   # now the user's function
    user = _key(cache, module.f)
    assert len({unbound, directive, user}) == 3
    assert _key(cache, module.f) == user                          # and it is stable


def test_the_key_follows_the_call_policy_and_the_options(tmp_path):
    text = "import json\n\ndef f(x):\n    return json.dumps(x)\n"
    cache = disk_cache.DiskCache(tmp_path / "cache")
    module = _module(tmp_path, text, "ag_key_policy")
    policy = CallPolicy()
    before = _key(cache, module.f, policy)
    policy.always_convert("json")
    assert _key(cache, module.f, policy) != before
    assert _key(cache, module.f, options=ConversionOptions(recursive=False)) != before


def test_entries_are_written_whole_under_concurrent_writers(tmp_path):
    cache = disk_cache.DiskCache(tmp_path / "cache")
    codes = [compile(f"x = {i}\n" * 200, "<c>", "exec") for i in range(8)]

    def write(code):
        for _ in range(20):
            cache.store("k", code, "ag__")

    threads = [threading.Thread(target=write, args=(c,)) for c in codes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    code, runtime_name, guarded = cache.load("k")
    assert code in codes and runtime_name == "ag__" and guarded == ()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["k.agc"]   # no leftovers


def test_an_unreadable_entry_is_a_miss(tmp_path):
    cache = disk_cache.DiskCache(tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "bad.agc").write_bytes(b"\x00garbage")
    assert cache.load("bad") is None
    assert cache.load("absent") is None
    assert cache.misses == 2


def test_a_transpiler_with_a_disk_cache_converts_as_without(tmp_path):
    text = textwrap.dedent('''\
        def f(xs, k):
            total = 0
            for x in xs:
                if x > k:
                    total += x
            return total, [x * k for x in xs]
        ''')
    module = _module(tmp_path, text, "ag_same_result")
    cache_dir = tmp_path / "cache"
    Transpiler(disk_cache=disk_cache.DiskCache(cache_dir)).convert(module.f)
    disk_cache.DiskCache(cache_dir).flush()    # (read back from the file, not from memory)
    reader = Transpiler(disk_cache=disk_cache.DiskCache(cache_dir))
    converted = reader.convert(module.f)
    assert reader.disk_cache.hits == 1
    assert converted([1, 5, 9], 4) == module.f([1, 5, 9], 4)
    assert reader.source(module.f) == Transpiler().source(module.f)


# -- writes off the conversion's path (issue 30, item 1: the first call) -----------------


@pytest.fixture
def slow_writes(monkeypatch):
    """Entries handed to the writer stay pending for a minute unless flushed."""
    from autograph import pending_writes

    pending_writes.flush()
    monkeypatch.setattr(pending_writes, "DELAY", 60.0)


def test_a_conversion_does_not_wait_for_its_entry(tmp_path, slow_writes):
    module = _module(tmp_path, "def f(x):\n    return x + 1 if x > 0 else x\n", "ag_later")
    cache_dir = tmp_path / "cache"
    writer = Transpiler(disk_cache=disk_cache.DiskCache(cache_dir))
    assert writer.convert(module.f)(2) == 3
    assert not list(cache_dir.glob("*.agc"))                # not written yet
    reader = Transpiler(disk_cache=disk_cache.DiskCache(cache_dir))
    assert reader.convert(module.f)(-2) == -2
    assert reader.disk_cache.hits == 1                      # read back from memory
    assert writer.disk_cache.writes == 1                    # (reading it flushes)
    assert [p.suffix for p in cache_dir.iterdir()] == [".agc"]   # whole, no leftovers
    assert Transpiler(disk_cache=disk_cache.DiskCache(cache_dir)).disk_cache.load(
        next(iter(cache_dir.iterdir())).stem) is not None


EXITING = '''\
import sys
sys.path.insert(0, sys.argv[1])
from autograph import api, pending_writes
pending_writes.DELAY = 600.0
import ag_disk_mod
api._TRANSPILER.convert(ag_disk_mod.steps)
api._TRANSPILER.convert(ag_disk_mod.other)
'''


def test_entries_still_pending_are_written_at_exit(tmp_path, source):
    _python(tmp_path, EXITING)
    written = sorted(p.suffix for p in (tmp_path / "cache").iterdir())
    assert written == [".agc", ".agc"]                      # both, and no temporary file
    assert _run(tmp_path)["cache"][0] == 1                  # `steps` read back
