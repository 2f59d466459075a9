"""The call policy: which functions are library code, decided at conversion time."""

import json
import math
import os

import jax
import numpy as np

import autograph
from autograph import call_policy, converters, runtime
from autograph.call_policy import (
    DO_NOT_CONVERT,
    CallPolicy,
    is_library_file,
    is_marked_do_not_convert,
    library_dirs,
)


def users_function(x):
    return x + 1


def test_library_files_are_the_standard_library_installed_packages_and_ours():
    for module in (json, jax, np, autograph, runtime, converters, call_policy):
        assert is_library_file(module.__file__), module
    assert is_library_file(None)
    assert is_library_file("<frozen importlib._bootstrap>")
    assert not is_library_file(__file__)
    assert not is_library_file("<ipython-input-1-abc>")
    assert all(d.endswith(os.sep) for d in library_dirs())


def test_the_policy_judges_by_module_name_then_by_file():
    policy = CallPolicy()
    assert policy.is_library_function(json.dumps)
    assert not policy.is_library_function(users_function)
    policy.never_convert(__name__)
    assert policy.is_library_function(users_function)
    policy.always_convert("json")
    assert not policy.is_library_function(json.dumps)
    assert policy.is_library_value(np) and policy.is_library_value(math.floor)
    assert not policy.is_library_value(3)


def test_do_not_convert_marks_the_function_and_its_wrappers():
    def plain(x):
        return x

    def wrapper(x):
        return plain(x)

    wrapper.__wrapped__ = plain
    assert not is_marked_do_not_convert(wrapper)
    autograph.do_not_convert(plain)
    assert getattr(plain, DO_NOT_CONVERT)
    assert is_marked_do_not_convert(plain) and is_marked_do_not_convert(wrapper)
