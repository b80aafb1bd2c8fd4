"""The bottom of core: what every other part uses and that knows nothing of models or data.

Owns the app's folders and crash-safe writes (``paths``), messages and errors a user reads
(``messages``, ``errors``), the typed events of a run (``events``), languages and translations
(``language``, ``translations``), child processes, their priority and the GIL switch interval
(``processes``), progress and Cancel (``progress``), graceful stops (``stopping``), keeping the
computer awake (``awake``), one process per folder (``instance``), credentials kept out of sight
(``secrets``), and heavy imports made safely and early (``lazy``, ``heap``, ``readahead``).

May use: the standard library and light third-party packages only; no other package of core.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "awake",
    "data_location",
    "errors",
    "events",
    "heap",
    "instance",
    "language",
    "lazy",
    "messages",
    "paths",
    "processes",
    "progress",
    "readahead",
    "secrets",
    "stopping",
    "translations",
]
