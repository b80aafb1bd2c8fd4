"""A combo box of config values (``adamw_torch_fused``, ``linear``), each with what it means beside it.

The value stays as the config, the CLI and the docs spell it; the words beside it are in the user's
language ("adamw_torch_fused: fused AdamW, faster on a GPU" / "……融合实现：在 GPU 上更快").
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QComboBox, QWidget

translate = QCoreApplication.translate


def _meanings() -> dict[str, str]:
    """What each value means, by value (a value that means the same in two fields is said once)."""
    return {
        # precision
        "auto": translate("ChoiceCombo", "chosen for this computer"),
        "fp32": translate("ChoiceCombo", "full precision: most memory, slowest"),
        "fp16": translate("ChoiceCombo", "half precision, for older NVIDIA GPUs"),
        "bf16": translate("ChoiceCombo", "half precision, steadier (RTX 30 series and newer)"),
        # optimizer
        "adamw_torch": translate("ChoiceCombo", "AdamW, the usual choice"),
        "adamw_torch_fused": translate("ChoiceCombo", "fused AdamW, faster on a GPU"),
        "adafactor": translate("ChoiceCombo", "least memory; learns a little differently"),
        "adamw_bnb_8bit": translate("ChoiceCombo", "AdamW in 8 bits: a quarter of its memory"),
        "paged_adamw_8bit": translate("ChoiceCombo", "8-bit AdamW that can spill to RAM"),
        # attention
        "sdpa": translate("ChoiceCombo", "PyTorch's fast attention"),
        "eager": translate("ChoiceCombo", "plain, slowest: for debugging"),
        "flash_attention_2": translate("ChoiceCombo", "FlashAttention 2 (needs the flash-attn package)"),
        # compile backend
        "inductor": translate("ChoiceCombo", "fastest code, slow first step"),
        "aot_eager": translate("ChoiceCombo", "checks compilation without speeding up"),
        # GGUF quantization
        # (not "the model as trained": an fp32 model is halved)
        "f16": translate("ChoiceCombo", "16 bits: the largest file, the closest answers"),
        "q8_0": translate("ChoiceCombo", "8 bits: half the size, nearly the same answers"),
        "q4_k_m": translate("ChoiceCombo", "4 bits: a third of the size, made by llama.cpp"),
        # scheduler
        "linear": translate("ChoiceCombo", "falls in a straight line to 0"),
        "cosine": translate("ChoiceCombo", "falls along a cosine curve to 0"),
        "constant": translate("ChoiceCombo", "stays the same"),
        "constant_with_warmup": translate("ChoiceCombo", "rises during warm-up, then stays"),
        "cosine_with_restarts": translate("ChoiceCombo", "cosine curves, starting again"),
        "polynomial": translate("ChoiceCombo", "falls along a polynomial curve"),
        # what picks the best checkpoint
        "loss": translate("ChoiceCombo", "the validation loss, lowest (every task)"),
        "accuracy": translate("ChoiceCombo", "the share classified right, highest (classification)"),
        "macro_f1": translate("ChoiceCombo", "F1 averaged over the classes, highest (classification)"),
    }


class ChoiceCombo(QComboBox):
    """Config values with their meaning; :meth:`value` and :meth:`set_value` speak the values."""

    def __init__(self, values: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        meanings = _meanings()
        for value in values:
            meaning = meanings.get(value, "")
            shown = translate("ChoiceCombo", "{value}: {meaning}").format(value=value, meaning=meaning)
            self.addItem(shown if meaning else value, value)
            self.setItemData(self.count() - 1, shown, Qt.ItemDataRole.ToolTipRole)  # where the box cuts it
        # The closed box shows what fits; the list is as wide as its longest line.
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(16)
        self.view().setMinimumWidth(self.view().sizeHintForColumn(0) + 24)

    def value(self) -> str:
        """The value chosen, as the config spells it."""
        return str(self.currentData())

    def set_value(self, value: str) -> None:
        """Choose ``value`` (one not offered is ignored, as a combo box ignores unknown text)."""
        index = self.findData(value)
        if index >= 0:
            self.setCurrentIndex(index)
