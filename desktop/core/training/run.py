"""One entry point for a run: ``run_training(config, on_event, stop) -> RunResult``."""

from __future__ import annotations

import contextlib
import logging
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from desktop.core.runs import data_record
from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import InputError, check_writable, disk_error
from desktop.core.system.events import Event, FailedEvent, PreparingEvent, RunResult, StoppedEvent
from desktop.core.system.heap import release_memory
from desktop.core.system.messages import msg
from desktop.core.system.paths import default_runs_dir
from desktop.core.training.coach import Coach
from desktop.core.training.preparation import StoppedWhilePreparing, prepare
from desktop.core.training.train_loop import failure_event, train

log = logging.getLogger(__name__)


def run_training(
    config: RunConfig,
    on_event: Callable[[Event], None],
    stop: threading.Event | None = None,
    *,
    resume: RunDir | None = None,
    origin: Path | None = None,
    validated: bool = False,
) -> RunResult:
    """Fine-tune a model as ``config`` says, reporting every step as an event.

    Never raises for bad input or a failed run: those end as a ``FailedEvent`` and a result with
    status ``invalid`` or ``failed``.

    Args:
        config: The run config.
        on_event: Receives every event (in the calling thread).
        stop: Set it to stop after the current step; a checkpoint is saved so the run can resume.
        resume: A stopped or interrupted run folder to continue from its newest good checkpoint.
        origin: The config file the run comes from, recorded so ``--resume`` finds this run.
        validated: The config's checks ran already (a :class:`~desktop.core.training.session.RunSession`
            ran them once); they are not run again.
    """
    from desktop.core.training import distributed

    stop = stop or threading.Event()
    runs_dir = Path(config.output.runs_dir) if config.output.runs_dir else default_runs_dir()
    main = distributed.world().main
    if not main:  # rank 0 reports and writes the run folder; the others only say why they fail
        on_event = _failures_of_this_process(on_event)
    try:
        if resume is not None and main:
            resume.lock()  # before anything is written: one process per run folder
        elif main:
            check_writable(runs_dir, "runs folder")  # before the model loads, not after
        data = _DataCheck(config, resume)
        with distributed.main_first():  # rank 0 fills the tokenized cache, the others read it
            prepared = prepare(config, on_event, stop, on_data=data.check, validated=validated)
    except StoppedWhilePreparing:
        if resume is not None:
            resume.unlock()
        on_event(StoppedEvent(step=0, checkpoint=""))
        return RunResult("stopped")
    except InputError as exc:
        if resume is not None:
            resume.unlock()
        failure = refusal(exc)
        on_event(failure)
        return RunResult("invalid", failure=failure)
    except BaseException as exc:
        if resume is not None:
            resume.unlock()
        if not isinstance(exc, Exception):
            raise
        failure = failure_event(exc, config)
        on_event(failure)
        return RunResult("failed", failure=failure)
    try:
        if stop.is_set():
            event = StoppedEvent(step=0, checkpoint="")
            on_event(event)
            return RunResult("stopped", notes=prepared.task.notes)
        if not main:
            run = resume or RunDir(distributed.share(None))
        else:
            run = resume or RunDir.create(runs_dir, prepared.config, origin)
            if resume is None:
                distributed.share(str(run.path))
        if resume is not None:
            prepared.config.output = resume.config().output
            prepared.config.launch = config.launch  # a resume may use another number of GPUs
            if main:
                prepared.config.save(resume.config_path)  # the schedule may have changed, e.g. more steps
        if main and data.now is not None:
            data_record.save(run.path, data.now)  # what the checkpoints from here on were trained on
    except OSError as exc:
        if resume is not None:
            resume.unlock()
        failure = failure_event(disk_error(exc, runs_dir) or exc, config)
        on_event(failure)
        return RunResult("invalid", failure=failure)

    labels = getattr(getattr(prepared.task.model, "config", None), "num_labels", None)
    coach = Coach(prepared.config, *_reading(prepared, labels))

    def emit(event: Event) -> None:
        if not main:
            on_event(event)  # a failure only
            return
        try:
            seen = coach.see(event)  # what the curves show, said as it shows (coach.py)
        except Exception:  # a word of advice is never worth the run
            log.warning("the coach could not read an event", exc_info=True)
            seen = []
        for said in [event, *seen]:
            try:
                if not isinstance(said, PreparingEvent):  # what is being done now: shown, not recorded
                    run.append(said)
            except OSError:  # a full disk: the run goes on (the checkpoint check stops it cleanly)
                log.warning("could not record an event in %s", run.events_path, exc_info=True)
            on_event(said)

    try:
        with _log_to(run.log_path) if main else contextlib.nullcontext():
            return train(prepared, run, emit, stop, resume is not None, lambda c: prepare(c, emit, stop))
    finally:
        run.unlock()
        run.close()
        release_memory()


def _reading(prepared: Any, labels: int | None) -> tuple[int | None, float | None]:
    """A classifier's classes and the share of its evaluation texts' tokens its model does not know
    (the coach's "not learning" names it); ``None`` for other tasks or where it cannot be measured."""
    if prepared.config.task != "classification":
        return None, None
    from desktop.core.data.checks import unknown_share

    texts = list(getattr(prepared.task, "eval_texts", None) or [])
    try:
        return labels, unknown_share(prepared.tokenizer, texts) if texts else None
    except Exception:  # a tokenizer that refuses a text: the coach says it without the figure
        log.warning("the unknown-token share could not be measured", exc_info=True)
        return labels, None


RESUME_ON_NEW_DATA = "resume_on_new_data"
"""A remedy's ``action``: the user accepts the changed data (``data_record.accept_new_data``) and
resumes again."""


def refusal(exc: InputError) -> FailedEvent:
    """Input a run refused (before or while preparing), as the failure event a front end shows: its
    sentence, what to do, the traceback behind Details, and its remedies as buttons."""
    remedies = [{"label": r.label, "changes": r.changes} for r in getattr(exc, "remedies", ())]
    if isinstance(exc, data_record.DataChanged):
        remedies = [{"label": msg("Resume on the new data"), "changes": {}, "action": RESUME_ON_NEW_DATA}]
    return FailedEvent(exc.message, exc.hint, traceback.format_exc(), remedies)


class _DataCheck:
    """Describes the data a run reads; on a resume, first refuses it if it is not what the run started on."""

    def __init__(self, config: RunConfig, resume: RunDir | None) -> None:
        self.config, self.resume = config, resume
        self.before = data_record.load(resume.path) if resume is not None else None
        self.now: data_record.DataRecord | None = None

    def check(self, checked: Any) -> None:
        from desktop.core.data.columns import unique_values

        data, validation = self.config.data, self.config.validation
        files = [Path(name) for name in [*data.files, *validation.files]]
        hub = f"{data.hub_id} {data.hub_config} {data.split}".strip() if data.hub_id else ""
        rows = {"train": len(checked.train), "eval": len(checked.eval) if checked.eval is not None else 0}
        labels = None
        if self.config.task in ("classification", "image-classification"):
            labels = unique_values(checked.train.column(checked.guess.columns.label))
        self.now = data_record.describe(files, hub, rows, labels, self.before)
        if self.before is not None:
            data_record.check_unchanged(self.before, self.now)


def _failures_of_this_process(on_event: Callable[[Event], None]) -> Callable[[Event], None]:
    """What a rank other than 0 reports: its own failure, named as its process's, which is the cause
    when one process fails alone (the others then fail only because it left the group)."""
    import dataclasses

    from desktop.core.training import distributed

    place = distributed.world()

    def report(event: Event) -> None:
        if not isinstance(event, FailedEvent):
            return
        reason = msg(
            "In process {number} of {count}: {reason}",
            number=place.rank + 1,
            count=place.size,
            reason=event.reason,
        )
        detail = event.detail[-3000:]  # one short line: the processes share the supervisor's pipe
        on_event(dataclasses.replace(event, reason=reason, detail=detail, rank=place.rank))

    return report


class _RedactingFormatter(logging.Formatter):
    """Log lines without credentials: tokens and passwords in URLs become ``***``."""

    def format(self, record: logging.LogRecord) -> str:
        from desktop.core.system.secrets import redact

        return redact(super().format(record))


@contextlib.contextmanager
def _log_to(path: Path) -> Iterator[None]:
    """Copy this package's and transformers' log records into the run's ``train.log``."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    names = ("desktop", "transformers", "huggingface_hub", "trl", "py.warnings")  # (warnings: the CLI's)
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        handler.close()
