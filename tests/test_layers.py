"""The package's layers (docs/design.md §1): no import cycle between scree's modules, lazy imports included
(`if TYPE_CHECKING:` blocks aside), and no import that points up. Read from the source with ast, not by importing."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "scree"
# Lowest first: a module may import its own layer and those before it. Top-level modules are named alone; config.py
# reads the index folder's names from index/folder.py, a leaf over the same helpers.
LAYERS = [
    {
        "errors",
        "redact",
        "inert",
        "deadlines",
        "signals",
        "heap",
        "replies",
        "paths",
        "logs",
        "protocol",
        "index.folder",
    },
    {"config"},
    {"content"},
    {"embedders"},
    {"store"},
    {"index"},
    {"search"},
    {"reader_proc", "writer_proc", "supervisor"},
    {"commands", "benchmarks"},
    {"cli", "__main__"},  # __main__: what the commands run, over the CLI it imports when one does
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The scree modules `name` imports, at its top or inside functions, but not under `if TYPE_CHECKING:`."""
    named: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" in ast.unparse(node.test):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            named.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            named.update(subs)
            if len(subs) < len(node.names):
                named.add(base)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8")))
    found = set()
    for target in named:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    short = module.removeprefix("scree.").removeprefix("scree")
    for rank, members in enumerate(LAYERS):
        if short in members:
            return rank
    for rank, members in enumerate(LAYERS):
        if short.split(".")[0] in members:
            return rank
    return -1  # scree/__init__.py: the version only


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return groups


def test_no_module_imports_another_in_a_cycle() -> None:
    graph = _graph()
    assert len(graph) > 50  # the walk found the package
    assert _cycles(graph) == []


def test_no_import_points_up() -> None:
    upward = [
        f"{name} -> {target}"
        for name, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(name)
    ]
    assert upward == []


def test_the_checks_see_a_cycle_and_an_upward_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert _layer("scree.store.db") < _layer("scree.search.engine") < _layer("scree.commands.doctor")
    assert _layer("scree.index.folder") < _layer("scree.config") < _layer("scree.index.registry")
