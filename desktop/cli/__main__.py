"""``python -m desktop.cli`` runs the command line and exits with its code."""

import sys

from desktop.cli import main

sys.exit(main())
