"""GUI-thread objects without a window that own long work and re-emit it as signals: a training
run (``training_controller``) and a PyTorch repair (``repair_controller``).

A controller may use app_support (background tasks), core and shared_ui; never a widget, a page or
a dialog. Pages and tests connect only to a controller's signals (a fake with the same signals works).
"""
