"""Windows' shared-memory fallback seen from NVML and the step times (fakes: no GPU here)."""

from __future__ import annotations

from desktop.core.environment.spill import SpillWatch
from desktop.core.system.events import MemoryEvent, ProgressEvent

GIB = 2**30


def _steps(watch: SpillWatch, seconds_per_step: list[float], start: int = 1, elapsed: float = 0.0) -> float:
    for offset, seconds in enumerate(seconds_per_step):
        elapsed += seconds
        watch.add(ProgressEvent(start + offset, 1000, 0.1, elapsed, None, None, None))
    return elapsed


def _card(watch: SpillWatch, used: float, reserved: float, total: float = 8.0) -> None:
    watch.add(
        MemoryEvent(
            1,
            "cuda:0",
            int(reserved * GIB),
            int(reserved * GIB),
            None,
            GIB,
            int(used * GIB),
            int(total * GIB),
        )
    )


def test_a_full_card_and_steps_eight_times_slower_is_a_spill_on_windows() -> None:
    watch = SpillWatch(windows=True)
    elapsed = _steps(watch, [2.0, 1.0] + [0.5] * 12)  # warm-up, then 0.5 s a step
    _card(watch, used=6.0, reserved=5.5)
    assert watch.spill() is None  # not full
    _steps(watch, [4.0] * 6, start=15, elapsed=elapsed)
    assert watch.spill() is None  # slower, but the card is not full: something else (thermals, another app)
    _card(watch, used=7.95, reserved=7.8)
    found = watch.spill()
    assert found is not None and round(found.slowdown) == 8 and found.total_bytes == 8 * GIB


def test_more_reserved_than_the_card_has_is_a_spill_at_once() -> None:
    watch = SpillWatch(windows=True)
    _card(watch, used=7.9, reserved=9.5)
    found = watch.spill()
    assert found is not None and found.slowdown is None and found.reserved_bytes > found.total_bytes


def test_linux_never_spills_it_fails_with_out_of_memory() -> None:
    watch = SpillWatch(windows=False)
    elapsed = _steps(watch, [0.5] * 14)
    _steps(watch, [4.0] * 6, start=15, elapsed=elapsed)
    _card(watch, used=7.95, reserved=9.5)
    assert watch.spill() is None
