"""Run folders on disk: config, append-only events, checkpoints, model and log."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Container, Iterable
from pathlib import Path
from typing import IO, Any

from desktop.core.runs.checkpoints import checkpoint_problem, is_complete, model_problem
from desktop.core.settings.config import RunConfig, load_config
from desktop.core.system.errors import InputError
from desktop.core.system.events import (
    TERMINAL,
    Event,
    FailedEvent,
    FinishedEvent,
    ProgressEvent,
    RunResult,
    StoppedEvent,
    event_from_dict,
)
from desktop.core.system.messages import msg
from desktop.core.system.paths import atomic_write_text
from desktop.core.system.secrets import shell_join

CONFIG_NAME = "config.toml"
EVENTS_NAME = "events.jsonl"
LOG_NAME = "train.log"
LOCK_NAME = "run.lock"
ORIGIN_NAME = "origin.json"
DAMAGED_PREFIX = "damaged-"

STATUS_BY_EVENT = {FinishedEvent: "finished", StoppedEvent: "stopped", FailedEvent: "failed"}


class RunDir:
    """One run's folder.

    Layout: ``config.toml``, ``events.jsonl`` (one event a line, flushed as written),
    ``checkpoints/``, ``model/`` (the final model; a LoRA run's merged), ``adapter/`` (a LoRA run's
    adapters alone) and ``train.log``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._events: IO[str] | None = None
        self._lock: Any = None
        self._summary: Any = None  # a summaries.Writer while this process writes events

    config_path = property(lambda self: self.path / CONFIG_NAME)
    events_path = property(lambda self: self.path / EVENTS_NAME)
    log_path = property(lambda self: self.path / LOG_NAME)
    checkpoints_dir = property(lambda self: self.path / "checkpoints")
    model_dir = property(lambda self: self.path / "model")
    adapter_dir = property(lambda self: self.path / "adapter")  # a LoRA run's adapters alone

    @classmethod
    def create(cls, runs_dir: Path, config: RunConfig, origin: Path | None = None) -> RunDir:
        """Make a new, uniquely named run folder, locked to this process, holding the config.

        Args:
            runs_dir: The runs folder.
            config: The run's config, saved as ``config.toml``.
            origin: The config file the run was started from, so ``--resume`` finds this run again.
        """
        runs_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = f"{stamp}-{slug(config.output.name or default_name(config))}"
        for n in range(1000):
            path = runs_dir / (base if n == 0 else f"{base}-{n}")
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        run = cls(path)
        try:
            run.lock()
            if origin is not None:
                atomic_write_text(run.path / ORIGIN_NAME, json.dumps({"config_file": str(origin)}))
            config.save(run.config_path)
            from desktop.core.runs import summaries

            first = summaries.Summary(created=time.time())
            first.read_config(run.config_path)
            summaries.write(run.path, first)  # listed at once, before the first event
        except BaseException:  # a full disk: no half-made run folder is left to confuse the list
            run.unlock()
            shutil.rmtree(path, ignore_errors=True)
            raise
        return run

    def origin(self) -> str:
        """The config file this run was started from, or ``""`` (the app, or an older version)."""
        try:
            return str(json.loads((self.path / ORIGIN_NAME).read_text(encoding="utf-8"))["config_file"])
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    def is_run(self) -> bool:
        """Whether this folder looks like a run folder."""
        return self.config_path.is_file()

    def config(self) -> RunConfig:
        """The run's config."""
        return load_config(self.config_path)

    def append(self, event: Event) -> None:
        """Append one event and flush it, so a crash loses at most the event being written."""
        if self._events is None:
            torn = _ends_without_newline(self.events_path)  # a crash cut the last line short
            self._events = open(self.events_path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115
            if torn:
                self._events.write("\n")
        self._events.write(event.to_json() + "\n")
        self._events.flush()
        if self._summary is None:
            from desktop.core.runs.summaries import Writer

            self._summary = Writer(self.path, self.events_path, self.config_path)
        else:
            self._summary.add(event, os.fstat(self._events.fileno()).st_size)

    def close(self) -> None:
        """Close the events file (the summary is saved as it stands)."""
        if self._events is not None:
            self._events.close()
            self._events = None
        if self._summary is not None:
            self._summary.save()
            self._summary = None

    def events(self) -> list[Event]:
        """Every event recorded so far; torn or damaged lines are skipped."""
        try:
            raw = self.events_path.read_bytes()
        except OSError:
            return []
        return _parse_events(raw.decode("utf-8", errors="replace").splitlines())

    def lock(self) -> None:
        """Hold the run's OS-level lock until :meth:`unlock`: one process per run folder.

        The operating system drops the lock when the process dies, however it dies, so a crashed
        run never blocks the next one (and a reused process id cannot fake a live one).

        Raises:
            RunBusyError: Another process (or another run in this one) holds the run.
        """
        import filelock

        lock = filelock.FileLock(self.path / LOCK_NAME, timeout=0, thread_local=False)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise RunBusyError.of(self) from None
        self._lock = lock

    def unlock(self) -> None:
        """Release the run's lock."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def is_locked(self) -> bool:
        """Whether some process (this one included) is training this run now."""
        if self._lock is not None:
            return True
        if not (self.path / LOCK_NAME).is_file():
            return False
        import filelock

        probe = filelock.FileLock(self.path / LOCK_NAME, timeout=0, thread_local=False)
        try:
            probe.acquire()
        except filelock.Timeout:
            return True
        except OSError:  # a read-only folder: nobody can be writing to it
            return False
        probe.release()
        return False

    def last_events(self, tail_bytes: int = 65536) -> list[Event]:
        """The events at the end of the log (its last ``tail_bytes``): cheap for runs of any length."""
        if not self.events_path.is_file():
            return []
        with open(self.events_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - tail_bytes))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
        if size > tail_bytes:
            lines = lines[1:]  # the first line is cut
        return _parse_events(lines)

    def status(self) -> str:
        """``finished``, ``stopped``, ``failed``, ``running``, ``interrupted`` (crashed or killed) or
        ``damaged`` (finished, but its final model's files were cut short since: see
        :func:`checkpoints.model_problem`).

        Only the last event counts: a run resumed after a stop that then crashed is interrupted.
        """
        return _status_of(self.last_events(), self)

    def checkpoints(self) -> list[Path]:
        """Saved checkpoint folders, whole or not, oldest first."""
        if not self.checkpoints_dir.is_dir():
            return []
        found = [
            p
            for p in self.checkpoints_dir.glob("checkpoint-*")
            if p.name.split("-")[-1].isdigit() and p.is_dir()
        ]
        return sorted(found, key=lambda p: int(p.name.split("-")[-1]))

    def latest_checkpoint(self) -> Path | None:
        """The newest checkpoint that would load (a damaged newer one is passed over)."""
        return next((p for p in reversed(self.checkpoints()) if is_complete(p)), None)

    def damaged_checkpoints(self) -> list[str]:
        """The checkpoints a resume cannot use, oldest first, each with why when it is known:
        ``checkpoint-8 (model.safetensors is cut short)``; those a resume set aside by their new name."""
        found = [f"{p.name} ({problem})" for p in self.checkpoints() if (problem := checkpoint_problem(p))]
        if self.checkpoints_dir.is_dir():
            found += sorted(p.name for p in self.checkpoints_dir.glob(DAMAGED_PREFIX + "checkpoint-*"))
        return found

    def set_aside_damaged(self) -> list[tuple[str, str]]:
        """Rename checkpoints newer than the newest good one to ``damaged-checkpoint-N``.

        They are kept for a look, but out of the way of the Trainer, which would otherwise resume
        from or rotate them. Returns ``(name, problem)`` for each one moved.
        """
        moved = []
        for path in reversed(self.checkpoints()):
            problem = checkpoint_problem(path)
            if not problem:
                break
            target = path.with_name(DAMAGED_PREFIX + path.name)
            while target.exists():
                target = target.with_name(target.name + "-1")
            path.rename(target)
            moved.append((path.name, problem))
        return moved

    def resumable(self) -> bool:
        """Whether the run ended early and has a checkpoint to continue from."""
        return resumable_status(self.status(), self)


def _parse_events(lines: Iterable[str]) -> list[Event]:
    """Events from JSON lines; a half-written, damaged or foreign line is skipped."""
    out = []
    for line in lines:
        try:
            out.append(event_from_dict(json.loads(line)))
        except Exception:  # any damage (random bytes, wrong types) costs that line only
            continue
    return out


def _ends_without_newline(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:
        return False


class RunBusyError(InputError):
    """Another process is training this run folder."""

    @classmethod
    def of(cls, run: RunDir) -> RunBusyError:
        """The error for ``run``."""
        return cls(
            msg("The run {run} is being trained right now by another process.", run=run.path.name),
            msg("Wait for it to finish or stop it there; a run folder takes one training at a time."),
        )


def resumable_status(status: str, run: RunDir) -> bool:
    """Whether a run that ended with ``status`` can continue: it ended early (or its final model is
    damaged) and has a checkpoint to continue from."""
    return status in ("stopped", "interrupted", "failed", "damaged") and run.latest_checkpoint() is not None


def _status_of(events: list[Event], run: RunDir) -> str:
    if run.is_locked():
        return "running"
    if events and isinstance(events[-1], TERMINAL):
        status = STATUS_BY_EVENT[type(events[-1])]
        # A final model cut short afterwards (a full disk, a copy that stopped) is no finished run.
        return "damaged" if status == "finished" and model_problem(run.model_dir) else status
    return "interrupted"


def _config_readable(run: RunDir) -> bool:
    try:
        run.config()
    except Exception:
        return False
    return True


def run_dirs(runs_dir: Path) -> list[RunDir]:
    """The run folders below ``runs_dir``, newest first."""
    if not runs_dir.is_dir():
        return []
    runs = [
        RunDir(p) for p in sorted(runs_dir.iterdir(), reverse=True) if p.is_dir() and p.suffix != ".partial"
    ]
    return [run for run in runs if run.is_run()]


def newest_crashed(runs_dir: Path, skip: Container[str] = ()) -> tuple[RunDir, int, int] | None:
    """The newest crashed run that can resume (not in ``skip``), with its last step and planned steps.

    Reads only the end of each event log, so it stays quick at start-up however long the runs are.
    """
    for run in run_dirs(runs_dir):
        if str(run.path) in skip or run.latest_checkpoint() is None:
            continue
        tail = run.last_events()
        if _status_of(tail, run) != "interrupted" or not _config_readable(run):
            continue
        progress = [e for e in tail if isinstance(e, ProgressEvent)]
        return (run, progress[-1].step, progress[-1].total_steps) if progress else (run, 0, 0)
    return None


def run_result(run: RunDir) -> RunResult:
    """A finished run as the training returned it: its model folder and final metrics."""
    finished = next((e for e in reversed(run.events()) if isinstance(e, FinishedEvent)), None)
    model = run.model_dir if (run.model_dir / "config.json").is_file() else None
    metrics = dict(finished.metrics) if finished else {}
    status = run.status()  # "damaged": its final model was cut short
    return RunResult(
        "finished" if finished and model and status != "damaged" else status, run.path, model, metrics
    )


def delete_run(run: RunDir) -> None:
    """Delete a run folder for good.

    Raises:
        InputError: The run is still running.
    """
    if run.status() == "running":
        raise InputError(
            msg("{run} is still running.", run=run.path.name), msg("Stop it first, then delete it.")
        )
    shutil.rmtree(run.path)


def import_run(source: Path, runs_dir: Path) -> RunDir:
    """Copy a run folder made elsewhere (a cluster job's ``runs/...``) into ``runs_dir``.

    Its summary is rebuilt from its events here, so Run history lists it with its curves.

    Raises:
        InputError: ``source`` is not a run folder, is being trained, or is in ``runs_dir`` already.
    """
    run = RunDir(source)
    if not run.is_run() or not run.events_path.is_file():
        raise InputError(
            msg("{folder} is not a run folder (it has no config.toml and events.jsonl).", folder=str(source)),
            msg("Choose a folder inside the job's runs folder, named like 20260101-120000-..."),
        )
    if run.is_locked():
        raise RunBusyError.of(run)
    if Path(source).resolve().parent == Path(runs_dir).resolve():
        raise InputError(
            msg("{run} is in the runs folder already.", run=run.path.name),
            msg("It is listed in Run history as it is."),
        )
    Path(runs_dir).mkdir(parents=True, exist_ok=True)
    name = run.path.name
    target = Path(runs_dir) / name
    for n in range(1, 1000):
        if not target.exists():
            break
        target = Path(runs_dir) / f"{name}-imported-{n}"
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        shutil.copytree(
            run.path, partial, ignore=shutil.ignore_patterns(LOCK_NAME, "*.partial", "summary.json")
        )
        os.replace(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # nothing half-copied is listed
        raise
    return RunDir(target)


def find_resumable(runs_dir: Path, config: RunConfig, origin: Path) -> RunDir | None:
    """The newest resumable run that was started from the config file ``origin``.

    Runs of other config files are never picked, however alike. A run whose folder cannot be read
    is passed over.

    Raises:
        RunBusyError: A run of ``origin`` is training in another process now.
        InputError: The newest resumable run of ``origin`` was trained with other settings than
            ``config`` has now (only a longer or shorter schedule may change on resume).
    """
    origin = Path(origin).resolve()
    for run in run_dirs(runs_dir):
        if run.origin() != str(origin):
            continue
        if run.is_locked():  # the same run, resumed in another process right now
            raise RunBusyError.of(run)
        if not run.resumable():
            continue
        try:
            saved = run.config()
        except Exception:
            continue
        changed = _changed_settings(config, saved)
        if changed:
            raise InputError(
                msg(
                    "The last run of {config} ({run}) was trained with other settings ({changed}), so it "
                    "cannot continue with this config.",
                    config=origin.name,
                    run=run.path.name,
                    changed=", ".join(changed),
                ),
                msg(
                    "Resume it as it was with: finetune-studio-cli train {config} --resume, "
                    "or start a new run without --resume.",
                    config=shell_join([str(run.config_path)]),  # pasted into a shell: quoted
                ),
            )
        return run
    return None


def find_run(name: str | Path, runs_dir: Path | None = None) -> RunDir | None:
    """A run folder by its path, or by its name in ``runs_dir`` (the app's runs folder when ``None``):
    how ``serve``, ``export``, ``predict`` and ``evaluate`` find the run they are given."""
    from desktop.core.system.paths import default_runs_dir

    run = RunDir(name)
    if not run.is_run():
        run = RunDir((runs_dir or default_runs_dir()) / name)
    return run if run.is_run() else None


def damaged_run_of(runs_dir: Path, origin: Path) -> RunDir | None:
    """The newest run of the config file ``origin`` that ended early with checkpoints, none of which
    a resume can use (the reason :func:`find_resumable` found none, named to the user)."""
    origin = Path(origin).resolve()
    for run in run_dirs(runs_dir):
        if run.origin() != str(origin) or run.latest_checkpoint() is not None:
            continue
        if run.status() in ("stopped", "interrupted", "failed", "damaged") and run.damaged_checkpoints():
            return run
    return None


RESUME_MAY_CHANGE = {"epochs", "max_steps", "eval_steps", "save_steps", "logging_steps"}
"""Training fields a resumed run may change: how long it goes on and how often it reports."""


def _changed_settings(config: RunConfig, saved: RunConfig) -> list[str]:
    """The fields that differ between a config and a run's saved one, bar schedule and output."""
    changed = [
        f for f in ("task", "model", "data", "validation", "lora") if getattr(config, f) != getattr(saved, f)
    ]
    if not config.columns.mapped().items() <= saved.columns.mapped().items():
        changed.append("columns")
    for name, value in vars(config.training).items():
        if name not in RESUME_MAY_CHANGE and getattr(saved.training, name) != value:
            changed.append(f"training.{name}")
    return changed


def default_name(config: RunConfig) -> str:
    """A run's name when the config gives none: its task and model."""
    return f"{config.task}-{Path(config.model.name.removeprefix('bundled:')).name}"


def slug(text: str) -> str:
    """``text`` as a folder name: letters (any script), digits, ``.`` and ``-``; at most 60 characters."""
    cleaned = re.sub(r"[^\w.-]+", "-", text, flags=re.UNICODE).strip("-.")
    return cleaned[:60] or "run"
