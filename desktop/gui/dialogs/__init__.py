"""Windows the user opens on top of the wizard: run history, the model browser, model sources.

A dialog may use widgets, app_support, core and shared_ui; never a page or the main window.
"""
