"""Checkpoint folders: which ones would load, checked cheaply from their files' structure."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

from desktop.core.system.readahead import WEIGHT_SUFFIXES


def checkpoint_problem(folder: Path) -> str:
    """Why ``folder`` cannot be resumed from, or ``""`` when every file in it looks whole.

    Reads file headers and zip directories, never the tensors: cheap enough to run on every
    checkpoint at start-up. Catches what crashes and full disks leave: a missing or torn
    ``trainer_state.json``, truncated safetensors, and torn ``optimizer.pt`` / ``scheduler.pt``.
    """
    state = folder / "trainer_state.json"
    try:
        step = json.loads(state.read_text(encoding="utf-8")).get("global_step")
    except (OSError, ValueError, AttributeError):
        return f"{state.name} is missing or unreadable"
    if not isinstance(step, int):
        return f"{state.name} has no step number"
    weights = 0
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix not in WEIGHT_SUFFIXES:
            continue
        problem = _safetensors_problem(path) if path.suffix == ".safetensors" else _torch_file_problem(path)
        if problem:
            return f"{path.name} {problem}"
        weights += path.name.startswith(("model", "adapter_model", "pytorch_model"))
    if not weights:
        return "it holds no model weights"
    return ""


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` is a checkpoint that a run can resume from."""
    return not checkpoint_problem(folder)


def model_problem(folder: Path) -> str:
    """Why the saved model in ``folder`` cannot be loaded, from its weight files' headers (a save cut
    short by a full disk or a crash), or ``""``: also for a folder that is not there (nothing to say).
    As cheap as :func:`checkpoint_problem`, so a run list checks every finished run."""
    if not folder.is_dir():
        return ""
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix not in WEIGHT_SUFFIXES:
            continue
        problem = _safetensors_problem(path) if path.suffix == ".safetensors" else _torch_file_problem(path)
        if problem:
            return f"{path.name} {problem}"
    return ""


def _safetensors_problem(path: Path) -> str:
    # 8 bytes of header length, a JSON header, then the tensors; the last tensor ends at the file's end.
    try:
        with open(path, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
        end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
        if path.stat().st_size < 8 + size + end:
            return "is cut short"
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error):
        return "is damaged"
    return ""


def _torch_file_problem(path: Path) -> str:
    # torch.save writes a zip archive; a torn or overwritten one has no readable central directory,
    # or members that run past the end of the file.
    try:
        size = path.stat().st_size
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.header_offset + info.compress_size > size:
                    return "is cut short"
    except (OSError, zipfile.BadZipFile, ValueError):
        return "is damaged"
    return ""


def weights_problem(folder: Path) -> str:
    """Why the model weights in checkpoint ``folder`` cannot be trusted, or ``""``: a tensor that cannot
    be read, or one holding NaN or infinity (a diverged run saved it, or bytes were damaged where the
    file's structure still looks whole).

    Reads every tensor of the model's safetensors files once, one at a time (the memory of the largest
    tensor, not the model's): a resume reads those bytes anyway (``read_ahead`` warms them first), so
    this adds a pass over memory to a resume, about a second per GB on a laptop CPU. Optimizer states
    are not read: PyTorch reads them itself, and a failure there sets the checkpoint aside too.
    """
    import torch
    from safetensors import safe_open

    for path in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(path), framework="pt") as weights:
                for name in weights.keys():  # noqa: SIM118 - safe_open is no dict: keys() is its API
                    tensor = weights.get_tensor(name)
                    if torch.is_floating_point(tensor) and not bool(torch.isfinite(tensor).all()):
                        return f"{path.name}: tensor {name} holds values that are not numbers (NaN or inf)"
        except Exception as exc:  # safetensors raises its own error types for damaged data
            return f"{path.name} cannot be read ({(str(exc).splitlines() or [type(exc).__name__])[0]})"
    return ""
