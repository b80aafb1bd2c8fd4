"""One path for a run: the window's Start and ``finetune-studio-cli train`` both hand a request here.

A :class:`RunSession` validates the config once, finds the run to continue, fetches what is not on
this computer yet (its own step, before "Preparing"), keeps the computer awake, runs the Trainer in
this process or in a child process, and takes Stop then a hard stop. It reports only through the
typed events of :mod:`desktop.core.system.events` and returns the run's :class:`RunResult`. The front
ends parse, show and print: the window's ``TrainingController`` keeps its thread and its signals,
``train_command`` its progress bar and its exit codes.

Input the run cannot start with (an invalid config, no run to resume) raises before anything is
written, as :class:`~desktop.core.system.errors.InputError` subclasses; a run that starts and fails
ends as a failed result, never as an exception.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core.runs.folders import RunBusyError, RunDir, damaged_run_of, find_resumable
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import ConfigError, InputError
from desktop.core.system.events import (
    AwakeEvent,
    DownloadEvent,
    Event,
    FailedEvent,
    PreparingEvent,
    RunResult,
    StoppedEvent,
)
from desktop.core.system.messages import msg

WAIT_S = 0.2
"""How long the calling thread waits at a time for a child run or a download: short, so Ctrl-C
reaches a terminal's main thread between waits."""


@dataclass
class RunRequest:
    """What the user asked for.

    Attributes:
        config: The run config (validated by the session, once).
        resume: The run to continue, already chosen (the window's Resume).
        resume_latest: Continue the latest stopped run of ``origin`` (``train --resume``): the run
            whose own ``config.toml`` ``origin`` is, else the newest resumable run started from it.
        origin: The config file the run comes from, as the user wrote it (``None``: the window's runs).
        accept_new_data: Go on although the data changed since the run started (``--new-data``).
        keep_awake: Keep the computer from sleeping while the run goes on.
        fetch_missing: Download a hub model or dataset that is not on this computer yet, first.
        lower_priority: Put the run's compute threads below the caller's (the window's thread stays
            responsive on a CPU; decision 003).
    """

    config: RunConfig
    resume: RunDir | None = None
    resume_latest: bool = False
    origin: Path | None = None
    accept_new_data: bool = False
    keep_awake: bool = True
    fetch_missing: bool = True
    lower_priority: bool = False


class RunSession:
    """One run, start to end, for any front end: :meth:`run` blocks until it has ended.

    :meth:`stop` and :meth:`stop_now` may be called from any thread.
    """

    def __init__(self, request: RunRequest, on_event: Callable[[Event], None]) -> None:
        self.request = request
        self.on_event = on_event
        self.stage = ""
        """``download``, ``train`` or ``""`` (before either): what a stop request stops."""
        self.stopped_in_download = False
        """Whether the run ended because a stop came while a model or dataset was downloading."""
        self.resume: RunDir | None = request.resume
        self.awake = None  # the KeepAwake held during the run
        self._stop = threading.Event()
        self._hard_stop = threading.Event()
        self._prepared = False

    @property
    def in_child(self) -> bool:
        """Whether the run goes in a child process (so a second stop can end it at once)."""
        return self.request.config.launch.child

    def stop(self) -> None:
        """Stop after the current step, keeping a checkpoint (a download: stop it, resumably). A second
        call ends a child process at once."""
        if self._stop.is_set() and self.in_child:
            self._hard_stop.set()
        self._stop.set()

    def stop_now(self) -> None:
        """End a child-process run at once, its whole process tree; the last checkpoint is kept. An
        in-process run cannot be ended at once: this is a graceful stop there."""
        self._stop.set()
        if self.in_child:
            self._hard_stop.set()

    @property
    def stop_event(self) -> threading.Event:
        """Set it to stop gracefully, as :meth:`stop` does once (what a terminal's signal handler sets)."""
        return self._stop

    # ------------------------------------------------------------------ the run

    def prepare(self) -> None:
        """Everything before the run that can refuse it: the config's checks (once), the run to
        continue, the new data accepted. Called by :meth:`run`; a front end may call it first to
        refuse before it shows anything.

        Raises:
            ConfigError: The config has problems (all of them).
            InputError: No run to resume, or the one found cannot continue.
        """
        if self._prepared:
            return
        config = self.request.config
        problems = config.validate()
        if problems:
            raise ConfigError(problems)
        if self.resume is None and self.request.resume_latest:
            self.resume = self._find_resume()
        if self.resume is not None and self.request.accept_new_data:
            from desktop.core.runs.data_record import accept_new_data

            accept_new_data(self.resume.path)  # the label set is still checked
        self._prepared = True

    def run(self) -> RunResult:
        """Validate, fetch, keep awake, train; the run's result.

        Raises:
            ConfigError, InputError: As :meth:`prepare`, and a download that cannot be had
                (``ModelError``, ``DiskInputError``).
        """
        self.prepare()
        if self.request.fetch_missing:
            self.stage = "download"
            if not self._fetch():
                self.stopped_in_download = True
                self.on_event(StoppedEvent(step=0, checkpoint=""))
                return RunResult("stopped")
        self.stage = "train"
        self._hold_awake()
        try:
            return self._train()
        finally:
            if self.awake is not None:  # finished, stopped or failed alike: the computer may sleep again
                self.awake.release()

    def failed(self, exc: BaseException) -> RunResult:
        """What :meth:`run` raised, as a front end that shows failures on a page takes it: refused input
        (``invalid``, with its remedies) or a failure said in one sentence, reported as a
        :class:`FailedEvent` like any failure of the run itself."""
        from desktop.core.training.run import refusal
        from desktop.core.training.train_loop import failure_event

        if isinstance(exc, InputError):
            failure = refusal(exc)
            self.on_event(failure)
            return RunResult("invalid", failure=failure)

        failure = failure_event(exc, self.request.config)
        self.on_event(failure)
        return RunResult("failed", failure=failure)

    def _find_resume(self) -> RunDir:
        """The run ``train --resume`` continues.

        Raises:
            RunBusyError: It is training in another process now.
            InputError: There is none, it cannot continue, or none of its checkpoints loads.
        """
        from desktop.core.system.paths import default_runs_dir

        config, origin = self.request.config, self.request.origin
        if origin is None:
            raise InputError(msg("A run to resume is found by its config file, and none was given."))
        resolved = Path(origin).resolve()
        runs_dir = Path(config.output.runs_dir) if config.output.runs_dir else default_runs_dir()
        own = RunDir(resolved.parent)
        if own.is_run() and resolved.name == own.config_path.name:  # the run's own config.toml
            if own.is_locked():
                raise RunBusyError.of(own)
            if not own.resumable() and own.damaged_checkpoints() and own.latest_checkpoint() is None:
                raise every_checkpoint_damaged(own)
            if not own.resumable():
                raise InputError(
                    msg(
                        "The run {run} cannot be resumed: it is {status} and has no checkpoint.",
                        run=own.path.name,
                        status=own.status(),
                    )
                    if own.latest_checkpoint() is None
                    else msg(
                        "The run {run} cannot be resumed: it is {status} and not stopped.",
                        run=own.path.name,
                        status=own.status(),
                    ),
                    msg("Start a new run from this config without --resume."),
                )
            return own
        found = find_resumable(runs_dir, config, resolved)
        if found is not None:
            return found
        damaged = damaged_run_of(runs_dir, resolved)
        if damaged is not None:
            raise every_checkpoint_damaged(damaged)
        raise InputError(
            msg(
                "No stopped or interrupted run of {config} with a checkpoint was found in {folder}.",
                config=origin,
                folder=runs_dir,
            ),
            msg("Start it without --resume, or pass the config.toml inside the run folder to resume."),
        )

    def missing(self) -> list[tuple[str, str, bool]]:
        """What the run needs that is not on this computer yet: ``(ref, revision, is_dataset)``."""
        from desktop.core.hub.access import complete_in_cache
        from desktop.core.hub.clients import local_copy

        config = self.request.config
        out = []
        name = config.model.name.strip()
        local = name.startswith("bundled:") or Path(name).expanduser().is_dir()
        if name and not local and not complete_in_cache(name, config.model.revision):
            out.append((name, config.model.revision, False))
        hub_id = config.data.hub_id
        if hub_id and local_copy(hub_id, dataset=True) is None:
            out.append((hub_id, "", True))
        return out

    def _fetch(self) -> bool:
        """Download what is missing, each as its own step with progress; False when a stop cancelled
        it (what arrived is kept for the next try).

        Raises:
            ModelError, DiskInputError: A download that cannot be had.
        """
        wanted = self.missing()
        if not wanted:
            return True
        from desktop.core.hub import sources

        source = sources.resolve(probe_if_stale=True)
        for ref, revision, dataset in wanted:
            self.on_event(
                PreparingEvent(
                    msg("The dataset {name} is not on this computer yet: downloading it first.", name=ref)
                    if dataset
                    else msg("{name} is not on this computer yet: downloading it first.", name=ref)
                )
            )
            if not self._download(ref, source, revision, dataset):
                return False
        return True

    def _download(self, ref: str, source: object, revision: str, dataset: bool) -> bool:
        """One download on a helper thread, this thread waiting in short steps (so a terminal's
        Ctrl-C reaches it): True when done, False when a stop cancelled it."""
        from desktop.core.hub.clients import DownloadCancelled
        from desktop.core.hub.downloads import download, forget_empty_partials, partial_files
        from desktop.core.hub.sources import split_ref

        repo_id = split_ref(ref)[1]
        others = partial_files(repo_id, source, dataset)  # another program's: never deleted
        ended = threading.Event()
        failed: list[BaseException] = []

        def report(progress: object) -> None:
            self.on_event(
                DownloadEvent(
                    ref,
                    dataset,
                    progress.done,  # type: ignore[attr-defined]
                    progress.total,  # type: ignore[attr-defined]
                    progress.speed,  # type: ignore[attr-defined]
                    progress.file,  # type: ignore[attr-defined]
                )
            )

        def work() -> None:
            try:
                download(
                    ref, source, revision=revision, dataset=dataset, on_progress=report, cancel=self._stop
                )  # type: ignore[arg-type]
            except BaseException as exc:  # handed to the waiting thread
                failed.append(exc)
            finally:
                ended.set()

        threading.Thread(target=work, name="run-download", daemon=True).start()
        try:
            while not ended.wait(WAIT_S):
                pass
        except KeyboardInterrupt:  # a terminal's second Ctrl-C: cancel, keep what arrived, end now
            self._stop.set()
            ended.wait(3)  # a download returns within two seconds of a cancel, even from a stalled server
            forget_empty_partials(repo_id, source, dataset, keep=others)  # type: ignore[arg-type]
            raise
        if failed and isinstance(failed[0], DownloadCancelled):
            forget_empty_partials(repo_id, source, dataset, keep=others)  # type: ignore[arg-type]
            return False
        if failed:
            raise failed[0]
        return True

    def _hold_awake(self) -> None:
        if not self.request.keep_awake:
            return
        from desktop.core.system.awake import KeepAwake

        awake = KeepAwake()
        kept = awake.acquire()  # on this thread, which runs the whole run: Windows holds it per thread
        self.awake = awake if kept else None
        if kept or KeepAwake.supported():  # where nothing sleeps (a container), nothing is said
            self.on_event(AwakeEvent(kept))

    def _train(self) -> RunResult:
        """The run itself, here or in a child process; an unexpected error is a failed run."""
        try:
            return self._in_child() if self.in_child else self._in_process()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the run reports its own failures; this is a last resort
            reason = msg("Training stopped with an unexpected error: {error}", error=exc)
            failure = FailedEvent(reason, "", traceback.format_exc())
            self.on_event(failure)
            return RunResult("failed", failure=failure)

    def _in_process(self) -> RunResult:
        from desktop.core.training.run import run_training

        on_event = self.on_event
        if self.request.lower_priority:
            from desktop.core.system.processes import ComputePriority

            # PyTorch's compute threads and the run's processes below the caller: on a CPU the run
            # takes every core it gets, and the window's thread, starved, froze for up to 0.7 s at a
            # time (measured on two cores). The calling thread keeps its priority.
            below = ComputePriority()

            def on_event(event: Event) -> None:
                below.lower_new()
                self.on_event(event)

        return run_training(
            self.request.config,
            on_event,
            self._stop,
            resume=self.resume,
            origin=_resolved(self.request.origin),
            validated=True,
        )

    def _in_child(self) -> RunResult:
        """The run in a child process supervised from a helper thread, this thread waiting in short
        steps: a terminal's second Ctrl-C (``KeyboardInterrupt`` here) ends its process tree at once."""
        from desktop.core.environment.gpu import detect_gpus
        from desktop.core.training.supervisor import ChildRun

        child = ChildRun(
            self.request.config,
            self.on_event,
            resume=self.resume,
            origin=_resolved(self.request.origin),
            gpus=len(detect_gpus().nvidia) or None,
        )
        outcome: list[RunResult] = []
        failed: list[BaseException] = []

        def supervise() -> None:
            try:
                outcome.append(child.run(self._stop, self._hard_stop))
            except BaseException as exc:  # handed to the waiting thread
                failed.append(exc)

        thread = threading.Thread(target=supervise, name="run-supervisor", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(WAIT_S)
        except KeyboardInterrupt:
            ending = msg("Ending the training process now; the run keeps its last checkpoint.")
            self.on_event(PreparingEvent(ending))
            self.stop_now()
            thread.join()
        if failed:
            raise failed[0]
        return outcome[0]


def every_checkpoint_damaged(run: RunDir) -> InputError:
    """The refusal of a resume whose run has checkpoints, none of them usable: each named."""
    return InputError(
        msg(
            "The run {run} cannot be resumed: none of its checkpoints can be loaded: {damaged}.",
            run=run.path.name,
            damaged=", ".join(run.damaged_checkpoints()),
        ),
        msg(
            "Start a new run from this config without --resume. The damaged checkpoints are kept in {folder} "
            "for a look; delete them to free the space.",
            folder=run.checkpoints_dir,
        ),
    )


def _resolved(origin: Path | None) -> Path | None:
    return Path(origin).resolve() if origin is not None else None
