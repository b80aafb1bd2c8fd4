"""The headless front end, ``finetune-studio-cli``: init, train, validate, preview, runs, models, datasets.

The package owns the command line and nothing else: it parses the arguments, calls desktop.core (never
Qt or the window) and prints what happened in the user's language. :func:`main` is what the console
script and ``python -m desktop.cli`` run.

- ``parser``: the argument parser, and ``main``, which turns errors into a sentence and an exit code
- a module per command group, each with ``add_parsers`` and a ``cmd_*`` function per command:
  ``init_command``, ``train_command`` (with ``run_console``, the progress bar of a run),
  ``check_commands`` (validate, preview), ``result_commands`` (export, predict, evaluate),
  ``doctor_command``, ``runs_commands`` (runs, job export), ``hub_commands`` (models, datasets)
- ``common``: exit codes and what several commands share; ``text``: ``say()`` and ``--lang``
"""

from desktop.cli.parser import main

__all__ = ["main"]
