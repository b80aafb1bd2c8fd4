"""``python -m desktop`` starts the desktop app."""

import sys

from desktop.app import main

sys.exit(main())
