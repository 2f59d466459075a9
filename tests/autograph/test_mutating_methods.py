"""The methods that change a container in place (autograph/mutating_methods.py),
checked against Python's own types: each method of list, dict, set, bytearray and
deque is called on a fresh object, and it is in the set exactly when the object
changed."""

from __future__ import annotations

import collections

import pytest

from autograph.mutating_methods import CHANGING_METHODS

# Arguments each method accepts on the examples below.
ARGUMENTS = {
    "append": (1,), "extend": ([1],), "insert": (0, 1), "remove": (1,), "index": (1,),
    "count": (1,), "__setitem__": (0, 5), "__delitem__": (0,), "__iadd__": ([1],),
    "__imul__": (2,), "appendleft": (1,), "extendleft": ([1],), "rotate": (1,),
    "update": ({1: 2},), "setdefault": (5, 0), "get": (1,), "__ior__": ({5: 1},),
    "add": (5,), "discard": (1,), "difference_update": ({1},),
    "intersection_update": ({2},), "symmetric_difference_update": ({7},),
    "__iand__": ({2},), "__isub__": ({1},), "__ixor__": ({7},), "difference": ({1},),
    "intersection": ({1},), "union": ({1},), "symmetric_difference": ({1},),
    "isdisjoint": ({1},), "issubset": ({1},), "issuperset": ({1},), "fromkeys": ([1],),
    "pop": (), "popleft": (), "popitem": (), "sort": (), "reverse": (), "clear": (),
    "copy": (),
}
EXAMPLES = {
    list: lambda: [2, 1], dict: lambda: {1: 2, 3: 4}, set: lambda: {1, 2},
    bytearray: lambda: bytearray(b"\x01\x02"), collections.deque: lambda: collections.deque([1, 2]),
}
# Where a kind takes other arguments than ARGUMENTS says.
OWN_ARGUMENTS = {
    bytearray: {"extend": (b"\x01",), "__iadd__": (b"\x01",)},
    dict: {"pop": (1,), "__delitem__": (1,), "update": ({5: 6},)},
    set: {"update": ({5},), "__ior__": ({5},)},
}


def _cases():
    for kind, make in EXAMPLES.items():
        for name in dir(kind):
            if name in ARGUMENTS and (not name.startswith("__") or hasattr(kind, name)):
                yield pytest.param(kind, make, name, id=f"{kind.__name__}.{name}")


@pytest.mark.parametrize("kind,make,name", list(_cases()))
def test_a_method_is_listed_exactly_when_it_changes_its_object(kind, make, name):
    obj = make()
    before = make()
    args = OWN_ARGUMENTS.get(kind, {}).get(name, ARGUMENTS[name])
    getattr(obj, name)(*args)
    assert (name in CHANGING_METHODS) == (obj != before), (kind, name, obj)


def test_every_listed_method_is_one_of_the_containers_and_checked_above():
    checked = {name for kind in EXAMPLES for name in dir(kind) if name in ARGUMENTS}
    assert CHANGING_METHODS <= checked
