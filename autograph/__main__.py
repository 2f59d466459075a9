"""``python -m autograph``: the same as the ``autograph`` command."""

from autograph.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
