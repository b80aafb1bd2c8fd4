"""The house's rules that a reader relies on: no import cycles, no reaching into another module's
private names, modules short enough to read, core's rooms by concern (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "desktop"
LONGEST = 600
"""Lines a module may have; past that it is split along its parts."""
FLAT_IN_CORE = 6
"""Modules that may stand directly in desktop/core, beside its packages."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """``(module imported, name taken from it or "", line)`` for every import of a module of ours,
    those inside functions too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).strip(".")
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:
                    yield full, "", node.lineno
                else:
                    yield base, alias.name, node.lineno


def _ours(module: str) -> str | None:
    """The module of ours that ``module`` names (a package for a name inside it), if any."""
    while module and module not in MODULES:
        module = module.rpartition(".")[0]
    return module or None


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for module, _, _ in _imports(name, path):
            target = _ours(module)
            if target and target != name and not name.startswith(f"{target}."):
                graph[name].add(target)
    # Tarjan's strongly connected components: a component of more than one module is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []


def test_no_module_takes_another_modules_private_names() -> None:
    reaching = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}  # local name -> module of ours it stands for
        for module, taken, line in _imports(name, path):
            target = _ours(module)
            if target is None or target == name:
                continue
            if taken.startswith("_") and not taken.startswith("__"):
                reaching.append(f"{name}:{line} imports {module}.{taken}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and _ours(node.module):
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in MODULES:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                reaching.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert reaching == []


def test_modules_are_short_enough_to_read() -> None:
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST
    }
    assert long == {}


def test_core_is_rooms_not_a_flat_folder() -> None:
    core = PACKAGE / "core"
    flat = [p.name for p in core.glob("*.py")]
    packages = sorted(p.name for p in core.iterdir() if (p / "__init__.py").is_file())
    assert len(flat) <= FLAT_IN_CORE
    rooms = ["data", "environment", "hub", "results", "runs", "serving", "settings", "system", "training"]
    assert packages == rooms
    for package in packages:  # each room says what it owns and what it may use
        text = (core / package / "__init__.py").read_text(encoding="utf-8")
        assert "May use" in text, package
