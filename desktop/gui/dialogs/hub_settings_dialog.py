"""Settings > Model sources: Hugging Face, a mirror, ModelScope or Auto, and the access tokens.

Tokens go to the OS keyring (never a file); the fields show only whether one is saved.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.hub import sources
from desktop.gui.app_support.workers import run_in_background
from desktop.shared_ui import error_text, shown


class HubSettingsDialog(QDialog):
    """Choose where models come from, check which source answers, and keep tokens in the keyring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Model sources"))
        self.setMinimumWidth(560)  # the token fields' hints are read whole, in every language
        self.settings = sources.load_settings()
        self.source = QComboBox()
        for key, label in (
            (sources.AUTO, self.tr("Auto: the fastest that answers")),
            (sources.HUGGING_FACE, self.tr("Hugging Face")),
            (sources.MIRROR, self.tr("A mirror of Hugging Face")),
            (sources.MODELSCOPE, self.tr("ModelScope (魔搭)")),
        ):
            self.source.addItem(label, key)
        self.source.setCurrentIndex(max(0, self.source.findData(self.settings.source)))
        self.mirror = QLineEdit(self.settings.mirror_url)
        self.hf_token = QLineEdit()
        self.ms_token = QLineEdit()
        for field, kind in ((self.hf_token, sources.HUGGING_FACE), (self.ms_token, sources.MODELSCOPE)):
            field.setEchoMode(QLineEdit.EchoMode.Password)
            field.setPlaceholderText(
                self.tr("saved in the system keyring")
                if sources.token(kind)
                else self.tr("for gated models; kept in the system keyring")
            )
        self.check_button = QPushButton(self.tr("Check which sources answer"))
        self.check_button.clicked.connect(self.check)
        self.answers = QLabel()
        self.answers.setObjectName("hint")
        self.answers.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.in_use = QLabel(self._in_use())
        self.in_use.setWordWrap(True)
        self.in_use.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow(self.tr("Download from:"), self.source)
        form.addRow(self.tr("Mirror address:"), self.mirror)
        form.addRow(self.tr("Hugging Face token:"), self.hf_token)
        form.addRow(self.tr("ModelScope token:"), self.ms_token)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.in_use)
        layout.addLayout(form)
        layout.addWidget(self.check_button)
        layout.addWidget(self.answers)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

    def _in_use(self) -> str:
        """Where downloads go now: the saved choice, or the environment's HF_ENDPOINT, which wins."""
        import os

        now = sources.resolve(settings=self.settings)
        label = shown(now.label)
        named = label if now.endpoint.split("://", 1)[-1] in label else f"{label} ({now.endpoint})"
        text = self.tr("In use now: {source}.").format(source=named)
        endpoint = os.environ.get("HF_ENDPOINT", "").rstrip("/")
        if endpoint and now.endpoint == endpoint:
            text += " " + self.tr(
                "HF_ENDPOINT is set in the environment, so it is used for Hugging Face whatever is chosen "
                "below (except a mirror or ModelScope)."
            )
        return text

    def check(self) -> None:
        """Probe every source in the background and say how each answered (Auto remembers the fastest)."""
        self.check_button.setEnabled(False)
        self.answers.setText(self.tr("Asking each source (at most 3 s)…"))
        settings = sources.HubSettings(
            source=self.source.currentData(), mirror_url=self.mirror.text().strip()
        )

        def done(result: object) -> None:
            chosen, probes = result
            lines = [
                self.tr("{name}: answered in {ms} ms").format(name=p.endpoint, ms=round(p.seconds * 1000))
                if p.ok
                else self.tr("{name}: no answer ({why})").format(name=p.endpoint, why=shown(p.problem))
                for p in probes
            ]
            if chosen is not None:
                lines.append(self.tr("Auto uses {source}.").format(source=shown(chosen.label)))
            self.settings.auto_picked, self.settings.auto_picked_at = (
                settings.auto_picked,
                settings.auto_picked_at,
            )
            self.answers.setText("\n".join(lines))
            self.check_button.setEnabled(True)

        run_in_background(
            lambda: sources.pick(settings),
            self,
            done,
            lambda exc, detail: self.answers.setText(error_text(exc)),
        )

    def save(self) -> None:
        self.settings.source = self.source.currentData()
        self.settings.mirror_url = self.mirror.text().strip() or sources.MIRROR_URL
        sources.save_settings(self.settings)
        for field, kind in ((self.hf_token, sources.HUGGING_FACE), (self.ms_token, sources.MODELSCOPE)):
            if field.text().strip() and not sources.set_token(kind, field.text()):
                self.status.setText(
                    self.tr(
                        "There is no usable system keyring, so the token was not saved. "
                        "Set HF_TOKEN / MODELSCOPE_API_TOKEN in the environment instead."
                    )
                )
                return
        self.accept()
