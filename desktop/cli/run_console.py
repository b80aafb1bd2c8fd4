"""The terminal view of a run for ``train``: a progress bar of steps and a short line per event."""

from __future__ import annotations

import sys
from typing import Any

from desktop.cli.text import say, text
from desktop.core.system.events import (
    AdjustedEvent,
    AdviceEvent,
    AwakeEvent,
    CheckpointEvent,
    DownloadEvent,
    Event,
    LogEvent,
    PreparingEvent,
    ProgressEvent,
    SampleEvent,
    StartedEvent,
)


class RunConsole:
    """Shows run events as a progress bar and short lines."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.downloading: str | None = None  # the model or dataset the open bar counts the bytes of
        self.run_dir = ""

    def __call__(self, event: Event) -> None:
        if isinstance(event, DownloadEvent):
            self._download(event)
            return
        if self.downloading is not None:  # the download before the run is done
            self.close()
        if isinstance(event, AwakeEvent):
            if not event.kept:
                self.write(
                    say("note: this computer could not be kept awake; if it sleeps, the run stops there.")
                )
        elif isinstance(event, PreparingEvent):
            line = text(event.message)
            self.write(line if line.endswith((".", "。")) else say("{step}...", step=line))
        elif isinstance(event, StartedEvent):
            self.run_dir = event.run_dir
            self.write(say("Run folder: {folder}", folder=event.run_dir))
            values = {
                "device": event.device if event.processes == 1 else f"{event.processes} × {event.device}",
                "train": event.num_train_examples,
                "eval": event.num_eval_examples,
                "steps": event.total_steps,
                "step": event.resumed_from_step,
            }
            self.write(
                say(
                    "Training on {device}: {train} examples, {eval} for evaluation, {steps} steps, "
                    "resuming at step {step}.",
                    **values,
                )
                if event.resumed_from_step
                else say(
                    "Training on {device}: {train} examples, {eval} for evaluation, {steps} steps.", **values
                )
            )
            self._open_bar(event.total_steps, event.resumed_from_step)
        elif isinstance(event, ProgressEvent) and self.bar is not None:
            self.bar.n = event.step
            extra = {}
            if event.samples_per_second:
                extra["samples/s"] = f"{event.samples_per_second:.1f}"
            self.bar.set_postfix(extra, refresh=False)
            self.bar.refresh()
        elif isinstance(event, LogEvent):
            self.write(_format_metrics(event))
        elif isinstance(event, AdviceEvent):
            self.write(say("advice: {message}", message=text(event.message)))
            for remedy in event.remedies:
                changes = " ".join(f"--set {key}={value}" for key, value in remedy["changes"].items())
                self.write(
                    "  " + say("to try it: {change} ({flags})", change=text(remedy["label"]), flags=changes)
                )
        elif isinstance(event, SampleEvent):
            from desktop.core.data.rewards import sample_message

            self.write(text(sample_message(event.step, event.rewards, event.completion)))
        elif isinstance(event, CheckpointEvent):
            self.write(say("Checkpoint saved at step {step}.", step=event.step))
        elif isinstance(event, AdjustedEvent):
            changes = "; ".join(text(change) for change in event.described)
            if event.step == 0:  # found by the longest batch, before the first step
                going_on = say("Starting with: {changes}.", changes=changes)
            elif event.resumed_from == event.step:
                going_on = say("Going on at step {step} with: {changes}.", step=event.step, changes=changes)
            elif event.resumed_from:
                going_on = say(
                    "Going back to the checkpoint at step {step} with: {changes}.",
                    step=event.resumed_from,
                    changes=changes,
                )
            else:
                going_on = say("Starting again from the beginning with: {changes}.", changes=changes)
            self.write(f"{text(event.reason)} {going_on}")

    def _download(self, event: DownloadEvent) -> None:
        """Bytes, speed and time left of the download before the run, on a bar of its own."""
        from tqdm import tqdm

        if self.downloading != event.name:
            self.close()
            self.downloading = event.name
            self.bar = tqdm(
                total=event.total,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                dynamic_ncols=True,
                file=sys.stderr,
            )
        self.bar.update(event.done - self.bar.n)

    def _open_bar(self, total: int, initial: int) -> None:
        from tqdm import tqdm

        if self.bar is not None:  # training again from a checkpoint (after running out of memory)
            self.bar.close()
        self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, file=sys.stderr)

    def write(self, text: str) -> None:
        """A line on stderr, above the progress bar once it is open."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.downloading = None


def _format_metrics(event: LogEvent) -> str:
    names = (
        "loss",
        "eval_loss",
        "eval_accuracy",
        "eval_macro_f1",
        "eval_perplexity",
        "learning_rate",
        "grad_norm",
    )
    shown = [f"{k} {event.metrics[k]:.4g}" for k in names if k in event.metrics]
    if "train_loss" in event.metrics and not shown:
        shown = [say("mean train loss {loss}", loss=f"{event.metrics['train_loss']:.4g}")]
    return say("step {step} | {metrics}", step=f"{event.step:>5}", metrics="  ".join(shown))
