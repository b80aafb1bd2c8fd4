"""The Qt layer: the main window and its rooms (pages, dialogs, widgets, controllers, app_support).

``main_window`` composes the wizard over ``config_model`` (the one run config every page reads and
edits). Below it, by role: ``pages/`` (one module per wizard step), ``dialogs/`` (windows the user
opens on top), ``widgets/`` (the parts pages, dialogs and the window are made of), ``controllers/``
(GUI-thread objects that own long work: a run, a repair, reading the data) and ``app_support/``
(background tasks, warm-up, the collector, the import hook, the screenshot mode). Everything here
may use ``desktop.core`` and ``desktop.shared_ui``; nothing in core or the command line imports this
package. The rules between the rooms are import-linter contracts in pyproject.toml.
"""
