"""GUI-thread objects without a window of their own that own long work and report it as signals.

They are: a training run (``training_controller``), a PyTorch repair (``repair_controller``), the data
page's reading and token counts (``data_check_controller``), writing a job for a cluster
(``job_export_controller``), restarting the app (``restart_controller``) and the local server of
the Export step (``serve_controller``).

A controller may use app_support (background tasks), dialogs (to ask the user), core and shared_ui;
never a page, a widget or the main window (import-linter contracts in pyproject.toml say so). Pages
and tests connect to a controller's signals; a fake with the same signals works.
"""
