"""Refresh or check the lock of what we ship: ``python tools/lock.py [--upgrade | --check]``.

``requirements-lock.txt`` pins every library the app, its tests, its build and its lint tools use,
for every platform and Python we support (Windows x64 and Linux x64; Python 3.12 in the runtime,
3.11+ from the source), as one universal resolution by ``uv pip compile``. It is used as
*constraints*, never as a list of what to install: the launcher installs the app wheel with it (first
start, repair, update), and ``tools/dev.py`` and ``.ci/run`` install the checkout with it, so CI tests
the versions users get.

PyTorch and what only PyTorch needs (its CUDA libraries, triton, sympy, networkx) are left out: the
Environment doctor chooses the build per GPU and driver, from PyTorch's own index, and that build
brings its own pins. A set computed from the resolution, not a list kept by hand.

Why uv's ``pip compile`` and not ``uv lock`` or pip-tools: it writes a plain requirements file that pip
(CI, ``tools/dev.py``) and ``uv pip`` (the launcher) both read as constraints, with markers for the
platforms; ``uv lock`` writes uv's own format, which pip cannot read; pip-tools resolves for one
platform at a time. uv is already a dependency (the launcher ships it).

``--check`` (offline; also a test) fails when ``pyproject.toml``'s requirements changed since the lock
was made, or a pinned version no longer meets one of them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements-lock.txt"
PYPROJECT = ROOT / "pyproject.toml"
DIGEST_LINE = "# pyproject-requirements-sha256: "
VIA = re.compile(r"^\s*#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)")
"""uv's annotation of why a package is there: ``# via torch``, or ``#   trl`` in a list."""
LEFT_TO_THE_DOCTOR = "torch"
"""The package whose build the Environment doctor chooses; it and what only it needs stay out."""


def requirements_digest(pyproject: Path = PYPROJECT) -> str:
    """A digest of what the lock is made from: the requirements, the extras and the Python range."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    made_from = {
        "requires-python": project.get("requires-python", ""),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    return hashlib.sha256(json.dumps(made_from, sort_keys=True).encode()).hexdigest()


def pinned(text: str) -> list[tuple[str, str, str]]:
    """The lock's pins as (normalised name, version, marker) tuples."""
    pins = []
    for line in text.splitlines():
        found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)\s*(?:;\s*(.+))?$", line.strip())
        if found:
            pins.append((normalise(found.group(1)), found.group(2), (found.group(3) or "").strip()))
    return pins


def normalise(name: str) -> str:
    """A project name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def only_through(text: str, root: str) -> set[str]:
    """The packages that the resolution ``text`` (uv's annotated output) needs only because of ``root``.

    A package goes with ``root`` when every package it is there for (its ``# via`` lines) does.
    """
    via: dict[str, set[str]] = {}
    current = ""
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            current = normalise(re.split(r"[=;\s]", line, maxsplit=1)[0])
            via.setdefault(current, set())
        elif current and (found := VIA.match(line)) and found.group(1) != "via":  # "# via" opens a list
            via[current].add(normalise(found.group(1)))
    gone = {normalise(root)}
    while True:
        more = {name for name, parents in via.items() if name not in gone and parents and parents <= gone}
        if not more:
            return gone
        gone |= more


def compile_lock(upgrade: bool) -> str:
    """Resolve the lock with uv; the previous lock's versions are kept where they still fit."""
    from uv import find_uv_bin

    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "lock.txt"

        def resolve(*extra: str) -> str:
            if LOCK.exists() and not upgrade:
                out.write_text(LOCK.read_text(encoding="utf-8"), encoding="utf-8")  # preferences
            elif out.exists():
                out.unlink()
            command = [
                find_uv_bin(), "pip", "compile", str(PYPROJECT), "--universal", "--all-extras",
                "--quiet", "--custom-compile-command", "python tools/lock.py", "--output-file", str(out),
                *(["--upgrade"] if upgrade else []), *extra,
            ]  # fmt: skip
            subprocess.run(command, check=True, cwd=ROOT)
            return out.read_text(encoding="utf-8")

        whole = resolve()
        left_out = sorted(only_through(whole, LEFT_TO_THE_DOCTOR))
        text = resolve(*[arg for name in left_out for arg in ("--no-emit-package", name)])
    note = (
        f"{DIGEST_LINE}{requirements_digest()}\n"
        f"# Left to the Environment doctor (its choice per GPU brings their pins): {', '.join(left_out)}\n"
    )
    return note + text


def problems(lock: Path = LOCK, pyproject: Path = PYPROJECT) -> list[str]:
    """Why the lock does not fit ``pyproject.toml`` (an empty list when it does)."""
    from packaging.requirements import Requirement

    if not lock.is_file():
        return [f"{lock.name} is missing: run `python tools/lock.py`"]
    text = lock.read_text(encoding="utf-8")
    found = re.search(re.escape(DIGEST_LINE) + r"([0-9a-f]{64})", text)
    said = []
    if found is None or found.group(1) != requirements_digest(pyproject):
        said.append(
            "pyproject.toml's requirements changed since the lock was made: run `python tools/lock.py` "
            "and commit requirements-lock.txt"
        )
    versions: dict[str, list[str]] = {}
    for name, version, _marker in pinned(text):
        versions.setdefault(name, []).append(version)
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    wanted = [
        *project["dependencies"],
        *(r for reqs in project["optional-dependencies"].values() for r in reqs),
    ]
    for line in wanted:
        requirement = Requirement(line)
        name = normalise(requirement.name)
        if name == LEFT_TO_THE_DOCTOR:
            continue
        if name not in versions:
            said.append(f"{requirement.name} is required by pyproject.toml but not in the lock")
            continue
        for version in versions[name]:
            if not requirement.specifier.contains(version, prereleases=True):
                said.append(
                    f"the lock pins {requirement.name}=={version}, pyproject.toml asks for {requirement}"
                )
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upgrade", action="store_true", help="take the newest versions that fit")
    parser.add_argument("--check", action="store_true", help="only check the lock against pyproject.toml")
    args = parser.parse_args(argv)
    if args.check:
        said = problems()
        for line in said:
            print(f"lock: {line}", file=sys.stderr)
        return 1 if said else 0
    text = compile_lock(args.upgrade)
    LOCK.write_text(text, encoding="utf-8")
    print(f"{LOCK.name}: {len(pinned(text))} pins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
