"""What the window's process needs around its windows: background work, warm-up, collector, hooks.

``workers`` is the one helper for background work, ``warmup`` imports heavy libraries while the user
is idle, ``collector`` runs Python's cycle collector on the window's thread, ``import_hook`` makes
PySide6's look at each import cheap, and ``screenshots`` is the screenshot mode
(``python -m desktop --screenshots DIR``).

The first four use only core, shared_ui, Qt and each other, so that every other room may use them
(a contract in pyproject.toml says so). The screenshot mode is the exception: it drives the whole
window through the pages' public methods, and only the app's start-up imports it.
"""
