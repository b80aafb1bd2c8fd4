"""The machine a run will use: its GPUs, its PyTorch build, and making the two fit.

Owns GPU detection through NVML (``gpu``), the PyTorch probe in a child process (``torch_probe``),
the wheel table and the verdict on what is installed (``wheels``), replacing a wrong PyTorch build
(``repair`` in place, or ``swap_request`` to the launcher for its runtime), the report to copy for a
bug report (``diagnostics``) and noticing when Windows pages a run's GPU memory into system memory
(``spill``).

May use: ``desktop.core.system``. The frozen launcher imports this package too, so nothing here
imports a heavy library at module level.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "diagnostics",
    "gpu",
    "llama_install",
    "repair",
    "spill",
    "swap_request",
    "torch_probe",
    "wheels",
]
