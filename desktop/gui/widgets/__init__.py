"""The parts pages and dialogs are made of: plots, panels, progress bars, pickers and badges.

A widget may use other widgets, app_support (background tasks), core and shared_ui; never a page,
the main window or a controller. One exception: the download panel opens the model sources dialog
when a gated model asks for a token.
"""
