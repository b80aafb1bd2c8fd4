"""Imports across threads: a module another thread is still importing does not count as imported
(importing it would wait); a background import steps aside while the user is at work, unless another
thread needs what it is importing."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from desktop.core.system import lazy
from desktop.core.system.lazy import imported


def test_a_module_being_imported_elsewhere_is_not_imported_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = types.ModuleType("studio_test_gate")
    gate.started, gate.release = threading.Event(), threading.Event()
    monkeypatch.setitem(sys.modules, "studio_test_gate", gate)
    (tmp_path / "studio_slow_module.py").write_text(
        "import studio_test_gate as gate\ngate.started.set()\ngate.release.wait(30)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "studio_slow_module", raising=False)
    worker = threading.Thread(target=lambda: __import__("studio_slow_module"))
    worker.start()
    try:
        assert gate.started.wait(30)
        assert "studio_slow_module" in sys.modules  # what the window looked at: an import would wait here
        assert not imported("studio_slow_module")
    finally:
        gate.release.set()
        worker.join(30)
    assert imported("studio_slow_module") and imported("sys")
    assert not imported("studio_no_such_module")
    del sys.modules["studio_slow_module"]


@pytest.fixture
def stack(gated_package: threading.Event) -> types.SimpleNamespace:
    """The gated package, whose first module finds the user at work (``busy`` set)."""
    return types.SimpleNamespace(busy=gated_package, done=threading.Event(), failed=[])


def _warm_up(state: types.SimpleNamespace, around: object = None) -> threading.Thread:
    def run() -> None:
        try:
            with lazy.stepping_aside(state.busy.is_set):
                if around is None:
                    import studio_gated
                else:
                    with around:
                        import studio_gated  # noqa: F401
        except Exception as exc:
            state.failed.append(exc)
        state.done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert state.busy.wait(30)
    return thread


def test_a_background_import_waits_while_the_user_is_at_work_and_goes_on_after(stack) -> None:
    _warm_up(stack)
    assert not stack.done.wait(0.3)  # a condition that must stay false: nothing to wait for instead
    assert "studio_gated.second" not in sys.modules
    stack.busy.clear()  # the user leaves the window alone
    assert stack.done.wait(30) and not stack.failed
    assert sys.modules["studio_gated.second"].LOADED


def _user_leaves_in(seconds: float, stack: types.SimpleNamespace) -> threading.Timer:
    """Were the import to wait for the user, the test ends (and fails) when the user leaves."""
    timer = threading.Timer(seconds, stack.busy.clear)
    timer.start()
    return timer


def test_a_thread_that_needs_the_module_does_not_wait_for_the_user(stack) -> None:
    _warm_up(stack)
    timer = _user_leaves_in(10, stack)
    import studio_gated  # Start pressed: the training thread needs it, the user still at work

    assert stack.busy.is_set(), "it waited for the user"
    timer.cancel()
    assert studio_gated.second.LOADED and stack.done.wait(30) and not stack.failed


def test_a_thread_that_needs_transformers_names_does_not_wait_for_the_user(stack) -> None:
    _warm_up(stack, around=lazy._lock)  # the warm-up inside transformers_names
    timer = _user_leaves_in(10, stack)
    assert lazy.transformers_names() == ()
    assert stack.busy.is_set(), "it waited for the user"
    timer.cancel()
    assert stack.done.wait(30) and not stack.failed


def test_other_threads_import_as_before(stack) -> None:
    lazy._install_import_hook()
    stack.busy.set()  # the user at work: only a thread that steps aside waits for that
    import studio_gated

    assert studio_gated.second.LOADED


def test_an_import_made_by_a_finder_never_waits_for_the_user(stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finder runs holding Python's global import lock: waiting there would make every thread's next
    import wait for the user, the window's thread among them (seen: the memory estimate's page froze
    0.5 s looking up which optional libraries are installed)."""
    import importlib.util

    in_finder = threading.Event()

    class Finder:
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "studio_probe_module":
                stack.busy.set()  # the user acts just then
                in_finder.set()
                import studio_gated_gate  # noqa: F401  (an import statement under the global lock)
            return None

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])

    def run() -> None:
        with lazy.stepping_aside(stack.busy.is_set), pytest.raises(ImportError):
            import studio_probe_module  # noqa: F401
        stack.done.set()

    threading.Thread(target=run, daemon=True).start()
    assert in_finder.wait(30)
    timer = _user_leaves_in(10, stack)
    assert importlib.util.find_spec("studio_no_such_module") is None  # the window's look-up
    assert stack.busy.is_set(), "it waited for the user"
    timer.cancel()
    assert stack.done.wait(30)


def _printed_by(code: str) -> list[str]:
    """What ``code`` prints, word by word, run in a fresh process (its modules not yet imported)."""
    import subprocess

    run = [sys.executable, "-c", code]
    return subprocess.run(run, capture_output=True, text=True, timeout=120, check=True).stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loader is used on Linux only")
def test_compiled_modules_load_their_library_when_made_not_when_found() -> None:
    """Found under Python's global import lock, loaded (100-350 ms for PyTorch's) only once the module
    is made, with no lock of Python's held: a look-up by the window's thread never waits for it."""
    code = (
        "import importlib.util, sys\n"
        "from desktop.core.system.lazy import load_extensions_without_gil\n"
        "load_extensions_without_gil()\n"
        "spec = importlib.util.find_spec('_lzma')\n"
        "mapped = lambda: spec.origin in open('/proc/self/maps').read()\n"
        "found_only = mapped()\n"
        "import _lzma, lzma\n"
        "loader = type(_lzma.__loader__).__name__\n"
        "print(found_only, mapped(), loader, lzma.decompress(lzma.compress(b'ok')))\n"
    )
    assert _printed_by(code) == ["False", "True", "_LibraryLoader", "b'ok'"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loader is used on Linux only")
def test_a_compiled_module_is_not_set_up_while_the_user_is_back_from_its_load() -> None:
    """Its library loaded (seconds, from a cold disk) while the user came back: the module's set-up,
    one C call that holds Python's lock (PyTorch's 60-95 ms), waits until the user leaves again."""
    code = (
        "import importlib.util, threading\n"
        "from desktop.core.system import lazy\n"
        "lazy.load_extensions_without_gil()\n"
        "spec = importlib.util.find_spec('_lzma')\n"
        "calls, asked, away = [], threading.Event(), threading.Event()\n"
        "def busy():\n"
        "    calls.append(1)\n"
        "    if len(calls) == 1:\n"
        "        return False  # at the import statement: the user is away\n"
        "    asked.set()\n"
        "    return not away.is_set()  # after the load: back\n"
        "def warm_up():\n"
        "    with lazy.stepping_aside(busy):\n"
        "        import _lzma\n"
        "thread = threading.Thread(target=warm_up)\n"
        "thread.start()\n"
        "waited = asked.wait(10)\n"
        "print(waited, spec.origin in open('/proc/self/maps').read(), lazy.imported('_lzma'))\n"
        "away.set()\n"
        "thread.join(30)\n"
        "print(lazy.imported('_lzma'))\n"
    )
    assert _printed_by(code) == ["True", "True", "False", "True"]  # loaded, not set up; then set up
