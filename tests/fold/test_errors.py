"""What fold cannot schedule is a ConversionError at the user's line."""

import random

import jax
import pytest

import autograph
from tests.fold import trees as T


def line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture(scope="module")
def setup():
    return T.rnn_params(jax.random.PRNGKey(0), 4), T.random_batch(random.Random(0), 3, 2, 6, 50)


def test_loop_with_a_computed_trip_count(setup):
    p, trees = setup
    with pytest.raises(autograph.ConversionError, match="depth depends on computed values") as e:
        autograph.fold(T.looping)(p, trees)
    assert e.value.filename == T.__file__
    assert e.value.lineno == line_of(T.looping, "while h.sum() > 0")


def test_recursion_continuing_on_a_computed_value(setup):
    p, trees = setup
    with pytest.raises(autograph.ConversionError, match="depth depends on computed values") as e:
        autograph.fold(T.deepening)(p, trees)
    assert e.value.filename == T.__file__
    assert e.value.lineno == line_of(T.deepening, "if h.sum() > 0")


def test_a_computed_value_read_as_a_number(setup):
    p, trees = setup
    with pytest.raises(autograph.ConversionError, match="read as a Python number") as e:
        autograph.fold(T.reads_number)(p, trees)
    assert e.value.lineno == line_of(T.reads_number, "float(h.sum())")


def test_branches_returning_different_structures(setup):
    p, trees = setup

    def uneven(p, node):
        if node.is_leaf:
            return T.embed(p, node.word)
        h = T.mix(p, uneven(p, node.left), uneven(p, node.right))
        if h.sum() > 0:
            return h
        return h[:2]

    with pytest.raises(autograph.ConversionError, match="different types") as e:
        autograph.fold(uneven)(p, trees)
    assert e.value.lineno == line_of(uneven, "if h.sum() > 0")


def test_a_failing_callee_names_the_call(setup):
    p, trees = setup

    def wrong(p, node):
        if node.is_leaf:
            return T.embed(p, node.word)
        return T.mix(p, wrong(p, node.left), p["e"])

    with pytest.raises(autograph.ConversionError, match="calling 'mix'") as e:
        autograph.fold(wrong)(p, trees)
    assert e.value.lineno == line_of(wrong, "return T.mix(p, wrong")


def test_trees_returning_different_structures(setup):
    p, _ = setup

    def by_shape(p, node):
        if node.is_leaf:
            return T.embed(p, node.word)
        return (by_shape(p, node.left), by_shape(p, node.right))

    with pytest.raises(autograph.ConversionError, match="different structures"):
        autograph.fold(by_shape)(p, [T.Node(word=1), T.Node(left=T.Node(word=1),
                                                             right=T.Node(word=2))])
