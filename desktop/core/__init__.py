"""Qt-free core: configs, data, models, training and run folders.

Nothing in this package imports Qt, and heavy libraries (torch, transformers, datasets, ...) are
imported inside the functions that need them, so importing ``desktop.core`` stays cheap.
"""
