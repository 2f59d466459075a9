"""analysis/literal_steps.py: the loop variables only stepped by int literals."""

from __future__ import annotations

import textwrap

import gast

from autograph.analysis.literal_steps import for_steps, while_steps


def loop_of(source):
    """The first statement of ``source`` (a loop)."""
    return gast.parse(textwrap.dedent(source)).body[0]


def test_a_while_counter_stepped_by_literals_and_compared_in_the_test():
    loop = loop_of("""
        while n != 1 and steps < limit:
            if n % 2 == 0:
                n = n // 2
                steps = steps + 2
            else:
                n = 3 * n + 1
                steps -= 1
            steps += 1
        """)
    assert while_steps(loop, ["n", "steps"]) == {"steps": (3, 1)}


def test_a_while_counter_read_otherwise_is_not_stepped_by_literals():
    for source in ("""
            while x > 0:
                x = x + steps
                steps += 1
            """, """
            while steps * 2 < x:
                steps += 1
            """, """
            while x > 0:
                for i in range(3):
                    steps += 1
            """, """
            while x > 0:
                steps += 1
                if steps > 3:
                    x = x - 1
            """, """
            while x > 0:
                steps += n
            """, """
            while x > 0:
                steps += 1.5
            """, """
            while x > 0:
                steps *= 2
            """, """
            while x > 0:
                steps += 1
                f = lambda: steps
            """):
        assert "steps" not in while_steps(loop_of(source), ["x", "steps"]), source


def test_a_for_counter_stepped_once_an_iteration():
    loop = loop_of("""
        for i in range(5):
            x = x + i
            count += 2
            k = k - 1
            k += -3
            k -= 2 * 10 ** 8
            if x > 3:
                j += 1
        """)
    assert for_steps(loop, ["x", "count", "k", "j"]) == {"count": 2, "k": -4 - 2 * 10 ** 8,
                                                         "j": (1, 0)}


def test_a_for_body_that_may_jump_has_bounds_not_a_net_step():
    for source in ("""
            for i in range(5):
                count += 1
                if i > 2:
                    break
            """, """
            for i in range(5):
                if i > 2:
                    continue
                count += 1
            """):
        assert for_steps(loop_of(source), ["count"]) == {"count": (1, 0)}, source


def test_a_for_counter_read_or_assigned_otherwise_has_no_steps():
    for source in ("""
            for i in range(5):
                count += 1
                x = x + count
            """, """
            for count in range(5):
                count += 1
            """, """
            for i in range(5):
                count = i
            """):
        assert for_steps(loop_of(source), ["count", "x"]).get("count") is None, source
