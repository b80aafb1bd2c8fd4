"""Whether a window can open on this Linux desktop, and in one sentence why not.

Two things stop Qt before it shows anything, and both used to end a first start in a vanished window
and a runtime set up again: a ``DISPLAY`` that is set but has no X server behind it (an SSH session
with a stale variable, a desktop that logged out), and a missing system library of Qt's X11 platform
plugin (``libxcb-cursor0`` above all: Qt 6.5 and later need it and many minimal installs lack it).
The launcher says which before it opens a window or starts the app, ``install.sh`` before it
installs (through ``FinetuneStudio --check-display``), and the README says the same.

Standard library only (the frozen launcher has nothing else), and nothing here loads Qt.
"""

from __future__ import annotations

import ctypes.util
import os
import re
import socket
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from desktop.core.system.messages import msg

QT_XCB_LIBRARIES = {
    # library name (as ctypes.util.find_library takes it): (Debian/Ubuntu package, Fedora package)
    "xcb-cursor": ("libxcb-cursor0", "xcb-util-cursor"),
    "xcb-icccm": ("libxcb-icccm4", "xcb-util-wm"),
    "xcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "xcb-image": ("libxcb-image0", "xcb-util-image"),
    "xcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil"),
    "xkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "xcb-shape": ("libxcb-shape0", "libxcb"),
    "xcb-randr": ("libxcb-randr0", "libxcb"),
    "xcb-xkb": ("libxcb-xkb1", "libxcb"),
}
"""The system libraries Qt 6's X11 platform plugin (``libqxcb.so``) loads, beside libxcb itself."""

CONNECT_TIMEOUT_S = 2.0
SOCKET_DIR = "/tmp/.X11-unix"


def system_library(name: str) -> str | None:
    """The system's copy of library ``name`` (``xcb-cursor``), from one read of the linker's cache
    (``ldconfig -p``) for all the names, or, without ldconfig, ctypes' search."""
    global _CACHE
    if _CACHE is None:
        try:
            listing = subprocess.run(
                ["ldconfig", "-p"],
                capture_output=True,
                text=True,
                timeout=5,
                env={"LC_ALL": "C", "PATH": _PATH},
            ).stdout
            _CACHE = {line.split()[0] for line in listing.splitlines()[1:] if line.strip()}
        except (OSError, subprocess.SubprocessError):
            _CACHE = set()
    if not _CACHE:
        return ctypes.util.find_library(name)
    return next((found for found in _CACHE if found.startswith(f"lib{name}.so")), None)


_CACHE: set[str] | None = None
_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"


def missing_libraries(find: Callable[[str], str | None] = system_library) -> list[str]:
    """The packages (Debian names) of Qt's X11 libraries that the system lacks."""
    return [debian for name, (debian, _fedora) in QT_XCB_LIBRARIES.items() if not find(name)]


def install_command(packages: list[str], os_release: str | None = None) -> str:
    """The command that installs ``packages`` (Debian names) on this distribution."""
    if os_release is None:
        try:
            os_release = Path("/etc/os-release").read_text(encoding="utf-8")
        except OSError:
            os_release = ""
    ids = " ".join(re.findall(r"^ID(?:_LIKE)?=\"?([^\"\n]*)", os_release, re.MULTILINE)).lower()
    if re.search(r"\b(fedora|rhel|centos|rocky|almalinux)\b", ids):
        fedora = {debian: fedora for debian, fedora in QT_XCB_LIBRARIES.values()}
        return "sudo dnf install " + " ".join(dict.fromkeys(fedora.get(p, p) for p in packages))
    return "sudo apt install " + " ".join(packages)


def display_answers(display: str, connect: Callable[[object, int], bool] | None = None) -> bool:
    """Whether an X server answers at ``display`` (``:0``, ``:1.0``, ``host:10.0``, ``unix:0``)."""
    found = re.fullmatch(r"(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?", display.strip())
    if found is None:
        return False
    connect = connect or _connects
    host, number = found.group("host"), int(found.group("number"))
    if host in ("", "unix"):
        path = f"{SOCKET_DIR}/X{number}"
        # Linux's abstract socket first (what Xorg and Xwayland listen on), then the file.
        return connect("\0" + path, socket.AF_UNIX) or connect(path, socket.AF_UNIX)
    return connect((host, 6000 + number), socket.AF_INET)


def _connects(address: object, family: int) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.connect(address)  # type: ignore[arg-type]
        return True
    except OSError:
        return False


def problem(
    env: Mapping[str, str] | None = None,
    connect: Callable[[object, int], bool] | None = None,
    find: Callable[[str], str | None] = system_library,
    os_release: str | None = None,
) -> tuple[str, str] | None:
    """Why no window can open here (what happened, what to do), or ``None``. Linux with X11 only: a
    Wayland session, an offscreen or other chosen Qt platform, and no display at all (the launcher sets
    up without a window then) are not its business."""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "")
    display = env.get("DISPLAY", "")
    if not display or (platform and not platform.startswith("xcb")):
        return None
    if env.get("WAYLAND_DISPLAY") and not platform:
        return None
    if not display_answers(display, connect):
        return (
            msg(
                "No window can open: DISPLAY is set to {display}, but no X server answers there.",
                display=display,
            ),
            msg(
                "Start Finetune Studio from your desktop session, or unset DISPLAY to set it up without "
                "a window (FinetuneStudio --headless)."
            ),
        )
    missing = missing_libraries(find)
    if missing:
        return (
            msg(
                "No window can open: Qt needs system libraries that are missing ({libraries}).",
                libraries=", ".join(missing),
            ),
            msg(
                "Install them ({command}), then start Finetune Studio again.",
                command=install_command(missing, os_release),
            ),
        )
    return None


QT_PLATFORM_FAILURE = re.compile(
    r"could not (load|connect to display)|qt\.qpa\.(xcb|plugin)|no Qt platform plugin could be initialized",
    re.IGNORECASE,
)
"""What Qt prints when it cannot open a window: an app that stopped with this is told by :func:`problem`."""
