"""What the window's process needs around its windows: the one helper for background work
(``workers``), the warm-up of heavy libraries (``warmup``), the cycle collector on the window's thread
(``collector``), PySide6's cheaper import hook (``import_hook``) and the screenshot mode
(``screenshots``).

These modules use only core, shared_ui and Qt, and each other, so every other room may use them.
The screenshot mode is the exception: it drives the whole window (``python -m desktop --screenshots
DIR``) through the pages' public methods, and nothing imports it but the app's start-up.
"""
