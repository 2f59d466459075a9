"""Build the notebooks from their percent-format sources (outputs stripped).

Each ``notebooks/src/NN_name.py`` is a plain Python script whose cells start at lines
``# %% [md]`` (markdown: the following ``# `` comment lines, unprefixed) or ``# %%``
(code). The script runs as it is (``python notebooks/src/02_loops_and_lists.py``),
which is the quick way to try a change; the test suite executes the built notebooks.

    python notebooks/src/build.py                 # every source -> notebooks/NN_name.ipynb
    python notebooks/src/build.py SRC [SRC ...]   # just these, next to the others
    python notebooks/src/build.py SRC OUT.ipynb   # one source to a given path
"""

import pathlib
import sys

import nbformat

HERE = pathlib.Path(__file__).resolve().parent
NOTEBOOKS = HERE.parent


def cells_of(text):
    """The notebook cells of a percent-format source text."""
    cells, kind, buf = [], None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(buf).strip("\n")
        cells.append(nbformat.v4.new_markdown_cell(body) if kind == "md"
                     else nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, buf = ("md" if "[md]" in line else "code"), []
        elif kind == "md":
            buf.append(line[2:] if line.startswith("# ") else ("" if line == "#" else line))
        else:
            buf.append(line)
    flush()
    for i, cell in enumerate(cells):  # stable ids: rebuilding an unchanged source changes nothing
        cell["id"] = f"cell-{i:02d}"
    return cells


def build(src, out):
    nb = nbformat.v4.new_notebook(
        cells=cells_of(pathlib.Path(src).read_text()),
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"},
                  "language_info": {"name": "python"}})
    nbformat.write(nb, str(out))
    print(f"{src} -> {out}")


def main(argv):
    if len(argv) == 2 and argv[1].endswith(".ipynb"):
        build(argv[0], argv[1])
        return
    sources = [pathlib.Path(a) for a in argv] or sorted(HERE.glob("[0-9][0-9]_*.py"))
    for src in sources:
        build(src, NOTEBOOKS / (src.stem + ".ipynb"))


if __name__ == "__main__":
    main(sys.argv[1:])
