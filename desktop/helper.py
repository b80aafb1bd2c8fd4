"""Helper-process entry: ``python -m desktop.helper`` answers the window's questions that need PyTorch.

One JSON request per line on stdin, one answer per line on stdout (see :mod:`desktop.core.helper_process`); it
ends when stdin closes, which is also what happens when the app ends or dies. What libraries print
goes to stderr (the app's ``logs/helper.log``), never between the answers.
"""

from __future__ import annotations

import contextlib
import os
import sys

NICENESS = 10
"""Below the window: answering a question never takes a core from it."""


def main() -> int:
    """Serve until stdin closes; returns the exit code."""
    answers = open(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")  # noqa: SIM115
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(NICENESS)
    from desktop.core.helper_process import serve

    return serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    sys.exit(main())
