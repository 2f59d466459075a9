"""``autograph.fold``: TensorFlow Fold's dynamic batching for plain recursive Python.

    recording.py   the recursion run over each tree with placeholders for arrays
    rewrite.py     the recording copy of a function: every call through one hook
    recording_fast.py  the fast path of recording, handing over to recording.py
    recording_batch.py  a batch's fast recording cut into per-tree recordings
    schedule.py    heights, nodes list-scheduled into steps sized to the levels: a Plan
    executor.py    one jitted program per layout: leaves at once, then the steps
    api.py         ``fold(fn)``: ``__call__(params, trees_or_plan)`` and ``.plan``
"""

from autograph.fold.api import Fold, fold
from autograph.fold.schedule import Plan

__all__ = ["Fold", "Plan", "fold"]
