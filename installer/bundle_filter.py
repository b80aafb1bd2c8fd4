"""Which of PySide6's files the frozen launcher keeps, per platform (``build.spec`` applies it).

The launcher shows one QtWidgets window. It needs its platform's windowing plugin (without it Qt
aborts with "no Qt platform plugin" before any window, so the user sees nothing), offscreen and
minimal (tests and ``--smoke``), the native style, the input methods on Linux (ibus, for Chinese
input), and Qt's base translations; every other plugin, on Linux the libraries that only those
plugins pull in, and on Windows Qt's software OpenGL are dropped.
"""

from __future__ import annotations

from pathlib import PurePosixPath

KEEP_PLUGINS = {
    "linux": (
        "platforms/libqxcb",
        "platforms/libqoffscreen",
        "platforms/libqminimal.",
        "platformthemes/libqxdgdesktopportal",
        "platforminputcontexts/",
    ),
    "windows": (
        "platforms/qwindows.",
        "platforms/qoffscreen.",
        "platforms/qminimal.",
        "styles/qmodernwindowsstyle.",  # Qt 6.7+: the Windows 10/11 look
        "styles/qwindowsvistastyle.",  # before 6.7
        "imageformats/qico.",  # the window and taskbar icon
    ),
}
REQUIRED_PLUGINS = {"linux": "platforms/libqxcb", "windows": "platforms/qwindows."}
"""The plugin without which the launcher cannot show anything at all."""

# fmt: off
DROP_LIBS = {
    "linux": (
        "libQt6Network",
        "libQt6Svg",
        "libQt6WaylandClient",
        "libQt6EglFS",
        "libQt6EglFs",
        "libQt6OpenGL",
        "libQt6WlShell",
        "libgssapi_krb5",
        "libkrb5",
        "libk5crypto",
        "libcom_err",
        "libkeyutils",
        "libcairo",
        "libpango",
        "libgdk_pixbuf",
        "libatk",
        "libharfbuzz",
        "libthai",
        "libdatrie",
        "libfribidi",
        "libgraphite2",
        "libpixman",
        "libjpeg",
        "libtiff",
        "libwebp",
        "libgmodule",
        "libgobject",
        "libgio",
        "libmount",
        "libblkid",
        "libselinux",
        "libXrender",
        "libXext",
        "libdeflate",
        "libjbig",
        "libLerc",
        "libsharpyuv",
    ),
    # Qt's software OpenGL (Mesa llvmpipe, 20.6 MB of the 6.11.3 wheel): loaded only when a program asks
    # for OpenGL and the graphics driver has none; the launcher's one QtWidgets window paints without
    # OpenGL. Every other DLL of the Windows wheel is Qt's own, and needed or unused.
    "windows": ("opengl32sw",),
}
# fmt: on
TRANSLATIONS = ("zh_CN", "zh_TW", "ja", "ko", "de", "fr", "es", "ru", "pt_BR")


def keep(dest: str, system: str) -> bool:
    """Whether the bundle keeps the file that PyInstaller would put at ``dest`` (``linux``/``windows``)."""
    dest = dest.replace("\\", "/")
    name = PurePosixPath(dest).name
    if "/plugins/" in dest:
        return any(part in dest for part in KEEP_PLUGINS[system])
    if "/translations/" in dest:
        return name.startswith("qtbase_") and name.removeprefix("qtbase_").removesuffix(".qm") in TRANSLATIONS
    return not (DROP_LIBS[system] and name.startswith(DROP_LIBS[system]))
