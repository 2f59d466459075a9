"""Build a notebook from a simple text format: cells separated by lines '# %% [md]' / '# %%'."""
import sys, nbformat
src, out = sys.argv[1], sys.argv[2]
cells, kind, buf = [], None, []
def flush():
    if kind is None: return
    text = "\n".join(buf).strip("\n")
    cells.append(nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell(text))
for line in open(src).read().splitlines():
    if line.startswith("# %%"):
        flush(); kind = "md" if "[md]" in line else "code"; buf = []
    else:
        buf.append(line[2:] if kind == "md" and line.startswith("# ") else ("" if kind == "md" and line == "#" else line))
flush()
nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}, "language_info": {"name": "python"}})
nbformat.write(nb, out)
