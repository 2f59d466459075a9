"""Every notebook runs top to bottom, fresh, on the CPU (outputs are not stored)."""

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "commit notebooks with their outputs stripped")
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [out for cell in notebook.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors


def test_there_are_notebooks():
    assert NOTEBOOKS


SOURCES = sorted((NOTEBOOKS[0].parent / "src").glob("[0-9][0-9]_*.py")) if NOTEBOOKS else []
SOURCES += [s for s in [NOTEBOOKS[0].parent / "src" / "fold.py"] if NOTEBOOKS and s.exists()]


def _build_module():
    import importlib.util
    path = pathlib.Path(__file__).parents[2] / "notebooks" / "src" / "build.py"
    spec = importlib.util.spec_from_file_location("notebook_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_notebook_is_built_from_its_source(src):
    """Each notebook is the build of its percent-format source (edit the source, then
    run ``python notebooks/src/build.py``)."""
    built = _build_module().cells_of(src.read_text())
    notebook = nbformat.read(src.parents[1] / (src.stem + ".ipynb"), as_version=4)
    assert [(c.cell_type, c.source) for c in notebook.cells] == [
        (c.cell_type, c.source) for c in built]
