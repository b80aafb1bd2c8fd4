"""The Qt layer: the main window over its rooms (pages, dialogs, widgets, controllers, app_support).

``main_window`` composes the wizard. Below it, by role: ``pages/`` (one module per wizard step),
``dialogs/`` (windows the user opens on top), ``widgets/`` (the parts pages and dialogs are made of),
``controllers/`` (GUI-thread objects without a window that own long work: a run, a repair) and
``app_support/`` (what the process needs around its windows: background tasks, warm-up, the
collector, the import hook, the screenshot mode). Everything here may use ``desktop.core`` and
``desktop.shared_ui``; nothing in core or the command line imports this package.
"""
