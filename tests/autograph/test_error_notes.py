"""The notes a converted function's boundary adds (``autograph/error_notes.py``)."""

from __future__ import annotations

import math
import traceback

import jax
import jax.numpy as jnp
import opt_einsum
import pytest

import autograph
from autograph import error_notes
from autograph.call_policy import is_library_file
from autograph.runtime import regions


def formatted(excinfo) -> str:
    return "".join(traceback.format_exception(excinfo.value))


def installed_package_raises_in_staged_branch(x):
    if x.sum() > 0:
        y = opt_einsum.contract("ij,ij->", x, jnp.ones((2, 2)))
    else:
        y = x.sum()
    return y


def jax_raises_in_staged_branch(x):
    if x.sum() > 0:
        y = jnp.reshape(x, (4, 5)).sum()
    else:
        y = x.sum()
    return y


@pytest.mark.parametrize("fn", [installed_package_raises_in_staged_branch,
                                jax_raises_in_staged_branch])
def test_a_library_s_own_raise_in_a_staged_branch_gets_no_checkify_advice(fn):
    """The `raise` is the library's (an installed package, or JAX itself), not the
    user's: advice to replace it by checkify would be wrong."""
    with pytest.raises((ValueError, TypeError)) as excinfo:
        jax.jit(autograph.convert(fn))(jnp.ones((3, 3)))
    with pytest.raises(type(excinfo.value)):
        fn(jnp.ones((3, 3)))         # the original fails the same way
    notes = "\n".join(getattr(excinfo.value, "__notes__", []))
    assert "checkify" not in notes and "This `raise`" not in notes
    text = formatted(excinfo)
    assert f'File "{__file__}", line {fn.__code__.co_firstlineno + 2}' in text


def index_in_untaken_branch(x):
    table = [1, 2, 3]
    r = 0
    if x > 0:
        r = table[5]
    return r


def missing_key_in_staged_loop(n):
    d = {"a": 1}
    t, i = 0, 0
    while i < n:
        t = t + d["b"]
        i += 1
    return t


def math_domain_in_staged_branch(x):
    r = 1.0
    if x > 0:
        r = math.log(-1.0)
    return r


@pytest.mark.parametrize("fn, error", [(index_in_untaken_branch, IndexError),
                                       (missing_key_in_staged_loop, KeyError),
                                       (math_domain_in_staged_branch, ValueError)])
def test_a_value_error_at_the_user_s_line_in_a_staged_region_is_explained(fn, error):
    """Python runs the line only when the branch is taken (here it is not: Python gives
    a value); a staged branch is traced whatever the condition, so the error comes
    while tracing. The exception stays the user's, with a note saying why."""
    fn(jnp.int32(-1))
    with pytest.raises(error) as excinfo:
        autograph.to_graph(fn)(jnp.int32(-1))
    notes = "\n".join(getattr(excinfo.value, "__notes__", []))
    assert f"This line raised {error.__name__} while autograph traced the" in notes
    assert "whatever the condition's value" in notes
    assert "checkify" not in notes


def test_library_files_are_installed_packages_and_not_the_user_s_files():
    for module in (opt_einsum, jax, autograph.runtime):
        assert is_library_file(module.__file__)
    assert not is_library_file(__file__)


def test_the_region_comes_from_the_runtime_s_record_not_its_frames():
    def raise_in_region():
        with regions.staged("while loop", "user.py:7"):
            raise ValueError("inside")

    with pytest.raises(ValueError) as excinfo:
        raise_in_region()
    assert regions.regions_of(excinfo.value) == (regions.Region("while loop", "user.py:7"),)
    note = error_notes.explain(excinfo.value, lambda code: True)
    assert "This `raise` is inside the while loop at user.py:7" in note


@pytest.mark.parametrize("segment, shape", [
    ("int(x)", ("int", 0)), ("bool(x > 0)", ("bool", 0)), ("0 < x < 1", (None, 2)),
    ("a < b and b < c", (None, 0)), ("f(x)(y)", (None, 0)), ("x > 0", (None, 1)),
    ("a not in b < c", (None, 2)), ("int(x) + 1", (None, 0)), ("min(x, (1", (None, 0)),
])
def test_expression_shape_is_read_without_the_parser(segment, shape):
    assert error_notes._expression_shape(segment) == shape
