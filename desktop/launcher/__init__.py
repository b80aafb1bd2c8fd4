"""The small frozen program that the installer ships: it sets up the app's runtime and starts the app.

Only ``runtime`` and ``swap`` (a PyTorch swap the app asked for; no Qt), ``window`` and ``main``
(PySide6 QtCore/QtGui/QtWidgets) and the Qt-free parts of ``desktop.core`` it uses (paths, GPU
detection, the wheel table) are frozen; never torch.
"""
