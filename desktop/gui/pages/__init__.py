"""The wizard's pages, one module per step, and what every page offers the window (``base``).

A page may use widgets, dialogs, controllers, app_support, core and shared_ui; never the main window
or another page (what two pages share goes through the window or into a widget).
"""
