"""Ollama, when the user has it: is it installed, is it running, and ``ollama create`` with progress.

Ollama is a program of its own (ollama.com), with a server on ``127.0.0.1:11434`` (``OLLAMA_HOST``
moves it). *Add to Ollama* runs ``ollama create NAME -f Modelfile`` in the GGUF's folder: Ollama
copies the file into its own store, so the export folder stays the user's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.system import processes
from desktop.core.system.errors import ModelError
from desktop.core.system.messages import Msg, msg

DOWNLOAD_URL = "https://ollama.com/download"
DEFAULT_HOST = "127.0.0.1:11434"


@dataclass(frozen=True)
class OllamaState:
    """Where Ollama stands: its program (``None`` when not installed) and whether its server answers."""

    binary: str | None
    running: bool
    version: str = ""

    def advice(self) -> Msg | str:
        """What the user should do before *Add to Ollama* can work ("" when it can)."""
        if self.binary is None:
            return msg("Ollama is not installed: get it from {url}, then check again.", url=DOWNLOAD_URL)
        if not self.running:
            return msg("Ollama is installed but not running: open the Ollama app (or run: ollama serve).")
        return ""


def find_binary() -> str | None:
    """The ``ollama`` program: on the PATH, or where Ollama's Windows installer puts it."""
    found = shutil.which("ollama")
    if found:
        return found
    if sys.platform == "win32":
        local = Path(os.environ.get("LOCALAPPDATA", "")) / "Programs" / "Ollama" / "ollama.exe"
        if local.is_file():
            return str(local)
    return None


def host() -> str:
    """The Ollama server's address as ``http://host:port`` (``OLLAMA_HOST``, else the default)."""
    value = os.environ.get("OLLAMA_HOST", "").strip() or DEFAULT_HOST
    if "://" not in value:
        value = "http://" + value
    return value.replace("://0.0.0.0", "://127.0.0.1").rstrip("/")


def state(timeout_s: float = 1.0) -> OllamaState:
    """Whether Ollama is installed and its server answers (``/api/version``), within ``timeout_s``."""
    import json
    import urllib.request

    binary = find_binary()
    # Ollama is on this machine: no HTTP_PROXY in between, which would answer for it or refuse.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(host() + "/api/version", timeout=timeout_s) as answer:
            version = str(json.loads(answer.read().decode("utf-8")).get("version", ""))
        return OllamaState(binary, True, version)
    except (OSError, ValueError):
        return OllamaState(binary, False)


PERCENT = re.compile(r"(\d{1,3})%")


def create(
    name: str,
    modelfile: Path,
    on_progress: Callable[[str, float], None] | None = None,
    cancel: threading.Event | None = None,
    quantize: str = "",
) -> str:
    """``ollama create NAME -f Modelfile`` in the Modelfile's folder; returns the ``ollama run`` line.

    Args:
        quantize: Have Ollama quantize an f16 file as it takes it (``q4_K_M``, ``q8_0``): the K-quants
            without llama.cpp, for users who have Ollama.
        on_progress: Each line Ollama prints, with the share it says is done (0 to 1).
        cancel: Set it to stop Ollama.

    Raises:
        ModelError: Ollama is missing or refused the model (its last line is the message).
    """
    binary = find_binary()
    if binary is None:
        raise ModelError(msg("Ollama is not installed."), msg("Get it from {url}.", url=DOWNLOAD_URL))
    child = processes.popen(
        [binary, "create", name, *(["--quantize", quantize] if quantize else []), "-f", str(modelfile)],
        cwd=str(modelfile.parent),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
    )
    ended, stopped = processes.kill_when(child, cancel.is_set if cancel is not None else None)
    lines: list[str] = []
    done = 0.0
    try:
        assert child.stdout is not None
        for raw in child.stdout:
            for line in re.split(r"[\r\n]+", raw):
                line = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line).strip()  # Ollama's spinner and colours
                if not line:
                    continue
                lines.append(line)
                found = PERCENT.search(line)
                if found:
                    done = max(done, min(int(found.group(1)), 100) / 100)
                if on_progress is not None:
                    on_progress(line, done)
        code = child.wait()
    except BaseException:
        processes.kill_tree(child.pid)  # never left running behind a failure here
        raise
    finally:
        ended.set()
    if stopped.is_set():
        raise ModelError(msg("Adding the model to Ollama was cancelled."), msg("Add it again when you like."))
    if code != 0:
        raise ModelError(
            msg(
                "Ollama did not take the model: {error}",
                error=lines[-1] if lines else msg("exit code {code}", code=code),
            ),
            msg("Check that Ollama is running and up to date, then try again."),
        )
    return f"ollama run {name}"
