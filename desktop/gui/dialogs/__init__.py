"""Windows the user opens on top of the wizard: run history, the model browser, model sources, the
shape of a job for a cluster.

A dialog may use widgets, app_support, core and shared_ui; never a page, a controller or the main
window.
"""
