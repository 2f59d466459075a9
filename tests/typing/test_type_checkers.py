"""mypy and pyright on a small typed user file, as in a user's project (a copy outside
the checkout, the package resolved through the editable install): no error in
``typed_user.py``, the converted functions' signatures revealed, and every call
marked ``# error`` in ``typed_user_errors.py`` flagged (and nothing else).

The checkers come with the ``typing`` extra (``pip install -e '.[typing]'``); without
them these tests skip, unless ``AUTOGRAPH_REQUIRE_TYPE_CHECKERS=1`` (CI) says they
must run.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FILES = ("typed_user.py", "typed_user_errors.py")
REVEALED = {   # name -> what both checkers show of its signature
    "huber_loss": ("a: ", "Array", "delta: float", "-> ", "Array"),
    "steps": ("(n: int) -> int",),
    "helper": ("x: ", "scale: float", "-> ", "Array"),
    "compiled": ("GraphFunction", "a: ", "delta: float"),
}

pytestmark = pytest.mark.slow


def _tool(name):
    path = Path(sys.executable).parent / name
    if path.exists():
        return str(path)
    if os.environ.get("AUTOGRAPH_REQUIRE_TYPE_CHECKERS"):
        pytest.fail(f"{name} is not installed (pip install -e '.[typing]')")
    pytest.skip(f"{name} is not installed (pip install -e '.[typing]')")


def _project(tmp_path):
    for name in FILES:
        shutil.copy(HERE / name, tmp_path / name)
    return tmp_path


def _marked_lines(name):
    lines = (HERE / name).read_text().splitlines()
    return {i + 1 for i, line in enumerate(lines) if line.rstrip().endswith("# error")}


def _reveal_lines(name):
    lines = (HERE / name).read_text().splitlines()
    return {i + 1: re.match(r"reveal_type\((\w+)\)", line).group(1)
            for i, line in enumerate(lines) if line.startswith("reveal_type(")}


def _check(output, pattern):
    """Lines of ``output`` matching ``pattern`` (groups: file, line, kind, text)."""
    return [m.groups() for m in re.finditer(pattern, output, re.MULTILINE)]


def test_mypy(tmp_path):
    mypy = _tool("mypy")
    project = _project(tmp_path)
    run = subprocess.run([mypy, "--no-color-output", "--cache-dir", str(tmp_path / ".cache"),
                          *FILES], cwd=project, capture_output=True, text=True, timeout=600)
    found = _check(run.stdout, r"^(typed_user\w*\.py):(\d+): (error|note): (.*)$")
    errors = {int(line) for file, line, kind, _ in found
              if kind == "error" and file == "typed_user_errors.py"}
    assert not [f for f in found if f[0] == "typed_user.py" and f[2] == "error"], run.stdout
    assert errors == _marked_lines("typed_user_errors.py"), run.stdout
    revealed = {int(line): text for file, line, kind, text in found
                if file == "typed_user.py" and text.startswith("Revealed type")}
    _assert_revealed(revealed, run.stdout)


def test_pyright(tmp_path):
    pyright = _tool("pyright")
    project = _project(tmp_path)
    run = subprocess.run([pyright, "--pythonpath", sys.executable, *FILES], cwd=project,
                         capture_output=True, text=True, timeout=600)
    found = _check(run.stdout, r"^\s*\S*(typed_user\w*\.py):(\d+):\d+ - (error|information|"
                               r"warning): (.*)$")
    assert found, run.stdout + run.stderr
    assert not [f for f in found if f[0] == "typed_user.py" and f[2] != "information"], (
        run.stdout)
    errors = {int(line) for file, line, kind, _ in found
              if kind == "error" and file == "typed_user_errors.py"}
    assert errors == _marked_lines("typed_user_errors.py"), run.stdout
    revealed = {int(line): text for file, line, kind, text in found
                if file == "typed_user.py" and kind == "information"}
    _assert_revealed(revealed, run.stdout)


def _assert_revealed(revealed, output):
    for line, name in _reveal_lines("typed_user.py").items():
        text = revealed.get(line, "")
        assert all(piece in text for piece in REVEALED[name]), (name, text, output)
        assert "Any" not in text, (name, text)
