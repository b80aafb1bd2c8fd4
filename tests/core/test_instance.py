"""Running Finetune Studio processes are seen by the repair, the launcher and the uninstaller."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from desktop.core.system.instance import InstanceMark, others_running, wait_for_exit

HOLD = (
    "import sys, time; from desktop.core.system.instance import InstanceMark; "
    "mark = InstanceMark(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)"
)


def _holder(kind: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, kind], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_another_app_or_cli_is_seen_and_a_killed_one_is_not(app_home: Path) -> None:
    assert others_running() == []
    app = _holder("app")
    try:
        with InstanceMark("cli"):  # this process does not count itself
            assert others_running() == [f"app-{app.pid}"]
    finally:
        app.kill()
        app.wait()
    assert others_running() == []  # the OS dropped its lock: a crash never blocks a repair
    assert not list((app_home / "instances").glob(f"app-{app.pid}.lock"))  # and the stale mark is gone


def test_files_it_did_not_write_are_left_alone(app_home: Path) -> None:
    folder = app_home / "instances"
    folder.mkdir(parents=True)
    (folder / "notes.lock").write_text("not a mark", encoding="utf-8")
    assert others_running() == []
    assert (folder / "notes.lock").read_text(encoding="utf-8") == "not a mark"


def test_the_repair_waits_for_the_window_that_restarted_it() -> None:
    quick = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    assert wait_for_exit(quick.pid, timeout_s=10)
    quick.wait()
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not wait_for_exit(slow.pid, timeout_s=0.5)
    finally:
        slow.kill()
        slow.wait()
