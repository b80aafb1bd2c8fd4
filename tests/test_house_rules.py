"""The house's rules that a reader relies on: no import cycles, no reaching into another module's
private names (ours or another library's), modules short enough to read, core's rooms by concern
(docs/ARCHITECTURE.md)."""

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


DOCUMENTED_DESPITE_THE_UNDERSCORE = {
    "os._exit": "documented in Python's os module: ends the process at once, without clean-up",
    "sys._getframe": "documented in Python's sys module (CPython)",
    "sys._MEIPASS": "PyInstaller's documented run-time attribute: the folder of the frozen bundle",
}
"""Names of other libraries that start with an underscore and are public all the same: anywhere."""

KEPT_PRIVATE = {
    ("desktop.core.system.lazy", "_imp"): "lock_held(): is the global import lock held (a finder "
    "runs); no public API since imp went in 3.12",
    ("desktop.core.system.lazy", "importlib._bootstrap"): "the table below; no public API",
    ("desktop.core.system.lazy", "importlib._bootstrap._blocking_on"): "which thread waits for which "
    "module's import lock: a background import steps aside only while nobody needs it",
    ("desktop.core.system.lazy", "*._initializing"): "ModuleSpec's flag: a module still being imported "
    "is not imported yet (the window would wait for it)",
    ("desktop.core.training.grouping", "super()._get_train_sampler"): "the Trainer's only way to take "
    "a sampler: batches grouped by length, in random order",
    ("desktop.gui.app_support.import_hook", "*._mod_uses_pyside"): "PySide6's check of every "
    "imported module, replaced by one that keeps no source in memory (PYSIDE-2029)",
    ("installer.build", "sys._base_executable"): "the Python a venv was made from (CPython's venv "
    "module reads it too): the release venv inherits nothing",
}
"""Private names of other libraries that we keep, each in the one module named, with the reason: none
has a public equivalent. ``tests/test_upstream_private_names.py`` fails on the release that changes
one, and the module says why it is there."""

SCRIPTS = ["tools", "installer"]
"""Folders of scripts outside the package that the rule on other libraries' private names covers."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _up_to_last_private(dotted: str) -> str:
    """``a._b.c`` -> ``a._b``: the private name that a dotted name goes through."""
    parts = dotted.split(".")
    last = max(i for i, part in enumerate(parts) if _private(part))
    return ".".join(parts[: last + 1])


def _foreign(module: str | None) -> bool:
    return bool(module) and module.split(".")[0] != "desktop"


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """``a.b.c`` as the full name it stands for, when ``a`` is a name imported from another library."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in bound:
        return ".".join([bound[node.id], *reversed(attrs)])
    return None


def _upstream_private_uses(tree: ast.Module, ours: set[str]) -> Iterator[tuple[int, str]]:
    """``(line, private name)`` for each use of another library's private name: an import of one or
    of a private module, an attribute reached through a name imported from another library (or
    ``getattr`` / ``setattr`` / ``hasattr`` of one, on any object but ``self`` / ``cls``), and
    ``super()._name`` where no class of ours defines ``_name`` (a library's hook, overridden).
    ``ours``: the private method names our classes define."""
    bound: dict[str, str] = {}  # local name -> the library's full name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _foreign(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        yield node.lineno, _up_to_last_private(alias.name)
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and not node.level and _foreign(node.module):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if any(_private(part) for part in full.split(".")):
                    yield node.lineno, _up_to_last_private(full)
                bound[alias.asname or alias.name] = full
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            dotted = _dotted(node, bound)
            if dotted and any(_private(part) for part in dotted.split(".")):
                yield node.lineno, _up_to_last_private(dotted)
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "super"
                and _private(node.attr)
                and node.attr not in ours
            ):
                yield node.lineno, f"super().{node.attr}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            owner = node.args[0]
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            yield node.lineno, f"{_dotted(owner, bound) or '*'}.{node.args[1].value}"


def _our_private_methods(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Per module, the private method names that classes of the *other* modules define."""
    defined: dict[str, set[str]] = {}
    for name, tree in trees.items():
        defined[name] = {
            item.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _private(item.name)
        }
    everything = [method for methods in defined.values() for method in methods]
    return {
        name: {m for m in everything if m not in methods or everything.count(m) > 1}
        for name, methods in defined.items()
    }


def _covered() -> dict[str, Path]:
    """Our package's modules and the scripts beside it, by dotted name."""
    found = dict(MODULES)
    for folder in SCRIPTS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found[".".join(path.relative_to(ROOT).with_suffix("").parts)] = path
    return found


def test_no_module_takes_another_librarys_private_names() -> None:
    """One upstream release must not break downloads or training for everyone who installs after it:
    a private name of another library is used only where ``KEPT_PRIVATE`` says, with its reason."""
    covered = _covered()
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in covered.items()}
    ours = _our_private_methods(trees)
    reaching, kept = [], set()
    for name, tree in trees.items():
        for line, used in _upstream_private_uses(tree, ours[name]):
            if (name, used) in KEPT_PRIVATE:
                kept.add((name, used))
            elif used not in DOCUMENTED_DESPITE_THE_UNDERSCORE:
                reaching.append(f"{covered[name].relative_to(ROOT)}:{line} uses {used}")
    assert sorted(reaching) == []
    assert set(KEPT_PRIVATE) - kept == set()  # an entry no longer needed: remove it


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


def _public_face(package: str) -> set[str]:
    """The modules a package of desktop/core lets other packages import: its ``__all__``."""
    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def test_a_core_package_is_used_through_its_public_face() -> None:
    """Other packages (the window, the CLI, core's other rooms) import only the modules a room's
    ``__init__.py`` exports: what a room keeps to itself can change without breaking them."""
    rooms = {name for name in MODULES if name.count(".") == 2 and name.startswith("desktop.core.")}
    rooms = {room for room in rooms if MODULES[room].name == "__init__.py"}
    faces = {room: _public_face(room) for room in rooms}
    assert all(faces.values()), [room for room, face in faces.items() if not face]
    reaching = []
    for name, path in MODULES.items():
        for module, _taken, line in _imports(name, path):
            parts = module.split(".")
            room = ".".join(parts[:3])
            if room not in rooms or len(parts) < 4 or name == room or name.startswith(room + "."):
                continue
            if parts[3] not in faces[room]:
                reaching.append(f"{name}:{line} imports {module}, which {room} does not export")
    assert reaching == []
