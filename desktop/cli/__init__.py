"""The headless front end, ``finetune-studio-cli``: init, train, validate, preview, runs, models, datasets.

The package owns the command line and nothing else: it parses the arguments, calls desktop.core (never Qt
or the window) and prints what happened in the user's language. :func:`main` is what the console script
and ``python -m desktop.cli`` run.
"""

from desktop.cli.parser import main

__all__ = ["main"]
