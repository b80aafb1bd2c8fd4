"""Which process of a multi-process run this is, and the few collective steps the run needs.

``accelerate launch`` (torchrun underneath) starts one worker per GPU and tells each its place in
``RANK`` / ``WORLD_SIZE`` / ``LOCAL_RANK``. The run is the same code on every rank; only rank 0
makes the run folder, writes ``events.jsonl`` and prints events, and all ranks stop at the same
step (a stop seen by any rank is shared, or the others would wait for it forever).
A process started without those variables is a world of one, and every helper here is a no-op.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class World:
    """This process's place among the run's processes."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        """Whether this is rank 0, the process that writes the run folder and reports."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """Whether the run has more than one process."""
        return self.size > 1


def world() -> World:
    """Read this process's place from the launcher's environment variables."""

    def number(name: str, default: int) -> int:
        try:
            return int(os.environ.get(name, default))
        except ValueError:
            return default

    return World(number("RANK", 0), number("WORLD_SIZE", 1), number("LOCAL_RANK", 0))


def start(cpu: bool) -> None:
    """Join the process group (gloo on CPU or on Windows, NCCL on Linux GPUs) before anything else.

    The Trainer would do it when its arguments are made; the run needs it earlier, to share the
    run folder's name. Accelerate's state is shared, so the Trainer later finds it ready.
    """
    if not world().distributed:
        return
    from accelerate import PartialState

    PartialState(cpu=cpu, backend=backend(cpu))


def backend(cpu: bool) -> str | None:
    """gloo on CPU and on Windows (PyTorch has no NCCL there); ``None`` lets Accelerate pick NCCL."""
    import sys

    return "gloo" if cpu or sys.platform == "win32" else None


def share(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (a path, a small object)."""
    if not world().distributed:
        return value
    import torch.distributed as dist

    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def any_rank(flag: bool) -> bool:
    """Whether ``flag`` is true on any rank (every rank must call it at the same point)."""
    if not world().distributed:
        return flag
    import torch
    import torch.distributed as dist

    device = _collective_device()
    value = torch.tensor([1 if flag else 0], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


def barrier() -> None:
    """Wait until every rank got here."""
    if world().distributed:
        import torch.distributed as dist

        dist.barrier()


@contextlib.contextmanager
def main_first() -> Iterator[None]:
    """Rank 0 runs the block first (filling caches, downloading), then the others (reading them)."""
    if not world().distributed:
        yield
        return
    if not world().main:
        barrier()
    yield
    if world().main:
        barrier()


def _collective_device() -> Any:
    import torch
    import torch.distributed as dist

    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
