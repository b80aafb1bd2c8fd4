"""The wizard's pages, one module per step, and what every page offers the window (``base``).

A page may use the config model, widgets, dialogs, controllers, app_support, core and shared_ui;
never the main window or another page (what two pages share goes through the window, the config
model or a part; a contract in pyproject.toml says so).
"""
