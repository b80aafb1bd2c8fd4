"""Windows the user opens on top of the wizard: run history, model browser, sources, a job's shape.

A dialog may use widgets, app_support, core and shared_ui; never a page, a controller or the main
window (contracts in pyproject.toml).
"""
