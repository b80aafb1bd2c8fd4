"""Translations: Qt Linguist files for zh_CN and zh_TW, and English's plural forms.

    python tools/i18n.py update    # pyside6-lupdate: every tr() string of the windows and every msg() /
                                   # say() template of core, the CLI and the launcher into resources/i18n;
                                   # a string moved to another class keeps its translation (carry)
    python tools/i18n.py check     # exit 1: a string without translation (new in the code, unfinished),
                                   # one whose source is gone, or placeholders that differ
    python tools/i18n.py release   # pyside6-lrelease: .qm files, for translators who want to try them

The .ts files are the source translators edit (in Qt Linguist or as text) and what the app reads at run
time (desktop/core/system/translations.py): there is no compiled .qm to build, ship or keep in step.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "resources" / "i18n"
LANGUAGES = ("zh_CN", "zh_TW")
PLURALS_ONLY = "en"
"""English needs a file too, holding only the plural forms ("1 row" / "2 rows" for ``%n row(s)``)."""
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?::[^}]*)?\}|%n|%\d")


def ts_path(language: str) -> Path:
    return FOLDER / f"finetune_studio_{language}.ts"


def sources(scratch: Path) -> list[str]:
    """The files whose strings are translated: the windows' tr() calls (desktop/gui, the launcher's
    setup window, the app's start-up), and the ``msg("...")`` / ``say("...")`` templates of core, the
    CLI and the launcher, written into ``scratch`` as translate() calls (context ``core``) so that
    pyside6-lupdate finds them too."""
    windows = [*(ROOT / "desktop" / "gui").rglob("*.py"), *(ROOT / "desktop" / "launcher").rglob("*.py")]
    files = sorted(str(p.relative_to(ROOT)) for p in windows)
    stub = scratch / "core_messages.py"
    lines = ["from PySide6.QtCore import QCoreApplication", ""]
    lines += [f"QCoreApplication.translate('core', {template!r})" for template in core_templates()]
    stub.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [*files, "desktop/app.py", str(stub)]


def core_templates() -> list[str]:
    """Every ``msg("...")`` template in desktop/core and every ``say("...")`` of the CLI, in file order,
    without repeats."""
    import ast

    found: dict[str, None] = {}
    paths = [
        *sorted((ROOT / "desktop" / "core").rglob("*.py")),
        *sorted((ROOT / "desktop" / "cli").rglob("*.py")),
        *sorted((ROOT / "desktop" / "launcher").rglob("*.py")),
        *sorted((ROOT / "desktop" / "gui").rglob("*.py")),  # a message made off the GUI thread
    ]
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name, first = getattr(node.func, "id", ""), node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            if name in ("msg", "Msg", "say", "help_field") and literal:  # a config field's help text
                found[first.value] = None
            elif name in ("msg", "Msg", "say") and getattr(first, "id", "") != "template":
                # (a function that passes its own ``template`` on is where msg() or say() is defined)
                raise SystemExit(f"{path}:{node.lineno}: {name}() needs a literal template string")
    import json  # the recommended models' notes (core/catalogue.py shows them as messages)

    catalogue = json.loads((ROOT / "resources" / "catalogue.json").read_text(encoding="utf-8"))
    for entry in catalogue["models"]:
        if entry.get("note"):
            found[entry["note"]] = None
    return list(found)


def tool(name: str) -> str:
    """``pyside6-lupdate`` or ``pyside6-lrelease`` of this Python's PySide6 (beside it, or on PATH)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} was not found: install PySide6-Essentials in this Python.")
    return found


def lupdate(target: Path, keep_obsolete: bool = False, plurals_only: bool = False) -> None:
    """Bring ``target`` up to date with the strings in the code (pyside6-lupdate)."""
    options = ([] if keep_obsolete else ["-no-obsolete"]) + (["-pluralonly"] if plurals_only else [])
    with tempfile.TemporaryDirectory() as scratch:
        files = sources(Path(scratch))
        command = [tool("pyside6-lupdate"), *files, *options, "-locations", "none", "-silent"]
        subprocess.run([*command, "-ts", str(target)], cwd=ROOT, check=True)


def update() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for language in LANGUAGES:
        carry(ts_path(language))
        lupdate(ts_path(language))
    carry(ts_path(PLURALS_ONLY), plurals_only=True)
    lupdate(ts_path(PLURALS_ONLY), plurals_only=True)


def carry(target: Path, plurals_only: bool = False) -> list[str]:
    """Keep the translations of strings that moved to another class (another context): where the code
    has a string that ``target`` lacks in its new context, and the same source (and comment) left one
    other context with one translation, that translation goes to the new context. The strings carried
    are printed and returned; the caller's lupdate then drops the entries they left."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / target.name
        shutil.copy(target, copy)
        lupdate(copy, keep_obsolete=True, plurals_only=plurals_only)
        tree = ET.parse(copy)
        left: dict[tuple[str, str], list[ET.Element]] = {}  # (source, comment): translations gone
        new: list[tuple[str, ET.Element]] = []  # (context, message) without a translation
        for context in tree.getroot().iter("context"):
            for message in context.iter("message"):
                translation = message.find("translation")
                kind = translation.get("type", "") if translation is not None else "unfinished"
                key = (message.findtext("source") or "", message.findtext("comment") or "")
                if kind in ("obsolete", "vanished") and "".join(translation.itertext()).strip():
                    left.setdefault(key, []).append(translation)
                elif kind == "unfinished":
                    new.append((context.findtext("name") or "", message))
        carried = []
        for name, message in new:
            key = (message.findtext("source") or "", message.findtext("comment") or "")
            found = {ET.tostring(t, encoding="unicode"): t for t in left.get(key, [])}
            if len(found) != 1:  # none, or moved from several classes with different words: a translator's
                continue
            old = message.find("translation")
            if old is not None:
                message.remove(old)
            moved = copy_element(next(iter(found.values())))
            moved.attrib.pop("type", None)
            message.append(moved)
            carried.append(f"{target.name}: [{name}] {key[0][:60]!r}")
        if carried:
            tree.write(target, encoding="utf-8", xml_declaration=True)
    for line in carried:
        print("carried", line)
    return carried


def copy_element(element: ET.Element) -> ET.Element:
    """A deep copy of ``element`` (its text, attributes and children)."""
    return ET.fromstring(ET.tostring(element, encoding="unicode"))


def problems(path: Path) -> list[str]:
    """What keeps a .ts file from being complete: unfinished or obsolete entries, placeholders that
    differ from the source's, and plural forms left empty."""
    found = []
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            source = message.findtext("source") or ""
            translation = message.find("translation")
            where = f"{path.name}: [{name}] {source[:60]!r}"
            kind = translation.get("type", "") if translation is not None else "unfinished"
            if kind in ("unfinished", "obsolete", "vanished"):
                found.append(f"{where}: {kind}")
                continue
            forms = [f.text or "" for f in translation.iter("numerusform")] or [translation.text or ""]
            for text in forms:
                if not text.strip():
                    found.append(f"{where}: empty translation")
                elif set(PLACEHOLDER.findall(text)) != set(PLACEHOLDER.findall(source)):
                    found.append(
                        f"{where}: placeholders {PLACEHOLDER.findall(text)} differ from the source's"
                    )
    return found


def check() -> int:
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for language in (*LANGUAGES, PLURALS_ONLY):
            # A copy brought up to date with the code: a new string shows as unfinished, one that is
            # gone from the code as obsolete ("vanished"), so a stale file fails like an incomplete one.
            copy = Path(scratch) / ts_path(language).name
            shutil.copy(ts_path(language), copy)
            lupdate(copy, keep_obsolete=True, plurals_only=language == PLURALS_ONLY)
            found += problems(copy)
    for line in found:
        print(line)
    total = sum(
        len(list(ET.parse(ts_path(lang)).getroot().iter("message"))) for lang in (*LANGUAGES, PLURALS_ONLY)
    )
    print(f"{len(found)} problem(s) in {total} translations.")
    return 1 if found else 0


def release() -> None:
    for language in LANGUAGES:
        subprocess.run([tool("pyside6-lrelease"), str(ts_path(language))], cwd=ROOT, check=True)


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "update":
        update()
    elif command == "release":
        release()
    else:
        raise SystemExit(check())
