"""The shape of ``autograph/runtime``: its largest functions and classes, and which
of its modules import which.

    python -m benchmarks.runtime_sizes [CHECKOUT] [top]

Lines per ``def``/``class`` (a method counts within its class and again on its
own), from the source's AST; the import graph lists, per module, the runtime
modules it imports (``from autograph.runtime import x`` or ``autograph.runtime.x``).
"""

from __future__ import annotations

import ast
import os
import sys


def sizes(root: str) -> list[tuple[int, str]]:
    """``(lines, "module.qualname")`` of every def and class under ``root``'s runtime."""
    found = []
    runtime = os.path.join(root, "autograph", "runtime")
    for name in sorted(os.listdir(runtime)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(runtime, name)) as handle:
            tree = ast.parse(handle.read())
        module = name[:-3]

        def walk(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualname = f"{prefix}.{child.name}"
                    found.append((child.end_lineno - child.lineno + 1, qualname))
                    walk(child, qualname)

        walk(tree, module)
    return sorted(found, reverse=True)


def imports(root: str) -> dict[str, set[str]]:
    """``{module: runtime modules it imports}`` for ``root``'s runtime."""
    runtime = os.path.join(root, "autograph", "runtime")
    modules = {n[:-3] for n in os.listdir(runtime) if n.endswith(".py")}
    graph = {}
    for module in sorted(modules):
        with open(os.path.join(runtime, module + ".py")) as handle:
            tree = ast.parse(handle.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "autograph.runtime":
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "autograph.runtime."):
                found.add(node.module.split(".")[2])
        graph[module] = found - {module}
    return graph


def main(argv: list[str]) -> None:
    root = argv[0] if argv else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    top = int(argv[1]) if len(argv) > 1 else 12
    print(f"largest defs/classes in {root}/autograph/runtime")
    for lines, name in sizes(root)[:top]:
        print(f"{lines:5d}  {name}")
    print("\nimports within autograph/runtime")
    for module, deps in imports(root).items():
        if module != "__init__":
            print(f"{module}: {', '.join(sorted(deps)) or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
