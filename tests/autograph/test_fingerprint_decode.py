"""The stale-source check reads instructions straight from the bytecode on Python 3.11
(``fingerprint.instructions``): the same names, positions and arguments as
``dis.get_instructions`` gives, on every function of standard library modules."""

from __future__ import annotations

import dis
import sys
import types

import pytest

from autograph import fingerprint
from tests.autograph.fingerprint_sweep import STDLIB, functions, modules


def by_dis(code):
    return [(i.opname, tuple(i.positions),
             i.argval if i.opname in fingerprint._ARGVAL_OPS else None)
            for i in dis.get_instructions(code)]


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


@pytest.mark.skipif(not fingerprint._DECODED, reason="dis is used on this Python")
def test_decoded_instructions_are_those_of_dis(monkeypatch):
    monkeypatch.setattr("tests.autograph.fingerprint_sweep.PACKAGES", [])
    count = 0
    for module in modules():
        if module.__name__.split(".")[0] not in STDLIB:
            continue
        for fn in functions(module):
            for code in code_objects(fn.__code__):
                assert fingerprint.instructions(code) == by_dis(code), fn.__qualname__
                count += 1
    assert count > 2000


def test_extended_arguments_are_read():
    # More than 256 constants and names: their instructions carry EXTENDED_ARG.
    source = "def f():\n" + "".join(f"    v{i} = {i}.5\n" for i in range(300)) + \
             "    return v299\n"
    namespace = {}
    exec(compile(source, "<many>", "exec"), namespace)
    code = namespace["f"].__code__
    assert any(op == "EXTENDED_ARG" for op, _, _ in fingerprint.instructions(code))
    assert fingerprint.instructions(code) == by_dis(code)
    assert sys.version_info >= (3, 11)
