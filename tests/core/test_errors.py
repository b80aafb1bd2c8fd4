"""The failure catalogue: each known failure gets a diagnosis and, where one exists, a remedy to apply."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from desktop.core.settings.config import RunConfig
from desktop.core.system.errors import diagnose


def _raised_in(function_name: str, exc: BaseException) -> BaseException:
    namespace: dict = {}
    exec(f"def {function_name}(e):\n    raise e\n", namespace)  # a frame with that name in the traceback
    try:
        namespace[function_name](exc)
    except BaseException as caught:
        return caught
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("function", "stage"),
    [
        ("from_pretrained", "while loading the model"),
        ("backward", "in the backward pass"),
        ("optimizer_step", "in the optimizer step"),
        ("evaluation_loop", "during evaluation"),
        ("forward", "in the forward pass"),
    ],
)
def test_out_of_memory_names_the_stage(function: str, stage: str) -> None:
    exc = _raised_in(function, RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"))
    assert diagnose(exc, RunConfig()).reason == f"The GPU ran out of memory {stage}."


def test_out_of_memory_remedies_fit_the_config() -> None:
    config = RunConfig()
    config.training.batch_size, config.training.gradient_accumulation = 1, 4
    config.performance.gradient_checkpointing = True
    config.lora.enabled = True
    labels = [r.label for r in diagnose(RuntimeError("CUDA out of memory"), config).remedies]
    assert labels == [
        "Use the Adafactor optimizer (a fraction of AdamW's state memory)",
        "Shorten sequences (256 -> 128 tokens)",
    ]


@pytest.mark.parametrize(
    ("exc", "kind", "words", "changes"),
    [
        (
            AssertionError("Torch not compiled with CUDA enabled"),
            "cpu_torch",
            "Environment",
            {"performance.precision": "fp32"},
        ),
        (
            ValueError(
                "FP16 Mixed precision training with AMP or APEX (`--fp16`) ... can only be used on CUDA"
            ),
            "cpu_torch",
            "Environment",
            {"performance.precision": "fp32"},
        ),
        (
            ValueError("Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU"),
            "precision",
            "fp16",
            {"performance.precision": "auto"},
        ),
        (
            ImportError("No module named 'bitsandbytes'"),
            "bitsandbytes",
            "standard optimizer",
            {"performance.optimizer": "adamw_torch_fused"},
        ),
        (
            RuntimeError("CUDA error: device-side assert triggered"),
            "device_assert",
            "CUDA_LAUNCH_BLOCKING=1",
            None,
        ),
        (
            AttributeError("Can't pickle local object 'main.<locals>.collate'"),
            "dataloader_workers",
            "0 workers",
            {"performance.dataloader_workers": 0},
        ),
        (OSError(errno.ENOSPC, "No space left on device"), "disk_full", "Free some space", None),
        (
            OSError(
                "[WinError 1455] The paging file is too small for this operation to complete. Error loading "
                '"C:\\rt\\Lib\\site-packages\\torch\\lib\\cudnn_cnn64_9.dll" or one of its dependencies.'
            ),
            "paging_file",
            "Virtual memory",
            {"performance.dataloader_workers": 0},
        ),
    ],
)
def test_known_failures(exc: BaseException, kind: str, words: str, changes: dict | None) -> None:
    found = diagnose(exc, RunConfig())
    assert found.kind == kind and words in found.remedy
    assert (found.remedies[0].changes if found.remedies else None) == changes


def test_a_full_disk_is_found_anywhere_in_the_exception_chain(tmp_path: Path) -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "optimizer.pt"))
        except OSError as inner:
            raise RuntimeError(
                "[enforce fail at inline_container.cc:659] . unexpected pos 64 vs 0"
            ) from inner
    except RuntimeError as exc:
        found = diagnose(exc, RunConfig())
    assert found.kind == "disk_full" and str(tmp_path) in found.reason and " are free there." in found.reason
    writer = RuntimeError("PytorchStreamWriter failed writing file data/3: file write failed")
    assert diagnose(writer, RunConfig()).kind == "disk_full"
    denied = diagnose(PermissionError(errno.EACCES, "Permission denied", "/srv/runs/x"), RunConfig())
    assert denied.kind == "not_writable" and "/srv/runs" in denied.reason


def test_sizes_read_at_a_glance() -> None:
    from desktop.core.system.errors import human_size

    assert [human_size(n) for n in (380 * 1024, 12 * 2**20, 1.44 * 2**30, 80 * 2**30)] == [
        "380 KB",
        "12 MB",
        "1.4 GB",
        "80 GB",
    ]


def test_the_operating_systems_words_become_ours_and_are_kept_as_detail() -> None:
    import errno

    from desktop.core.system.errors import os_error

    missing = os_error(FileNotFoundError(errno.ENOENT, "No such file or directory", "/data/reviews.csv"))
    assert str(missing.message) == "/data/reviews.csv was not found." and "unplugged" in missing.hint
    assert "[Errno 2] No such file or directory" in missing.detail  # one click away, not in the sentence
    busy = os_error(OSError(errno.EBUSY, "Device or resource busy", "out.xlsx"))
    assert "in use by another program" in busy.message and "Excel" in busy.hint
    denied = os_error(PermissionError(errno.EACCES, "Permission denied", "/root/runs/x"))
    assert "may not write" in denied.message and "Permission denied" in denied.detail
    assert os_error(ValueError("not an OS error")) is None
