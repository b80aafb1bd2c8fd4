"""``python -m tests.crashing_worker CONFIG``: the real worker, made to die the way real runs die.

``CRASH`` says how, ``CRASH_STEP`` when: ``abort`` calls ``os.abort()`` at the end of that step (a
fatal error in a native library); ``kill-while-saving`` writes half of that step's checkpoint and
then kills itself with SIGKILL (the out-of-memory killer in the middle of a save); ``raise-on-rank-1``
raises a CUDA error in the second of several processes alone at the end of that step.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def _install() -> None:
    from desktop.core.training.callbacks import EventCallback

    how, step = os.environ["CRASH"], int(os.environ.get("CRASH_STEP", "2"))
    original_step_end = EventCallback.on_step_end

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        original_step_end(self, args, state, control, **kwargs)
        if how == "abort" and state.global_step == step:
            os.abort()
        if how == "raise-on-rank-1" and state.global_step == step and os.environ.get("RANK") == "1":
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    EventCallback.on_step_end = on_step_end
    if how == "kill-while-saving":
        from transformers import Trainer

        original = Trainer._save_checkpoint

        def save_checkpoint(self, model, trial):  # type: ignore[no-untyped-def]
            if self.state.global_step >= step:
                folder = Path(self.args.output_dir) / f"checkpoint-{self.state.global_step}"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "model.safetensors").write_bytes(b"\0" * 1000)  # a torn file, then death
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, model, trial)

        Trainer._save_checkpoint = save_checkpoint


if __name__ == "__main__":
    _install()
    from desktop.worker import main

    sys.exit(main())
