"""The launcher: make sure the runtime is ready (set it up or update it if not), start the app, exit.

Usage (the installed program is ``FinetuneStudio``; in a checkout ``python -m desktop.launcher``)::

    FinetuneStudio [--repair] [--offline] [--wheelhouse DIR] [--index-url URL]
                   [--torch-index-url URL] [--python-mirror URL] [--python VERSION_OR_PATH]
                   [--headless] [--smoke]
                   [-- APP ARGUMENTS]

Later starts do no more than read the runtime's marker and start the app, so the app's window
appears as fast as the app itself starts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from desktop.core.environment.swap_request import LAUNCHER_VARIABLE, SwapRequest
from desktop.core.system.messages import joined, msg
from desktop.core.system.paths import data_dir, resources_dir
from desktop.core.system.processes import creation_flags, reset_frozen_dll_directory
from desktop.core.system.secrets import recall_url, remember_url
from desktop.launcher.runtime import (
    MIRRORS,
    PYTHON,
    WINDOWS,
    Bundle,
    Options,
    Runtime,
    SetupError,
    app_command,
    child_env,
    setup,
)

EXIT_OK, EXIT_FAILED = 0, 1
LOCK_NAME = "requirements-lock.txt"
"""The versions CI tested (``tools/lock.py``): the app installs with them as constraints."""
EARLY_EXIT_S = 3.0
"""How long the launcher watches the app start: a crash in this time is reported, with a repair."""


def find_bundle(args: argparse.Namespace) -> Bundle:
    """The uv binary and the app wheel: inside the frozen bundle, or given on the command line."""
    frozen = getattr(sys, "_MEIPASS", None)
    uv = Path(args.uv) if args.uv else None
    wheel = Path(args.app_wheel) if args.app_wheel else None
    wheelhouse = Path(args.wheelhouse) if args.wheelhouse else None
    constraints = python = None
    if frozen:
        base = Path(frozen)
        uv = uv or base / "uv" / ("uv.exe" if WINDOWS else "uv")
        wheel = wheel or next(iter(sorted((base / "app").glob("finetune_studio-*.whl"))), None)
        beside = Path(sys.executable).parent / "wheelhouse"  # an offline installer ships one
        wheelhouse = wheelhouse or (beside if beside.is_dir() else None)
        constraints = base / "app" / LOCK_NAME
        python = base / "python" if (base / "python").is_dir() else None
    else:
        if uv is None:
            from uv import find_uv_bin

            uv = Path(find_uv_bin())
        if wheel is None:
            built = sorted((Path(__file__).resolve().parents[2] / "dist").glob("finetune_studio-*.whl"))
            wheel = built[-1] if built else None
        constraints = Path(__file__).resolve().parents[2] / LOCK_NAME
    if wheel is None or not wheel.is_file() or uv is None or not uv.is_file() or not constraints.is_file():
        raise SetupError(
            msg("This copy of Finetune Studio is incomplete (the app package or uv is missing)."),
            msg("Reinstall Finetune Studio."),
        )
    return Bundle(uv, wheel, wheelhouse, constraints, python)


class LauncherSettings:
    """The mirrors the user set, kept in ``launcher.json`` in the data folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.values = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.values = {}

    def get(self, key: str) -> str:
        value = self.values.get(key, "")
        return recall_url(f"launcher/{key}", value) if isinstance(value, str) else ""

    def save_mirrors(self, mirrors: dict[str, str]) -> None:
        """Remember the mirrors (keys of :data:`MIRRORS`); credentials in a URL go to the keyring."""
        self.values.update(
            {key: remember_url(f"launcher/{key}", mirrors[key]) for key in MIRRORS if key in mirrors}
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.values, indent=2), encoding="utf-8")


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    app_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="FinetuneStudio", description="Start Finetune Studio.")
    parser.add_argument("--repair", action="store_true", help="rebuild the runtime, then start the app")
    parser.add_argument("--offline", action="store_true", help="install only from the wheelhouse")
    parser.add_argument("--wheelhouse", help="a folder of wheels to install from")
    parser.add_argument("--index-url", help="a PyPI mirror for the app's libraries (remembered)")
    parser.add_argument("--torch-index-url", help="a mirror of the PyTorch index (remembered)")
    parser.add_argument("--python-mirror", help="a mirror of uv's Python downloads (remembered)")
    parser.add_argument("--proxy", help="an HTTP(S) proxy for the downloads (remembered)")
    parser.add_argument("--python", help=f"the runtime's Python: a version (default {PYTHON}) or a path")
    parser.add_argument(
        "--data-folder",
        help="move the data folder (runtime, runs, caches, the model cache) here first, then start",
    )
    parser.add_argument("--headless", action="store_true", help="show setup progress here, not in a window")
    parser.add_argument(
        "--smoke", action="store_true", help="start the app, wait until its window shows, exit"
    )
    parser.add_argument("--version", action="store_true", help="print the app version and exit")
    parser.add_argument(
        "--check-display",
        action="store_true",
        help="say whether a window can open here (Linux: the display, Qt's system libraries) and exit",
    )
    parser.add_argument(
        "--lang",
        choices=("en", "zh_CN", "zh_TW"),
        help="the language (default: the one chosen in the app, else the system's)",
    )
    parser.add_argument("--uv", help=argparse.SUPPRESS)
    parser.add_argument("--app-wheel", help=argparse.SUPPRESS)
    return parser.parse_args(argv), app_args


def console_output(kernel32: Any = None, opener: Any = open) -> bool:
    """Write to the console the launcher was started from, if any; whether there is one.

    On Windows the launcher is a windowed program, so Python has no ``sys.stdout``, and ``--version``,
    ``--help`` and ``--headless`` printed nothing. Started from cmd or PowerShell it attaches to that
    console (``AttachConsole(ATTACH_PARENT_PROCESS)``); from Explorer there is none, and nothing
    changes. Elsewhere the streams are already there.
    """
    if sys.stdout is not None and sys.stderr is not None:
        return True
    if not WINDOWS and kernel32 is None:
        return False
    if kernel32 is None:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    if not kernel32.AttachConsole(-1):  # ATTACH_PARENT_PROCESS
        return False
    sys.stdout = sys.stdout or opener("CONOUT$", "w", encoding="utf-8", buffering=1)
    sys.stderr = sys.stderr or opener("CONOUT$", "w", encoding="utf-8", buffering=1)
    return True


def main(argv: list[str] | None = None) -> int:
    """Run the launcher; the exit code is the app's with ``--smoke``, else 0 once it started."""
    started = time.monotonic()
    console_output()
    args, app_args = parse_args(argv)
    if args.lang:  # this window's language, and the app's
        global _LANGUAGE
        _LANGUAGE, app_args = args.lang, [*app_args, "--lang", args.lang]
    from desktop.core.system.data_location import use_moved_model_cache

    use_moved_model_cache()  # the app and uv inherit it
    data = data_dir()
    runtime = Runtime(data / "runtime")
    try:
        bundle = find_bundle(args)
    except SetupError as exc:
        return _fail(args, exc)
    if args.version:
        print(bundle.version)
        return EXIT_OK
    if args.check_display or not _headless(args):
        from desktop.launcher.start_failure import display_problem

        if (blocked := display_problem()) is not None:
            _log(data, f"no window: {blocked[0]}")
            print(f"error: {blocked[0]}\n{blocked[1]}", file=sys.stderr, flush=True)
            return EXIT_FAILED
        if args.check_display:
            return EXIT_OK
    if args.data_folder:
        try:
            _move_data(runtime, Path(args.data_folder), args)
        except SetupError as exc:
            _log(data, f"data folder not moved: {exc.message}")
            _fail(args, exc)  # said; the app starts from where the data is
        else:
            use_moved_model_cache()
            _log(data_dir(), f"data folder moved from {data}")
        data = data_dir()
        runtime = Runtime(data / "runtime")
    settings = LauncherSettings(data / "launcher.json")
    given = {key: getattr(args, key) for key in MIRRORS if getattr(args, key) is not None}
    if given:
        settings.save_mirrors(given)
    # An offline installer ships its wheelhouse beside the launcher: it installs from there alone.
    offline = args.offline or (bundle.wheelhouse is not None and not args.wheelhouse)
    options = Options(offline=offline, python=args.python or PYTHON, **{k: settings.get(k) for k in MIRRORS})
    from desktop.core.environment.swap_request import forget_swap, pending_swap
    from desktop.launcher.swap import recover

    if recovered := recover(runtime):  # a swap the last launcher did not finish
        _log(data, f"launcher {bundle.version}: {recovered}")
    state = "repair" if args.repair else runtime.state(bundle)
    _log(data, f"launcher {bundle.version}: runtime {state}")
    swap = pending_swap(data)
    if swap is not None and state != "ready":
        forget_swap(data)  # a setup installs the build that fits this machine anyway
        swap = None
    if swap is not None:
        _log(data, f"launcher {bundle.version}: PyTorch swap to {swap.requirement}")
        if _headless(args):
            _swap_headless(runtime, bundle, options, data, swap)
        else:
            _setup_in_window(runtime, bundle, options, data, False, interactive=not args.smoke, swap=swap)
        # Swapped or not, the runtime in place works: the app starts with the PyTorch it now has.
        return _start_app(runtime, data, [*app_args, "--quit-when-shown"] if args.smoke else app_args, args)
    if state != "ready" and runtime.root.exists():
        from desktop.core.system.instance import others_running

        # Its PyTorch and app files are in use: never clear or update it now. Another launcher's
        # setup is not: _single_setup tells this one to wait for it.
        if [other for other in others_running() if not other.startswith("setup-")]:
            return _fail(
                args,
                SetupError(
                    msg("Finetune Studio is running, so its runtime cannot be set up again or updated now."),
                    msg(
                        "Close every Finetune Studio window (and stop command-line runs), "
                        "then start it again."
                    ),
                ),
            )
    if state != "ready":
        fresh = state != "outdated"
        ok = _setup_headless(runtime, bundle, options, data, fresh) if _headless(args) else None
        if ok is None:
            ok = _setup_in_window(runtime, bundle, options, data, fresh, interactive=not args.smoke)
        if not ok:
            return EXIT_FAILED
        data = data_dir()  # the first-start window may have put it elsewhere
        runtime = Runtime(data / "runtime")
    else:
        print(f"Runtime ready ({time.monotonic() - started:.2f} s); starting the app.", flush=True)
    if args.smoke:
        app_args = [*app_args, "--quit-when-shown"]
    return _start_app(runtime, data, app_args, args)


def _move_data(runtime: Runtime, target: Path, args: argparse.Namespace) -> None:
    """Move the data folder to ``target`` once nothing runs from it (nothing to do when it is there).

    Raises:
        SetupError: It was not moved (the reason); everything is where it was.
    """
    from desktop.launcher import moving

    if target.expanduser().resolve() == data_dir().resolve():
        return
    move = moving.planned(data_dir(), target)
    with _single_setup(data_dir()):
        moving.wait_for_others(runtime)
        if _headless(args) or args.smoke:
            moving.move_headless(move)
        else:
            _qt_app()
            moving.move_in_window(move)


def _headless(args: argparse.Namespace) -> bool:
    if args.headless:
        return True
    no_display = sys.platform == "linux" and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")
    )
    return no_display


def _setup_headless(runtime: Runtime, bundle: Bundle, options: Options, data: Path, fresh: bool) -> bool:
    what = "Setting up" if fresh else "Updating"
    print(f"{what} Finetune Studio's runtime in {runtime.root} ...", flush=True)
    if not _headless_job(data, lambda line: setup(runtime, bundle, options, data, fresh, on_line=line)):
        return False
    print("Runtime ready.", flush=True)
    return True


def _swap_headless(runtime: Runtime, bundle: Bundle, options: Options, data: Path, swap: SwapRequest) -> bool:
    from desktop.launcher.swap import swap_torch

    print(f"Installing PyTorch {swap.requirement} beside the current one ...", flush=True)
    return _headless_job(data, lambda line: swap_torch(runtime, bundle, options, data, swap, on_line=line))


def _headless_job(data: Path, job: Callable[[Callable[[str], None]], object]) -> bool:
    """Run ``job`` (a setup or a swap) as the only launcher at work, its lines into the setup log and
    its steps on stdout; whether it worked (a failure is said on stderr)."""
    with _open_log(data) as log:

        def line(text: str) -> None:
            log.write(text + "\n")
            log.flush()
            if text.startswith(("[", "PyTorch", "Waiting")):
                print(text, flush=True)

        try:
            with _single_setup(data):
                job(line)
        except SetupError as exc:
            print(f"error: {exc.message}\n{exc.hint}\n(log: {log.name})", file=sys.stderr, flush=True)
            return False
    return True


def _setup_in_window(
    runtime: Runtime,
    bundle: Bundle,
    options: Options,
    data: Path,
    fresh: bool,
    interactive: bool,
    swap: SwapRequest | None = None,
) -> bool:
    import shiboken6
    from PySide6.QtWidgets import QMessageBox

    from desktop.launcher.window import SetupWindow
    from desktop.shared_ui import shown

    app = _qt_app()
    try:
        with _single_setup(data):
            first = interactive and swap is None and not runtime.root.exists()
            window = SetupWindow(
                runtime,
                bundle,
                options,
                data,
                fresh,
                interactive,
                # Where the data folder is when the user presses Install (Change… may move it).
                lambda mirrors: LauncherSettings(data_dir() / "launcher.json").save_mirrors(mirrors),
                swap=swap,
                choose_place=first,
            )
            window.finished_setup.connect(app.quit)
            window.show()
            if not window.waits_for_install:
                window.start()
            app.exec()
            with _open_log(data_dir()) as log:  # where the user put the data folder
                log.write(window.log.toPlainText() + "\n")
            ok = window.ok
            if not ok and window.failure:
                print(f"error: {window.failure}", file=sys.stderr, flush=True)
            # Delete the window now, while the application exists: left to the interpreter's exit,
            # PySide6 tears it down after the application and crashes.
            shiboken6.delete(window)
            return ok
    except SetupError as exc:
        QMessageBox.information(None, "Finetune Studio", f"{shown(exc.message)}\n{shown(exc.hint)}")
        return False


_APP = None
_LANGUAGE = ""
"""``--lang``, when given."""


def _qt_app() -> Any:
    """The one QApplication, created on first use and kept until the process ends."""
    global _APP
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    if _APP is None:
        _APP = QApplication.instance() or QApplication(sys.argv[:1])
        _APP.setWindowIcon(QIcon(str(resources_dir() / "icon.png")))
        from desktop.core.system.language import choose
        from desktop.shared_ui import Key, Settings, install_translators

        # The language the app was set to (View > Language), else the system's: the setup window
        # speaks it before the app ever started.
        install_translators(_APP, choose(_LANGUAGE, Settings().text(Key.LANGUAGE)))
    return _APP


class _single_setup:
    """Only one launcher sets up the runtime at a time (a lock file that survives crashes), and while it
    does, it counts as a running Finetune Studio: the installer's upgrade and uninstall wait for it
    (the named mutex on Windows), and so do the app's repair and another launcher."""

    def __init__(self, data: Path) -> None:
        from PySide6.QtCore import QLockFile

        from desktop.core.system.instance import InstanceMark

        data.mkdir(parents=True, exist_ok=True)
        self.lock = QLockFile(str(data / "setup.lock"))
        self.mark = InstanceMark("setup")

    def __enter__(self) -> _single_setup:
        if not self.lock.tryLock(0):
            raise SetupError(
                msg("Finetune Studio is already being set up by another window."),
                msg("Wait for it to finish; the app starts by itself."),
            )
        self.mark.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.mark.release()
        self.lock.unlock()


def _start_app(runtime: Runtime, data: Path, app_args: list[str], args: argparse.Namespace) -> int:
    command = app_command(runtime, app_args, windowed=not args.smoke)
    stderr_path = data / "app-start.log"
    flags = creation_flags(detached=True)
    reset_frozen_dll_directory()
    try:
        with open(stderr_path, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(
                command,
                env=_app_env(data),
                stdin=subprocess.DEVNULL,
                stdout=None if args.smoke else subprocess.DEVNULL,
                stderr=err,
                creationflags=flags,
                start_new_session=not WINDOWS and not args.smoke,
            )
    except OSError as exc:
        return _fail(
            args,
            SetupError(
                msg("Finetune Studio could not be started: {error}", error=exc),
                msg(
                    "Repair the runtime (FinetuneStudio --repair); it keeps your PyTorch build and your runs."
                ),
            ),
        )
    if args.smoke:
        code = proc.wait()
        if code == 0:
            runtime.release_downloads()
            return EXIT_OK
        return _early_exit(runtime, data, app_args, args, code, stderr_path)
    try:
        code = proc.wait(timeout=EARLY_EXIT_S)
    except subprocess.TimeoutExpired:
        # Running: the runtime works, so the PyTorch wheel kept to finish it is not needed any more.
        runtime.release_downloads()
        # The launcher stays (idle, without Qt unless it showed the setup) to report a crash that comes
        # later: a window that vanishes with no word is the worst way to lose a run.
        code = proc.wait()
        if code == 0:
            return EXIT_OK
        return _fail(
            args,
            SetupError(
                msg("Finetune Studio stopped unexpectedly (exit code {code}).", code=_exit_code(code)),
                msg(
                    "Your runs are kept: a run that was training resumes from its last checkpoint "
                    "(Resume in the app). Start it again; if it happens again, send the log."
                ),
                _tail(stderr_path),
            ),
        )
    if code == 0:
        return EXIT_OK
    return _early_exit(runtime, data, app_args, args, code, stderr_path)


def _early_exit(
    runtime: Runtime, data: Path, app_args: list[str], args: argparse.Namespace, code: int, stderr_path: Path
) -> int:
    """The app stopped right after it started. The runtime is kept (setting it up again would not
    help, and on a first start would download PyTorch again): what happened, then Retry, Repair (which
    keeps the PyTorch build) or the log."""
    from desktop.launcher import start_failure

    tail = _tail(stderr_path)
    _log(data, f"the app stopped right after starting (exit code {_exit_code(code)})")
    message, hint = start_failure.explain(_exit_code(code), tail, stderr_path)
    if _headless(args) or args.smoke:
        repair = msg("To repair it: FinetuneStudio --repair. The log: {log}", log=str(stderr_path))
        _fail(args, SetupError(message, joined(hint, repair), tail))
        return EXIT_FAILED
    choice = start_failure.ask(message, hint, tail, stderr_path, _qt_app)
    if choice == "retry":
        return _start_app(runtime, data, app_args, args)
    if choice == "repair":
        bundle = find_bundle(args)
        options = Options(
            python=args.python or PYTHON,
            **{k: LauncherSettings(data / "launcher.json").get(k) for k in MIRRORS},
        )
        if not _setup_in_window(runtime, bundle, options, data, True, interactive=True):
            return EXIT_FAILED
        return _start_app(runtime, data, app_args, args)
    return EXIT_FAILED


def _app_env(data: Path) -> dict[str, str]:
    """The app's environment: no mirror (it runs from the finished runtime), and this launcher's path,
    through which it restarts to swap PyTorch."""
    env = child_env(data)
    if getattr(sys, "frozen", False):
        env[LAUNCHER_VARIABLE] = sys.executable
    return env


def _tail(path: Path, lines: int = 12) -> str:
    """The end of the app's error output (its traceback, when Python printed one)."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def _exit_code(code: int) -> str:
    """An exit code as Windows writes its crashes (0xC0000005: an access violation), else in decimal."""
    return f"0x{code & 0xFFFFFFFF:08X}" if WINDOWS and (code < 0 or code > 0xFFFF) else str(code)


def _fail(args: argparse.Namespace, exc: SetupError) -> int:
    print(f"error: {exc.message}\n{exc.hint}", file=sys.stderr, flush=True)
    if exc.log:
        print(exc.log, file=sys.stderr, flush=True)
    if not _headless(args) and not args.smoke:
        from PySide6.QtWidgets import QMessageBox

        from desktop.shared_ui import shown

        _qt_app()
        box = QMessageBox(QMessageBox.Icon.Warning, "Finetune Studio", shown(exc.message))
        box.setInformativeText(shown(exc.hint))
        box.setDetailedText(exc.log)
        box.exec()
    return EXIT_FAILED


def _open_log(data: Path) -> TextIO:
    data.mkdir(parents=True, exist_ok=True)
    return open(data / "runtime-setup.log", "a", encoding="utf-8")


def _log(data: Path, text: str) -> None:
    with _open_log(data) as log:
        log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")
