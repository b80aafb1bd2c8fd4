"""The README's screenshots of image classification (:mod:`desktop.gui.app_support.screenshots` takes
the others and hands over its ``grab`` and ``wait_for``): the only ones of a real run, a tiny ViT made
on the spot (random weights, nothing downloaded) trained on the bundled shapes for a few seconds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.settings.config import RunConfig
    from desktop.gui.main_window import MainWindow


def pictures(
    window: MainWindow,
    tmp: Path,
    out: Path,
    suffix: str,
    grab: Callable[[MainWindow, int, Path], Path],
    wait_for: Callable[[object], None],
) -> list[Path]:
    """Image classification on the bundled shapes (a folder of class folders): Model & data with the
    pictures as thumbnails; then a tiny ViT trained on them for a few seconds (made here with random
    weights: nothing is downloaded), its evaluation's wrong pictures, and Try it with a picture given."""
    from desktop.core.settings.config import RunConfig
    from desktop.core.system.paths import resources_dir

    shapes = resources_dir() / "samples" / "shapes"
    config = RunConfig(task="image-classification")
    config.model.name = str(_tiny_vit(tmp / "tiny-vit"))
    config.data.files = [str(shapes)]
    config.output.runs_dir = str(tmp / "runs")
    window.set_config(config)
    wait_for(window.data_page.preview_loaded)
    window.statusBar().clearMessage()  # "Sample loaded: English reviews…" is not these pictures
    files = [grab(window, 1, out / f"2c-model-and-data-pictures{suffix}.png")]
    _picture_run(window, window.current_config())
    export = window.export_page
    export.evaluation.show_errors()
    files.append(grab(window, 4, out / f"5h-export-evaluation-pictures{suffix}.png"))
    panel = export.try_it
    export.tabs.setCurrentWidget(panel)
    panel.picture.set_picture(min((shapes / "triangle").glob("*.png")))
    wait_for(panel.answered)
    files.append(grab(window, 4, out / f"5g-export-try-a-picture{suffix}.png"))
    return files


def _tiny_vit(folder: Path) -> Path:
    """A 2-layer ViT for 32 x 32 pictures (4 x 4 patches) with ImageNet's 1,000 classes (a run replaces
    the head) and its image processor: a stand-in for a hub checkpoint."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    torch.manual_seed(0)  # the same weights, so the same run and pictures, every time
    config = ViTConfig(
        image_size=32,
        patch_size=4,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1000,
    )
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def _picture_run(window: MainWindow, config: RunConfig) -> None:
    """Train ``config`` for real (450 steps of the tiny ViT, the pictures varied: seconds on a CPU) and
    show it on Export."""
    from desktop.core.training.run import run_training

    training = config.training
    training.max_steps, training.learning_rate, training.batch_size = 450, 2e-3, 16
    training.logging_steps = 50
    training.save_steps = training.eval_steps = 450  # one evaluation, at the end: the model is the last step
    config.images.augment = True
    result = run_training(config, lambda event: None)
    if result.status != "finished":
        raise RuntimeError(f"the pictures' run did not finish: {result.failure}")
    window.export_page.show_result(result)
