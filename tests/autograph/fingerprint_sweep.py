"""The stale-source check over whole libraries: ``python -m tests.autograph.fingerprint_sweep``.

Every function of the standard library modules below, and of jax and numpy, is
unchanged since import, so ``parsing.parse_function`` must accept each one; a
refusal is a false "changed since import" (for instance a new Python version
placing an instruction where no expression of the source is). Prints the count
and the first refusals; exits 1 if any. Run it on each new Python version.
"""

from __future__ import annotations

import importlib
import inspect
import linecache
import pkgutil
import sys
import types

from autograph import parsing
from autograph.errors import ConversionError

STDLIB = ["argparse", "ast", "asyncio", "collections", "csv", "dataclasses", "datetime",
          "decimal", "difflib", "email", "enum", "fractions", "functools", "inspect", "json",
          "logging", "pathlib", "pprint", "re", "shutil", "statistics", "string", "textwrap",
          "tokenize", "typing", "unittest", "urllib", "zipfile"]
PACKAGES = ["jax", "numpy"]


def modules():
    """The modules swept: the standard library list, then every importable submodule
    of the packages."""
    names = list(STDLIB)
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names += [info.name for info in pkgutil.walk_packages(root.__path__, package + ".")
                  if not any(part in info.name for part in (".tests", "._tests", "__main__"))]
    for name in names:
        try:
            yield importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - optional parts of a package, scripts
            continue


def functions(module):
    """The plain functions defined in ``module``, and its classes' methods."""
    for value in list(vars(module).values()):
        candidates = [value]
        if isinstance(value, type) and value.__module__ == module.__name__:
            candidates = list(vars(value).values())
        for fn in candidates:
            fn = getattr(fn, "__func__", fn)
            if isinstance(fn, types.FunctionType) and fn.__module__ == module.__name__:
                yield fn


def main() -> int:
    checked, refused, seen = 0, [], set()
    for module in modules():
        for fn in functions(module):
            if fn.__code__ in seen or fn.__name__ == "<lambda>":
                continue
            seen.add(fn.__code__)
            lines = linecache.getlines(fn.__code__.co_filename)
            if not lines or not inspect.isfunction(fn):
                continue
            checked += 1
            try:
                parsing.parse_function(fn, lines)
            except ConversionError as error:
                if "changed since" in str(error):
                    refused.append(f"{fn.__module__}.{fn.__qualname__}: {error}")
            except Exception:  # noqa: BLE001 - what parsing refuses otherwise is not ours here
                continue
    print(f"Python {sys.version.split()[0]}: {checked} functions checked, "
          f"{len(refused)} refused as changed since import")
    for line in refused[:15]:
        print(" ", line.splitlines()[0][:300])
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
