"""Run chosen converters alone on a piece of code: the converter tests' harness.

    convert_with([lists], "z = []\\nz.append(x)")
    # 'z = []\\nz = ag__.list_append(z, x)'

A converter runs with only the converters it needs, in the pipeline's order,
through the real transpiler (parse, analyse, convert, compile), so that each
converter's docstring example can be checked as a test (``test_docstrings.py``).
The code is written to a module of its own, after ``PRELUDE``; statements become
the body of a function whose parameters are the names they use (other than the
prelude's and the builtins), so that none of them is unbound.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import itertools
import sys
import tempfile
import textwrap
from pathlib import Path

import gast

from autograph.transpiler import DEFAULT_CONVERTERS, Transpiler

PRELUDE = """\
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import autograph
"""
_PRELUDE_NAMES = {"math", "jax", "jnp", "np", "lax", "autograph"}
_MODULES = itertools.count()


def convert_with(converters, code: str) -> str:
    """The source the ``converters`` (modules of ``autograph.converters``) make of
    ``code``: a ``def`` (its converted definition), or statements (the converted
    statements of the function made of them)."""
    code = textwrap.dedent(code).strip() + "\n"
    tree = gast.parse(code)
    is_def = len(tree.body) == 1 and isinstance(tree.body[0], gast.FunctionDef)
    if not is_def:
        names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        params = sorted(n for n in names
                        if n not in _PRELUDE_NAMES and not hasattr(builtins, n))
        code = f"def example({', '.join(params)}):\n" + textwrap.indent(code, "    ")
    ordered = [c for c in DEFAULT_CONVERTERS if c in converters]
    assert len(ordered) == len(converters), "not a converter of the pipeline"
    with tempfile.TemporaryDirectory(prefix="ag_converter_test_") as directory:
        fn = _define(code, Path(directory))
        node = Transpiler(converters=ordered).tree(fn)
        sys.modules.pop(fn.__module__, None)
    if is_def:
        return ast.unparse(gast.gast_to_ast(node))
    return "\n".join(ast.unparse(gast.gast_to_ast(stmt)) for stmt in node.body)


def normalized(code: str) -> str:
    """``code`` as ``ast.unparse`` writes it: formatting and comments do not count."""
    return ast.unparse(ast.parse(textwrap.dedent(code)))


def _define(code: str, directory: Path):
    """The function that ``code`` (one ``def``) defines, from a module of its own."""
    name = f"converter_example_{next(_MODULES)}"
    path = directory / f"{name}.py"
    path.write_text(PRELUDE + "\n\n" + code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    functions = [v for v in vars(module).values()
                 if callable(v) and getattr(v, "__module__", None) == name]
    assert len(functions) == 1
    return functions[0]
