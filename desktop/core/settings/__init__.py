"""What a run is asked to do: the run config and the choices that shape its memory and speed.

Owns the run config, a tree of dataclasses saved as TOML with its validation (``config``), its
sections and the choices their fields allow (``config_sections``), the Memory & speed options and
what this machine can do (``options``), the presets and auto-fit (``presets``), and the memory
estimate, a documented sum of terms (``memory``).

May use: ``desktop.core.system``. Nothing here reads data, reaches a hub or trains.
"""
