"""What a run is asked to do: the run config and the choices that shape its memory and speed.

Owns the run config, a tree of dataclasses saved as TOML with its validation (``config``), its
sections and the choices their fields allow (``config_sections``), the Memory & speed options and
what this machine can do (``options``), the presets and auto-fit (``presets``), and the memory
estimate, a documented sum of terms (``memory``).

May use: ``desktop.core.system``. Nothing here reads data, reaches a hub or trains.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "config",
    "config_sections",
    "memory",
    "options",
    "presets",
]
