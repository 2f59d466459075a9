"""In a Jupyter kernel, an error inside a converted ``if``/``while`` body is shown at
its own line: IPython's rendered traceback (numbered listing, arrow) as a reader
sees it, from a notebook executed with nbclient."""

import re

import nbformat
from nbclient import NotebookClient

DEFINE = '''\
import jax.numpy as jnp
import autograph

def branchy(x):
    y = x + 1
    if x > 0:
        z = y * 2
        w = jnp.ones(3) @ jnp.ones(4)
    else:
        z = y
    return z

def loopy(x):
    n = 0
    while x > 0:
        x = x - 1
        n = n + jnp.ones(3) @ jnp.ones(4)
    return n
'''


def _rendered_errors():
    cells = [DEFINE,
             "autograph.to_graph(branchy)(jnp.float32(1.0))",
             "autograph.to_graph(loopy)(jnp.float32(3.0))"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    errors = []
    for cell in notebook.cells[1:]:
        (error,) = [o for o in cell.outputs if o.get("output_type") == "error"]
        errors.append(re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"])))
    return errors


def _frame_listing(text, header):
    """The listing lines of the frame whose header line contains ``header``."""
    block = text.split(header, 1)[1].split("\n\n", 1)[0]
    return [line for line in block.splitlines()[1:] if line.strip()]


def _numbered(listing):
    out = {}
    for line in listing:
        match = re.match(r"^(?:---->|\s+)\s*(\d+) (.*)$", line)
        if match:
            out[int(match.group(1))] = (line.startswith("---->"), match.group(2))
    return out


def test_the_arrow_and_numbers_are_the_cells():
    source = DEFINE.splitlines()
    for text, name, failing in zip(_rendered_errors(), ["branchy", "loopy"],
                                   ["w = jnp.ones(3) @ jnp.ones(4)",
                                    "n = n + jnp.ones(3) @ jnp.ones(4)"], strict=True):
        lineno = 1 + next(i for i, line in enumerate(source) if line.strip() == failing)
        helper = "if_true" if name == "branchy" else "loop_body"
        header = f"line {lineno}, in {name}.<locals>.{helper}"
        assert header in text, text
        numbered = _numbered(_frame_listing(text, header))
        assert numbered, text
        for number, (current, shown) in numbered.items():
            assert shown.rstrip() == source[number - 1].rstrip(), (number, text)
            assert current == (number == lineno), (number, text)
        assert "dot_general requires contracting dimensions" in text
