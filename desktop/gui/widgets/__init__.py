"""The parts pages, dialogs and the window are made of: pickers, plots, bars, panels, badges, menus.

A widget may use other widgets, dialogs (a picker opens its browser, a panel the model sources),
app_support (background tasks), core and shared_ui; never a page, a controller or the main window
(contracts in pyproject.toml). A widget reports what the user asked for as signals; the page that
composes it writes the run config.
"""
