import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Tests convert from scratch and write nothing under ~/.cache; the disk cache's own
# tests turn it on in the processes they start.
os.environ.setdefault("AUTOGRAPH_DISK_CACHE", "0")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only when ``-m`` selects them (``.ci/run``'s second
    step, ``python -m pytest -m slow``); the default run skips them."""
    if "slow" in (config.getoption("-m") or ""):
        return
    import pytest

    skip = pytest.mark.skip(reason="slow: runs with -m slow (the second step of .ci/run)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
