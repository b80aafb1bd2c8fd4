"""Notice when Windows has started paging a run's GPU memory into shared system memory.

Since driver 536.40 the NVIDIA driver on Windows does not fail an allocation the card cannot hold: it
places it in system RAM ("CUDA - Sysmem Fallback Policy"), and each step then crawls over PCIe. Nothing
raises; the run just becomes tens of times slower. Two signs, from what a run already reports:

- torch has reserved more memory than the card has (only possible with the fallback), or
- the card is full (NVML) and the steps have become several times slower than they were.

On Linux the driver fails with out-of-memory instead, so there is nothing to detect.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from desktop.core.system.events import MemoryEvent, ProgressEvent

FULL = 0.97
"""The share of the card's memory in use from which it counts as full."""
SLOWER = 3.0
"""How many times slower the recent steps must be than the first ones."""
BASELINE_STEPS = 10
RECENT_STEPS = 5


@dataclass(frozen=True)
class Spill:
    """Evidence of the fallback: how much slower the steps are (``None``: not measured yet)."""

    slowdown: float | None
    reserved_bytes: int | None
    total_bytes: int


def shared_bytes(memory: MemoryEvent, windows: bool) -> int | None:
    """How much of the run's GPU memory is in shared system memory at least, on Windows: what PyTorch
    holds beyond the card's whole memory (NVML reports no per-process shared use; Task Manager's figure
    can be higher, as other programs hold part of the card). ``None`` where it cannot be told."""
    if not windows or memory.reserved_bytes is None or not memory.device_total_bytes:
        return None
    return max(0, memory.reserved_bytes - memory.device_total_bytes)


@dataclass
class SpillWatch:
    """Fed the run's progress and memory events; :meth:`spill` says whether the fallback is under way.

    Args:
        windows: Whether the run is on Windows (elsewhere nothing spills).
    """

    windows: bool = field(default_factory=lambda: sys.platform == "win32")
    _durations: list[float] = field(default_factory=list)
    _last: tuple[int, float] | None = None
    _memory: MemoryEvent | None = None

    def add(self, event: object) -> None:
        """Take a :class:`ProgressEvent` (step times) or a :class:`MemoryEvent` (the card's use)."""
        if isinstance(event, ProgressEvent):
            if self._last is not None and event.step > self._last[0]:
                self._durations.append((event.elapsed_s - self._last[1]) / (event.step - self._last[0]))
            self._last = (event.step, event.elapsed_s)
        elif isinstance(event, MemoryEvent) and event.device_total_bytes:
            self._memory = event

    def spill(self) -> Spill | None:
        """The evidence, or ``None`` while there is none (always ``None`` off Windows)."""
        memory = self._memory
        if not self.windows or memory is None or not memory.device_total_bytes:
            return None
        total = memory.device_total_bytes
        beyond = memory.reserved_bytes is not None and memory.reserved_bytes > total
        full = beyond or (memory.device_used_bytes or 0) >= FULL * total
        slowdown = self.slowdown()
        if beyond or (full and slowdown is not None and slowdown >= SLOWER):
            return Spill(slowdown, memory.reserved_bytes, total)
        return None

    def slowdown(self) -> float | None:
        """Recent steps' time over the first steps' (the first two, warm-up, left out)."""
        first = self._durations[2 : 2 + BASELINE_STEPS]
        if len(first) < 3 or len(self._durations) < 2 + BASELINE_STEPS + RECENT_STEPS:
            return None
        import statistics

        baseline = statistics.median(first)
        recent = statistics.median(self._durations[-RECENT_STEPS:])
        return recent / baseline if baseline > 0 else None
