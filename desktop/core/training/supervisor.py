"""A run in a child process, supervised: the same events and result as :func:`run_training` in-process.

The child is ``python -m desktop.worker`` (one process) or ``accelerate launch`` of it (several).
Its events arrive as JSON lines on its stdout. Stop asks it to checkpoint and end (a stop file every
rank watches); a hard stop ends its whole process tree at once, and the run keeps its last good
checkpoint. A child that dies (a segfault in a driver, ``abort()``, the out-of-memory killer) ends
as a failed run with a diagnosis from its exit code and the tail of its error output; the caller
stays up. When the child is gone, so is every byte of GPU memory it held.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from desktop.core.runs.folders import RunDir
from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import InputError
from desktop.core.system.events import (
    CheckpointEvent,
    Event,
    FailedEvent,
    FinishedEvent,
    ProgressEvent,
    RunResult,
    StartedEvent,
    StoppedEvent,
    event_from_wire,
)
from desktop.core.system.messages import Msg, joined, msg

log = logging.getLogger(__name__)

STDERR_TAIL_LINES = 60
CHILD_NICENESS = 10
WINDOWS_CRASHES = {
    0xC0000005: "SIGSEGV",  # access violation
    0xC00000FD: "SIGSEGV",  # stack overflow
    0xC0000409: "SIGABRT",  # fast-fail: abort(), a failed check in a C++ runtime
    3: "SIGABRT",  # abort() in the MSVC runtime
}
LAUNCHER_SIGNAL = re.compile(r"Signal (\d+) \((SIG[A-Z]+)\) received")
LAUNCHER_EXIT = re.compile(r"exitcode\s*:\s*(-?\d+)")


class ChildRun:
    """One run in a child process; :meth:`run` blocks until it has ended.

    Args:
        config: The run config (saved to a temporary file the child reads).
        on_event: Receives every event, in the thread that called :meth:`run`.
        resume: A stopped or interrupted run folder to continue.
        origin: The config file the run comes from (``None`` for the app's runs).
        gpus: GPUs NVML sees (``None``: none), to refuse a launch that asks for more.
        python: The interpreter for the child (this one by default).
        worker: The worker module the child runs.
    """

    def __init__(
        self,
        config: RunConfig,
        on_event: Callable[[Event], None],
        *,
        resume: RunDir | None = None,
        origin: Path | None = None,
        gpus: int | None = None,
        python: str | None = None,
        worker: str = "desktop.worker",
    ) -> None:
        self.config = config
        self.worker = worker
        self.on_event = on_event
        self.resume = resume
        self.origin = origin
        self.gpus = gpus
        self.python = python
        self.pid: int | None = None
        """The child's process id while it runs (the launcher's, with several processes)."""

    def run(self, stop: threading.Event, hard_stop: threading.Event) -> RunResult:
        """Start the child, relay its events until it ends, and say how the run ended.

        Args:
            stop: Set to stop after the current step with a checkpoint.
            hard_stop: Set to end the child's whole process tree at once.
        """
        from desktop.core.training.launch import accelerate_settings, check_launch, write_accelerate_config

        try:
            check_launch(self.config.launch, self.gpus)
            note = _resume_note(self.resume, self.config) if self.resume is not None else None
        except InputError as exc:
            failure = FailedEvent(exc.message, exc.hint)
            self.on_event(failure)
            return RunResult("invalid", failure=failure)
        if note:
            from desktop.core.system.events import PreparingEvent

            self.on_event(PreparingEvent(note))
        folder = Path(tempfile.mkdtemp(prefix="finetune-studio-run-"))
        try:
            config_path = folder / "run.toml"
            self.config.save(config_path)
            accelerate_config = None
            if self.config.launch.distributed:
                cpu = self.gpus is None
                accelerate_config = write_accelerate_config(
                    folder / "accelerate.yaml",
                    accelerate_settings(self.config.launch, cpu=cpu, port=_free_port()),
                )
            return self._supervise(folder, config_path, accelerate_config, stop, hard_stop)
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # the temporary folder this run made

    def _supervise(
        self,
        folder: Path,
        config_path: Path,
        accelerate_config: Path | None,
        stop: threading.Event,
        hard_stop: threading.Event,
    ) -> RunResult:
        from desktop.core.system import processes
        from desktop.core.training.launch import worker_command

        stop_file = folder / "stop"
        command = worker_command(
            config_path,
            self.config.launch,
            accelerate_config=accelerate_config,
            resume=self.resume.path if self.resume else None,
            stop_file=stop_file,
            origin=self.origin,
            python=self.python,
            module=self.worker,
        )
        env = processes.child_env(PYTHONUNBUFFERED="1", PYTHONPATH=processes.package_path())
        if not self.config.launch.distributed and self.config.launch.gpu_ids:
            env["CUDA_VISIBLE_DEVICES"] = self.config.launch.gpu_ids.replace(" ", "")  # the GPU chosen
        stderr_path = folder / "stderr.log"
        before = {p.name for p in self.resume.checkpoints()} if self.resume else set()
        with open(stderr_path, "wb") as stderr:
            proc = processes.popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                **processes.own_session(),
            )
        self.pid = proc.pid
        _lower_priority(proc.pid)
        done = threading.Event()
        killed = threading.Event()
        watcher = threading.Thread(
            target=_watch, args=(proc, stop, hard_stop, stop_file, done, killed), daemon=True
        )
        watcher.start()
        relay = _Relay(self.on_event)
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                relay.line(raw.decode("utf-8", errors="replace"))
            code = proc.wait()
        finally:
            done.set()
            with contextlib.suppress(OSError):
                proc.stdout.close()
            if proc.poll() is None:  # the relay itself failed: leave nothing running
                processes.kill_tree(proc.pid, grace_s=1.0)
                proc.wait()
            watcher.join()
        tail = _tail(stderr_path)
        run = RunDir(relay.run_dir) if relay.run_dir else self.resume
        if relay.terminal is not None and not killed.is_set():
            if isinstance(relay.terminal, FailedEvent) and relay.terminal.rank:
                _record(run, relay.terminal)  # the main process recorded only what followed from it
            return relay.result(code, run)
        if run is not None:
            _clean_partial_checkpoints(run, before | relay.saved)
        if killed.is_set():
            saved = run.latest_checkpoint() if run is not None else None
            event = StoppedEvent(step=relay.step, checkpoint=str(saved) if saved else "")
            _record(run, event)
            self.on_event(event)
            return RunResult("stopped", run.path if run is not None else None)
        failure = crash_failure(code, tail, run is not None and run.latest_checkpoint() is not None)
        _record(run, failure)
        self.on_event(failure)
        return RunResult("failed", run.path if run is not None else None, failure=failure)


class _Relay:
    """Turns the child's stdout lines into events, remembering what the result needs."""

    def __init__(self, on_event: Callable[[Event], None]) -> None:
        self.on_event = on_event
        self.run_dir: Path | None = None
        self.step = 0
        self.saved: set[str] = set()
        self.terminal: Event | None = None

    def line(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        try:
            event = event_from_wire(text)
        except ValueError:
            log.info("worker: %s", text)  # a library's print: for the log, not an event
            return
        if isinstance(event, StartedEvent):
            self.run_dir = Path(event.run_dir)
        elif isinstance(event, ProgressEvent):
            self.step = event.step
        elif isinstance(event, CheckpointEvent):
            self.saved.add(Path(event.path).name)
        elif isinstance(event, FailedEvent) and isinstance(self.terminal, FailedEvent):
            # The first failure is the cause; the other processes fail after it, because it left.
            log.info("worker: a later failure: %s", event.reason)
            return
        elif isinstance(event, (FinishedEvent, StoppedEvent, FailedEvent)):
            self.terminal = event
        self.on_event(event)

    def result(self, code: int, run: RunDir | None) -> RunResult:
        path = run.path if run is not None else None
        event = self.terminal
        if isinstance(event, FinishedEvent):
            return RunResult(
                "finished", path, Path(event.model_dir), dict(event.metrics), notes=list(event.notes)
            )
        if isinstance(event, StoppedEvent):
            return RunResult("stopped", path if event.step or event.checkpoint else None)
        assert isinstance(event, FailedEvent)
        return RunResult("invalid" if code == 2 and run is None else "failed", path, failure=event)


def _watch(
    proc: subprocess.Popen,
    stop: threading.Event,
    hard_stop: threading.Event,
    stop_file: Path,
    done: threading.Event,
    killed: threading.Event,
) -> None:
    """Pass Stop on as the stop file; end the process tree on a hard stop."""
    from desktop.core.system import processes

    asked = False
    while not done.wait(0.1):
        if hard_stop.is_set():
            killed.set()
            processes.kill_tree(proc.pid, grace_s=0.0)
            return
        if stop.is_set() and not asked:
            asked = True
            with contextlib.suppress(OSError):
                stop_file.touch()


def crash_failure(code: int, stderr_tail: str, has_checkpoint: bool) -> FailedEvent:
    """What a child that died without saying why gets as its failure, from its exit code and error output."""
    name = _signal_name(code, stderr_tail)
    resume = (
        msg("Resume the run: it continues from its last checkpoint.")
        if has_checkpoint
        else msg("Start the run again.")
    )
    if name == "SIGKILL":
        reason: Msg = msg(
            "The training process was killed by the system (SIGKILL). On Linux that is most often the "
            "out-of-memory killer: the computer ran out of RAM."
        )
        remedy = joined(msg("Close other programs, or lower the batch size or the maximum length."), resume)
    elif name == "SIGSEGV":
        reason = msg(
            "The training process crashed inside native code (a segmentation fault). That comes from a "
            "driver, CUDA or a compiled library, not from your data."
        )
        remedy = joined(
            resume,
            msg("If it happens again, update the NVIDIA driver or repair PyTorch on the Environment page."),
        )
    elif name == "SIGABRT":
        reason = msg(
            "The training process was aborted by a library's fatal error (SIGABRT): a failed internal check "
            "in PyTorch, CUDA or a compiled extension."
        )
        remedy = joined(resume, msg("The end of its error output is in the details."))
    elif name:
        reason = msg("The training process ended on signal {signal}.", signal=name)
        remedy = resume
    else:
        reason = msg("The training process ended unexpectedly (exit code {code}).", code=code)
        remedy = joined(resume, msg("The end of its error output is in the details."))
    detail = stderr_tail or msg("The process wrote nothing to its error output.")
    return FailedEvent(reason, remedy, detail)


def _signal_name(code: int, stderr_tail: str) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    if sys.platform == "win32" and code & 0xFFFFFFFF in WINDOWS_CRASHES:
        return WINDOWS_CRASHES[code & 0xFFFFFFFF]
    found = LAUNCHER_SIGNAL.findall(stderr_tail)  # torchrun reports a worker's signal in its error output
    if found:
        return found[-1][1]
    for exit_code in LAUNCHER_EXIT.findall(stderr_tail):
        if int(exit_code) < 0:
            with contextlib.suppress(ValueError):
                return signal.Signals(-int(exit_code)).name
    if code > 128 and code - 128 in {s.value for s in signal.Signals}:
        return signal.Signals(code - 128).name  # a shell-style status
    return ""


def _resume_note(resume: RunDir, config: RunConfig) -> Msg | None:
    """Whether the run can go on with another number of processes, and what that changes.

    Raises:
        InputError: The checkpoint is split across processes (FSDP, DeepSpeed) that will not all be there.
    """
    try:
        saved = resume.config().launch
    except InputError:
        return None
    now = config.launch
    if saved.num_processes == now.num_processes:
        return None
    sharded = {"fsdp", "deepspeed-zero2", "deepspeed-zero3"}
    if (saved.distributed and saved.strategy in sharded) or (now.distributed and now.strategy in sharded):
        raise InputError(
            msg(
                "This run was trained on {before} processes with {strategy}; its checkpoint is split in that "
                "many parts and cannot resume on {now}.",
                before=saved.num_processes,
                strategy=saved.strategy if saved.distributed and saved.strategy in sharded else now.strategy,
                now=now.num_processes,
            ),
            msg("Resume it on {before} GPUs, or start a new run.", before=saved.num_processes),
        )
    return msg(
        "Resuming on {now} processes instead of {before}: the model and optimizer carry over; the order of "
        "the remaining batches differs from an uninterrupted run.",
        now=now.num_processes,
        before=saved.num_processes,
    )


def _clean_partial_checkpoints(run: RunDir, keep: set[str]) -> None:
    """Delete checkpoint folders the dead child had started but not finished (it wrote them)."""
    from desktop.core.runs.checkpoints import checkpoint_problem

    for path in run.checkpoints():
        if path.name not in keep and checkpoint_problem(path):
            log.warning("removing %s: the run ended while it was being written", path)
            shutil.rmtree(path, ignore_errors=True)


def _record(run: RunDir | None, event: Event) -> None:
    """Add what the child could not say itself to its run's events (so Run history knows)."""
    if run is None:
        return
    try:
        run.append(event)
    except OSError:
        log.warning("could not record the end of %s", run.path, exc_info=True)
    finally:
        run.close()


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 65536))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-STDERR_TAIL_LINES:])


def _free_port() -> int:
    """A free TCP port on this machine for the processes' rendezvous (two runs may be going at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lower_priority(pid: int) -> None:
    """Run the child below normal priority, so the window stays quick while it trains on the CPU.

    A training process keeps every core busy; at equal priority the window's thread waits its turn
    (stalls of 100 ms and more on two cores). With the window first, training loses next to nothing:
    the window needs a core only now and then. On Linux a thread inherits the priority of the thread
    that made it, and the child makes its threads seconds later (after importing PyTorch).
    """
    if sys.platform == "win32":
        return  # BELOW_NORMAL_PRIORITY_CLASS is given at creation (see _creation_priority)
    try:
        import psutil

        psutil.Process(pid).nice(CHILD_NICENESS)
    except Exception:  # a process already gone, or a system that refuses: it trains at normal priority
        log.debug("could not lower the priority of %s", pid, exc_info=True)
