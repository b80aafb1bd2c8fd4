"""Publishing a finished run to a model hub: which files go (the exported folder, the GGUF file with its
Modelfile and card, or the LoRA adapters alone), the commit's words, and, for a run published straight
from its folder, the export that makes them first.

The upload itself (token, repository, progress, Cancel, resume) is ``desktop.core.hub.uploads``.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.hub.downloads import Progress
from desktop.core.hub.pushed import Pushed
from desktop.core.hub.sources import Source
from desktop.core.hub.uploads import push_files, who_may_write
from desktop.core.results.destination import MARKER_NAME, remove_ours, write_marker
from desktop.core.runs.folders import RunDir
from desktop.core.system.errors import InputError, ModelError
from desktop.core.system.messages import Msg, msg

FORMATS = ("folder", "gguf", "adapter")
"""``folder``: the model folder (LoRA merged); ``gguf``: the GGUF file, its Modelfile and card;
``adapter``: the LoRA adapters alone."""

OnProgress = Callable[[Msg, float, Progress | None], None]
"""Told what is happening (in words), the share of that step done, and the upload's figures."""

STEPS = {
    "check": msg("Reading the files to publish"),
    "send": msg("Uploading"),
    "commit": msg("Making the commit"),
}


@dataclass(frozen=True)
class Parcel:
    """What a push sends: the files by their names in the repository, and the commit's words."""

    files: dict[str, Path]
    message: str
    description: str


def folder_files(folder: Path) -> dict[str, Path]:
    """Every file of an exported folder but the app's own hidden ones (the export's marker)."""
    found = {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }
    if not found:
        raise InputError(msg("{folder} holds no files to publish.", folder=str(folder)))
    return found


def gguf_files(gguf: Path, unverified: bool = False) -> dict[str, Path]:
    """A GGUF file with the Modelfile and card the export wrote beside it (one llama.cpp did not
    verify only when ``unverified`` says the user chose so)."""
    from desktop.core.results.gguf_export import CARD_NAME, UNVERIFIED

    if UNVERIFIED in gguf.stem and not unverified:
        raise InputError(
            msg("{file} was not verified: llama.cpp's answers differed from the model's.", file=gguf.name),
            msg("Publish the model folder instead, or export the GGUF again once the check passes."),
        )
    files = {gguf.name: gguf}
    for name in ("Modelfile", CARD_NAME):
        if (gguf.parent / name).is_file():
            files[name] = gguf.parent / name
    return files


def parcel(run: RunDir | None, files: dict[str, Path], fmt: str) -> Parcel:
    """The commit's message and description for ``run`` (or an exported folder whose run is unknown)."""
    name = run.path.name if run is not None else next(iter(files.values())).parent.name
    what = {"folder": "model", "gguf": "GGUF model", "adapter": "LoRA adapters"}[fmt]
    lines = [f"Fine-tuned with Finetune Studio ({len(files)} files)."]
    if run is not None:
        config = run.config()
        data = config.data.hub_id or ", ".join(Path(f).name for f in config.data.files)
        lines = [
            f"Fine-tuned with Finetune Studio from {config.model.name} for {config.task} on {data}.",
            f"Run: {name}; {len(files)} files.",
        ]
    return Parcel(files, f"Upload {name} ({what}) from Finetune Studio", "\n".join(lines))


def exported_parcel(folder: Path, fmt: str) -> Parcel:
    """What to publish from an export the user already has (``folder``: the folder, or the GGUF file)."""
    run = _run_of(folder if folder.is_dir() else folder.parent)
    if fmt == "gguf":
        return parcel(run, gguf_files(folder), fmt)
    if fmt == "adapter" and not (folder / "adapter_config.json").is_file():
        raise InputError(
            msg("{folder} holds no LoRA adapters.", folder=str(folder)),
            msg(
                "Export the run with its adapters alone (command line: export --adapter), "
                "or publish the folder."
            ),
        )
    return parcel(run, folder_files(folder), fmt)


def is_export(folder: Path) -> bool:
    """Whether ``folder`` is one an export of this app wrote."""
    return (folder / MARKER_NAME).is_file()


def summary(pushed: Pushed) -> Msg:
    """What a push did, in one sentence: files, bytes sent, what the hub held already, visibility."""
    from desktop.core.system.errors import human_size

    values = {"files": pushed.files, "sent": human_size(pushed.sent)}
    if pushed.kept:
        return msg(
            "{files} files in one commit, {sent} sent; {kept} of them ({kept_size}) were on the hub "
            "already and were not sent again.",
            kept=pushed.kept,
            kept_size=human_size(pushed.kept_bytes),
            **values,
        )
    if pushed.private is None:
        return msg("{files} files in one commit, {sent} sent.", **values)
    if pushed.private:
        return msg("{files} files in one commit, {sent} sent. The repository is private.", **values)
    return msg("{files} files in one commit, {sent} sent. The repository is public.", **values)


def _run_of(folder: Path) -> RunDir | None:
    """The run an exported folder came from, by its marker (``None`` when unknown or gone)."""
    import json

    try:
        record = json.loads((folder / MARKER_NAME).read_text(encoding="utf-8"))
        run = RunDir(Path(record["run"]))
        run.config()
    except (OSError, ValueError, KeyError, TypeError, InputError):
        return None
    return run


def publish(
    source: Source,
    repo_id: str,
    package: Parcel,
    private: bool = True,
    replace: bool = False,
    on_progress: OnProgress | None = None,
    cancel: threading.Event | None = None,
) -> Pushed:
    """Upload ``package`` to ``repo_id`` (see :func:`desktop.core.hub.uploads.push_files`)."""

    def told(stage: str, progress: Progress) -> None:
        if on_progress is not None:
            on_progress(STEPS[stage], progress.fraction, progress)

    return push_files(
        source,
        repo_id,
        package.files,
        package.message,
        package.description,
        private=private,
        replace=replace,
        on_progress=told,
        cancel=cancel,
    )


def publish_run(
    run: RunDir,
    repo_id: str,
    source: Source,
    fmt: str = "folder",
    private: bool = True,
    replace: bool = False,
    dtype: str = "fp32",
    quant: str = "f16",
    verify: bool = True,
    on_progress: OnProgress | None = None,
    cancel: threading.Event | None = None,
    language: str = "en",
) -> Pushed:
    """Export ``run`` in ``fmt`` to a temporary folder, publish it, and remove the folder.

    The token is checked before the export starts, so a missing or read-only one costs no time. An
    export is the same bytes each time, so a push that stops is resumed by the next one: the large files
    the hub received are not sent again.

    Raises:
        InputError: An unknown format, a run that cannot be exported so, or a push refused before it
            began (see :func:`desktop.core.hub.uploads.push_files`).
    """
    if fmt not in FORMATS:
        raise InputError(msg("Unknown format {fmt}; use folder, gguf or adapter.", fmt=fmt))
    who_may_write(source)
    work = Path(tempfile.mkdtemp(prefix="finetune-studio-publish-"))
    write_marker(work, run)  # the export's marker, from the start: the folder is known to be ours
    try:
        package = _export(run, work / run.path.name, fmt, dtype, quant, verify, on_progress, cancel, language)
        return publish(source, repo_id, package, private, replace, on_progress, cancel)
    finally:
        remove_ours(work)  # only what this push made (it carries the marker) goes


def _export(
    run: RunDir,
    dest: Path,
    fmt: str,
    dtype: str,
    quant: str,
    verify: bool,
    on_progress: OnProgress | None,
    cancel: threading.Event | None,
    language: str,
) -> Parcel:
    def stage(words: Any, fraction: float) -> None:
        if on_progress is not None:
            on_progress(words, fraction, None)

    if fmt == "gguf":
        from desktop.core.results.gguf_export import export_run_gguf

        words = {
            "gguf": msg("Writing GGUF tensors"),
            "quantize": msg("Quantizing with llama.cpp"),
            "check": msg("Checking the file with llama.cpp"),
        }
        made = export_run_gguf(
            run,
            dest,
            quant,
            lambda key, fraction: stage(words.get(key, msg("Exporting")), fraction),
            cancelled=(cancel.is_set if cancel is not None else None),
            verify=verify,
        )
        return parcel(run, gguf_files(made.path, unverified=not verify), fmt)
    from desktop.core.results.export import STAGES, export_run

    result = export_run(
        run,
        dest,
        dtype=dtype,
        lora="adapter" if fmt == "adapter" else "merged",
        verify=verify,
        on_progress=lambda key, fraction: stage(STAGES[key], fraction),
        cancel=cancel,
        language=language,
    )
    check = result.verification
    if check is not None and not check.ok:
        raise ModelError(
            msg(
                "The exported folder does not reproduce the run's outputs (largest difference {diff}); "
                "nothing was published.",
                diff=f"{check.max_abs_diff:.3g}",
            ),
            msg("Export it from the Export step to see the details."),
        )
    return parcel(run, folder_files(dest), fmt)
