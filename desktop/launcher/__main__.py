"""``python -m desktop.launcher``, and the frozen launcher's entry point."""

import sys

from desktop.launcher.main import main

if __name__ == "__main__":
    sys.exit(main())
