"""``doctor``: check the GPUs, the driver and the installed PyTorch; ``--fix`` installs the one that fits."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from desktop.cli.common import EXIT_FAILED, EXIT_OK, EXIT_STOPPED
from desktop.cli.text import say, text
from desktop.core.system.errors import InputError, StudioError
from desktop.core.system.secrets import redact, shell_join


def add_parsers(sub: Any) -> None:
    """The ``doctor`` command."""
    p = sub.add_parser("doctor", help=say("check the GPUs, the driver and the installed PyTorch"))
    p.add_argument("--json", action="store_true", help=say("print the findings as JSON"))
    p.add_argument("--fix", action="store_true", help=say("install the PyTorch build that fits"))
    p.add_argument(
        "--dry-run", action="store_true", help=say("with --fix: show the install command, run nothing")
    )
    p.add_argument(
        "--index-url", default="", help=say("a mirror or custom index instead of download.pytorch.org")
    )
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report GPUs, driver and the installed PyTorch; with --fix, install the build that fits."""
    import dataclasses
    import json

    from desktop.core.environment.gpu import detect_gpus
    from desktop.core.environment.torch_probe import probe_torch
    from desktop.core.environment.wheels import verdict

    report, probe = detect_gpus(), probe_torch()
    system = "windows" if sys.platform == "win32" else "linux"
    result = verdict(report, probe, system)
    plan = None
    if result.target is not None:
        from desktop.core.environment.repair import plan_repair

        plan = plan_repair(result.target, index_url=args.index_url, previous=probe.version)
    if args.json:
        findings = {
            "gpus": dataclasses.asdict(report),
            "torch": dataclasses.asdict(probe),
            "verdict": {**dataclasses.asdict(result), "ok": result.ok},
            "fix": {"requirements": plan.requirements, "command": plan.command} if plan else None,
        }
        print(redact(json.dumps(findings, indent=2, ensure_ascii=False)))
    else:
        print(text(report.summary()))
        print(text(probe.summary()))
        headline = text(result.headline)
        print(
            say("OK: {headline}", headline=headline)
            if result.ok
            else say("Needs attention: {headline}", headline=headline)
        )
        print(f"  {text(result.explanation)}")
        if plan is not None and not args.fix:
            command = redact(shell_join(plan.command))
            print(
                "  "
                + say("Fix it with: finetune-studio-cli doctor --fix   (runs: {command})", command=command)
            )
    if not args.fix or result.ok:
        return EXIT_OK if result.ok else EXIT_FAILED
    if plan is None:
        raise StudioError(result.headline, result.explanation)
    if args.dry_run:
        print(redact(shell_join(plan.command)))
        return EXIT_OK
    from desktop.core.system.instance import others_running

    others = others_running()
    if others:
        raise InputError(
            say(
                "Finetune Studio is running ({what}), and PyTorch cannot be replaced while it is in use.",
                what=", ".join(others),
            ),
            say("Close the app and stop command-line runs, then run doctor --fix again."),
        )
    return _run_fix(plan)


def _run_fix(plan: Any) -> int:
    from tqdm import tqdm

    from desktop.core.environment.repair import run_repair
    from desktop.core.environment.torch_probe import prove_gpu

    bar = tqdm(total=100, unit="%", file=sys.stderr, dynamic_ncols=True, desc=say("Installing PyTorch"))
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        result = run_repair(
            plan,
            lambda line: bar.write(redact(line), file=sys.stderr),
            lambda share: bar.update(int(share * 100) - bar.n),
            stop,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
        bar.close()
    print(text(result.message))
    if not result.ok:
        return EXIT_STOPPED if result.cancelled else EXIT_FAILED
    proof = prove_gpu(plan.python)
    if proof.ok:
        print(
            say(
                "Proved: a matrix multiplication ran on {device} in {seconds} s.",
                device=proof.device,
                seconds=f"{proof.seconds:.2f}",
            )
        )
        return EXIT_OK
    version = result.probe.version if result.probe else ""
    print(
        say(
            "error: PyTorch {version} is installed, but the GPU test failed: {error}",
            version=version,
            error=proof.error,
        ),
        file=sys.stderr,
    )
    return EXIT_FAILED


def add_move_parser(sub: Any) -> None:
    """The ``move-data`` command."""
    p = sub.add_parser(
        "move-data",
        help=say("move the data folder (runs, runtime, caches) to another place"),
    )
    p.add_argument("target", help=say("an empty or new folder, for example on another drive"))
    p.set_defaults(func=cmd_move_data)


def cmd_move_data(args: argparse.Namespace) -> int:
    """Move the data folder, with progress, when no Finetune Studio process uses it."""
    from pathlib import Path

    from desktop.core.system.data_location import move_data, plan_move
    from desktop.core.system.instance import others_running
    from desktop.core.system.paths import data_dir

    source = data_dir()
    move = plan_move(source, Path(args.target))
    others = others_running()
    if others:
        raise InputError(
            say(
                "Finetune Studio is running ({others}): its data folder cannot move now.",
                others=", ".join(others),
            ),
            say("Close every Finetune Studio window and command-line run, then run this again."),
        )
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    shown = [-1]

    def progress(done: int, total: int, name: str) -> None:
        percent = int(done * 100 / total) if total else 100
        if percent != shown[0]:
            shown[0] = percent
            print(f"\r{say('Moving')} {percent:3d}%  {name}", end="", file=sys.stderr, flush=True)

    try:
        move_data(move, progress, stop)
    except OSError as exc:
        print(file=sys.stderr)
        raise InputError(
            say("The data folder could not be moved: {error}", error=exc),
            say("Everything is where it was. Free some space or choose another folder, then try again."),
        ) from exc
    print(file=sys.stderr)
    print(say("The data folder is now {folder}.", folder=move.target))
    return EXIT_OK
