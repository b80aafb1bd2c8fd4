"""The Qt layer: main window, wizard pages, plots and the threads that run core work."""
