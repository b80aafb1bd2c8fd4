"""The runtime folder: its venv, the marker of a complete setup, the steps of an unfinished one, what it
has installed (read from its ``.dist-info`` folders) and the PyTorch wheel kept until the app starts."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop.launcher.bundle import Bundle

WINDOWS = sys.platform == "win32"
MARKER = "finetune-studio-runtime.json"
KEEP_TORCH = "keep-torch.txt"
"""An update's constraints file: the PyTorch build installed, which the update must not change."""
PROGRESS = "finetune-studio-setup-steps.json"
"""The steps of an unfinished setup that are done (the venv, PyTorch): the next start goes on from there."""
RESUMABLE = ("python", "torch", "companions")


@dataclass
class Marker:
    """The runtime's record of what it holds; written only when the setup completed."""

    app_version: str
    wheel_sha256: str
    torch: str
    python: str
    created: float = field(default_factory=time.time)
    torch_index: str = ""
    """The index the PyTorch build came from: a repair or an update that needs a newer PyTorch stays
    with it (same CUDA flavour, same mirror)."""


class Runtime:
    """The runtime folder: a venv plus the marker."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def python(self) -> Path:
        """The runtime's interpreter (with a console on Windows)."""
        return self.root / ("Scripts/python.exe" if WINDOWS else "bin/python")

    @property
    def pythonw(self) -> Path:
        """The interpreter that starts the app: without a console window on Windows."""
        return self.root / ("Scripts/pythonw.exe" if WINDOWS else "bin/python")

    @property
    def marker_path(self) -> Path:
        return self.root / MARKER

    def marker(self) -> Marker | None:
        """What a complete setup recorded; ``None`` when there is none or it cannot be read."""
        try:
            return Marker(**json.loads(self.marker_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def state(self, bundle: Bundle) -> str:
        """``missing``, ``incomplete`` (a setup that did not finish), ``outdated`` or ``ready``."""
        if not self.root.exists():
            return "missing"
        marker = self.marker()
        if marker is None or not self.python.exists():
            return "incomplete"
        if (marker.app_version, marker.wheel_sha256) != (bundle.version, bundle.digest()):
            return "outdated"
        return "ready"

    def write_marker(self, marker: Marker) -> None:
        tmp = self.marker_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(marker), indent=2), encoding="utf-8")
        os.replace(tmp, self.marker_path)

    def clear_marker(self) -> None:
        self.marker_path.unlink(missing_ok=True)

    @property
    def progress_path(self) -> Path:
        return self.root / PROGRESS

    def steps_done(self, torch: str) -> set[str]:
        """The steps of an unfinished setup for PyTorch ``torch`` that are done and still hold: the
        venv and PyTorch, which the next start keeps instead of making and downloading again."""
        try:
            progress = json.loads(self.progress_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        if not isinstance(progress, dict) or progress.get("torch") != torch or not self.python.exists():
            return set()
        done = set(progress.get("done", [])) & set(RESUMABLE)
        if "torch" in done and requirement_of(self.installed("torch")) != torch.split("+")[0]:
            done -= {"torch", "companions"}  # the venv lost it: install it again (from the kept wheel)
        return done

    def record_step(self, torch: str, key: str, index: str = "") -> None:
        """Note that step ``key`` of the setup for ``torch`` (from ``index``) finished."""
        done = sorted(self.steps_done(torch) | {key}) if key != "python" else ["python"]
        tmp = self.progress_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"torch": torch, "index": index, "done": done}), encoding="utf-8")
        os.replace(tmp, self.progress_path)

    def forget_steps(self) -> None:
        self.progress_path.unlink(missing_ok=True)

    def site_packages(self) -> Path | None:
        """The venv's site-packages folder, if there is one."""
        found = sorted(self.root.glob("Lib/site-packages" if WINDOWS else "lib/python3*/site-packages"))
        return found[-1] if found else None

    def installed(self, name: str) -> str:
        """The version of package ``name`` installed in the runtime (``2.14.1+cu130``), or ``""``.

        Read from its ``.dist-info`` folder: no process, no import of PyTorch.
        """
        site = self.site_packages()
        if site is None:
            return ""
        wanted = re.sub(r"[-_.]+", "-", name).lower()
        for info in site.glob("*.dist-info"):
            if re.sub(r"[-_.]+", "-", info.name.split("-")[0]).lower() != wanted:
                continue
            try:
                metadata = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = dict(line.split(": ", 1) for line in metadata.splitlines()[:20] if ": " in line)
            if re.sub(r"[-_.]+", "-", lines.get("Name", "")).lower() == wanted:
                return lines.get("Version", "").strip()
        return ""

    @property
    def downloads(self) -> Path:
        """Where the PyTorch wheel is kept from its download until the app has started once."""
        return self.root.parent / "downloads"

    def release_downloads(self) -> None:
        """Delete the PyTorch wheels the setup downloaded (``wheel_download.py``'s files, nothing
        else): the app started from this runtime, so they are not needed to finish it any more."""
        for kept in self.downloads.glob("torch-*.whl"):
            kept.unlink(missing_ok=True)


def requirement_of(version: str) -> str:
    """``torch==VERSION`` without the build's local tag; ``""`` for no version."""
    return f"torch=={version.split('+')[0]}" if version else ""
