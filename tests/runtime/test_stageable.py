"""``stageable.check_stageable``: what only fails once a branch or loop is staged.

What the user's code does is known from conversion (``StagingObstacles``, tested in
tests/autograph/analysis/test_stageability.py); here, what the runtime says."""

from __future__ import annotations

import pytest

from autograph.errors import ConversionError
from autograph.runtime.stageable import NO_OBSTACLES, StagingObstacles, check_stageable
from autograph.runtime.tracing import Location

WHERE = Location("user.py", 7)


def test_no_obstacles_pass():
    check_stageable(NO_OBSTACLES, WHERE, "if")
    check_stageable(StagingObstacles(deletes="y"), WHERE, "if")   # a branch may `del`


@pytest.mark.parametrize("obstacles, construct, words", [
    (StagingObstacles(in_try=3), "if", "`try` at line 3"),
    (StagingObstacles(assigns_global="g"), "for loop", "'g' is declared `global`"),
    (StagingObstacles(assigns_nonlocal="t"), "while loop", "'t' is declared `nonlocal`"),
    (StagingObstacles(deletes="y"), "while loop", "`del y`"),
])
def test_each_obstacle_is_a_conversion_error_at_the_user_s_line(obstacles, construct, words):
    with pytest.raises(ConversionError, match=words) as info:
        check_stageable(obstacles, WHERE, construct)
    assert (info.value.filename, info.value.lineno) == ("user.py", 7)
