"""Every library the frozen launcher imports is in its release recipe, ``installer/build-requirements.txt``.

The launcher is frozen from that file alone, so a library it imports that only the developer's venv
holds works in every test and crashes the released program: ``filelock`` did, on every start that
found an unfinished runtime (issue 40). This walks the launcher's import closure in our source, the
imports inside functions included, without building anything; ``test_bundle.py`` checks the same
against PyInstaller's warnings file of a bundle built the release way.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "installer" / "build-requirements.txt"
ENTRY = "desktop.launcher.__main__"

GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
"""An import inside ``try`` with one of these handlers is optional: the code works without it."""

NOT_THE_LAUNCHERS = {
    ("desktop.core.system.instance.wait_for_exit", "psutil"): "the app's --wait-pid, after a repair",
    ("desktop.core.system.processes._lower", "psutil"): "called only once psutil has been imported",
}
"""Unguarded imports in functions the launcher never calls, with the reason."""


@dataclass(frozen=True)
class Import:
    """One import statement: what it imports, where, and whether the code survives its absence."""

    name: str
    module: str
    function: str
    line: int
    optional: bool

    @property
    def where(self) -> str:
        return f"{self.module}.{self.function}" if self.function else self.module


def source_of(name: str) -> tuple[Path, bool] | None:
    """The file of our module ``name`` and whether it is a package; ``None`` if it is not ours."""
    path = ROOT.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py", True
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py"), False
    return None


def imports_of(name: str) -> list[Import]:
    """Every import in module ``name``, at any depth, except those only for type checkers."""
    path, is_package = source_of(name)
    found: list[Import] = []

    def add(target: str, node: ast.AST, function: str, optional: bool) -> None:
        found.append(Import(target, name, function, node.lineno, optional))

    def visit(node: ast.AST, function: str, optional: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            body: list[ast.AST] = list(node.orelse)
        elif isinstance(node, ast.Try):
            caught = set()
            for handler in node.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                caught |= {
                    "Exception" if kind is None else ast.unparse(kind).split(".")[-1] for kind in kinds
                }
            for child in node.body:
                visit(child, function, optional or bool(caught & GUARDS))
            body = [*node.handlers, *node.orelse, *node.finalbody]
        else:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                function = node.name if not function else f"{function}.{node.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node, function, optional)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package this module is in
                    package = name.split(".")[: len(name.split(".")) - (0 if is_package else 1)]
                    package = package[: len(package) - node.level + 1]
                    base = ".".join([*package, *([node.module] if node.module else [])])
                add(base, node, function, optional)
                for alias in node.names:  # `from desktop.core import system` imports a module
                    if source_of(f"{base}.{alias.name}") is not None:
                        add(f"{base}.{alias.name}", node, function, optional)
            body = list(ast.iter_child_nodes(node))
        for child in body:
            visit(child, function, optional)

    visit(ast.parse(path.read_text(encoding="utf-8")), "", False)
    return found


def launcher_closure() -> tuple[set[str], list[Import]]:
    """Our modules the launcher may import (whole modules: any function in them may run), and their
    imports of libraries outside the standard library."""
    ours: set[str] = set()
    libraries: list[Import] = []
    todo = [ENTRY]
    while todo:
        name = todo.pop()
        if name in ours:
            continue
        ours.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a module runs its packages
        for found in imports_of(name):
            top = found.name.split(".")[0]
            if source_of(found.name) is not None:
                todo.append(found.name)
            elif top not in sys.stdlib_module_names and top not in ("__future__", "desktop"):
                libraries.append(found)
    return ours, libraries


def requirement_name(line: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", line).group(0)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def recipe_distributions() -> set[str]:
    """The distributions a venv made from the recipe holds: its pins and what they require."""
    pinned = [
        requirement_name(line)
        for line in RECIPE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    held: set[str] = set()
    todo = list(pinned)
    while todo:
        name = normalized(todo.pop())
        if name in held:
            continue
        held.add(name)
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: its own requirements are unknown, itself is held
        todo += [requirement_name(r) for r in requires if "extra ==" not in r and "win32" not in r]
    return held


def test_the_launcher_reaches_only_the_core_it_is_allowed_and_never_the_window() -> None:
    ours, _ = launcher_closure()
    assert "desktop.launcher.main" in ours and "desktop.core.system.instance" in ours  # the walk works
    assert not [name for name in ours if name.startswith(("desktop.gui", "desktop.cli", "desktop.app"))]
    core = {name.split(".")[2] for name in ours if name.startswith("desktop.core.") and name.count(".") > 2}
    assert core <= {"system", "environment"}


def test_every_library_the_launcher_imports_is_in_the_release_recipe() -> None:
    _, libraries = launcher_closure()
    providers = importlib.metadata.packages_distributions()
    held = recipe_distributions()
    missing = []
    for found in libraries:
        if found.optional or (found.where, found.name.split(".")[0]) in NOT_THE_LAUNCHERS:
            continue
        top = found.name.split(".")[0]
        if not {normalized(d) for d in providers.get(top, [top])} & held:
            missing.append(f"{top} (imported by {found.where}, line {found.line})")
    assert not missing, "add to installer/build-requirements.txt: " + ", ".join(missing)


def test_the_walk_sees_imports_inside_functions_and_knows_optional_ones() -> None:
    _, libraries = launcher_closure()
    by_name = {(found.where, found.name) for found in libraries if not found.optional}
    assert ("desktop.core.system.instance.InstanceMark.acquire", "filelock") in by_name  # inside a method
    keyring = [found for found in libraries if found.name == "keyring"]
    assert keyring and all(found.optional for found in keyring)  # try: import keyring / except Exception
    assert set(NOT_THE_LAUNCHERS) <= {(where, name.split(".")[0]) for where, name in by_name}  # none stale
