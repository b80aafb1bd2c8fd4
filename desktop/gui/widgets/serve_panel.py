"""Serve the model on the page at a local, OpenAI-compatible endpoint: who may connect, the port,
Start and Stop, then the address, the model's name, code that calls it and a log of the requests.

The panel drives a controller-like object (:class:`~desktop.gui.controllers.serve_controller.ServeController`
or a fake with its signals and methods), which the page hands it: widgets never import a controller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.shared_ui import sentences

LOCAL_HOST = "127.0.0.1"
NETWORK_HOST = "0.0.0.0"
LOG_LINES = 50
"""Requests kept in the log."""
CODE_LINES = 10
"""Lines a snippet shows without scrolling."""


def copy_text(text: str) -> None:
    """Put ``text`` on the clipboard."""
    QGuiApplication.clipboard().setText(text)


class CopyRow(QWidget):
    """A read-only, selectable line and a Copy button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = QLineEdit(readOnly=True)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.clicked.connect(lambda: copy_text(self.edit.text()))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.copy_button)

    def set_text(self, text: str) -> None:
        self.edit.setText(text)
        self.edit.setCursorPosition(0)


class CodeView(QWidget):
    """A snippet in monospace, selectable, with a Copy button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.code = QLabel()
        self.code.setObjectName("code")
        self.code.setTextFormat(Qt.TextFormat.PlainText)
        self.code.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidget(self.code)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        # most of the longest snippet (Python, streaming a chat) shows; the rest scrolls, Copy takes all
        scroll.setMinimumHeight(self.code.fontMetrics().lineSpacing() * CODE_LINES + 24)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.clicked.connect(lambda: copy_text(self.code.text()))
        buttons = QHBoxLayout()
        buttons.addStretch()
        buttons.addWidget(self.copy_button)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(scroll, 1)
        box.addLayout(buttons)


def reads_pictures(model: Path) -> bool:
    """Whether ``model`` (a run folder or a model folder) is a vision-language model, whose requests may
    hold pictures."""
    from desktop.core.results.predict import model_folder
    from desktop.core.results.tryit import inspect_folder
    from desktop.core.system.errors import StudioError

    try:
        return inspect_folder(*model_folder(model)).task == "vision-chat"
    except (StudioError, OSError, ValueError):  # no model there (yet): said when it is served
        return False


class ServePanel(QWidget):
    """Serves the model :meth:`set_model` names through ``controller`` (its signals drive the panel)."""

    def __init__(self, controller: QObject, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller: Any = controller
        self.model: Path | None = None
        self.device = ""
        self._next_key: Any = None  # a key made with "New key", used at the next start
        self._model_changed = False
        self.model_label = QLabel(self.tr("No model yet: train one, or open a model folder."))
        self.model_label.setWordWrap(True)
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.local_radio = QRadioButton(self.tr("This computer only"), checked=True)
        self.network_radio = QRadioButton(self.tr("Other computers on my network (needs an API key)"))
        self._hosts = QButtonGroup(self)
        self._hosts.addButton(self.local_radio)
        self._hosts.addButton(self.network_radio)
        self.network_radio.toggled.connect(self._on_network_radio_toggled)
        self.network_warning = QLabel(
            self.tr(
                "Anyone on your network who has the key can use the model; your firewall may ask "
                "whether to let them connect."
            )
        )
        self.network_warning.setObjectName("warning")
        self.network_warning.setWordWrap(True)
        self.network_warning.setVisible(False)
        self.new_key_button = QPushButton(self.tr("New key"))
        self.new_key_button.setToolTip(
            self.tr("Replace the API key; the new one is used from the next start")
        )
        self.new_key_button.setVisible(False)
        self.new_key_button.clicked.connect(self.renew_key)
        self.origins_edit = QLineEdit()
        self.origins_edit.setPlaceholderText(self.tr("none (e.g. http://localhost:3000)"))
        self.origins_edit.setToolTip(
            self.tr(
                "Only for a front end that runs in your browser and calls the server from the page "
                "itself. Any other web page you visit is refused, so that it cannot use your model. "
                "Separate several with spaces."
            )
        )
        self.hosts_edit = QLineEdit()
        self.hosts_edit.setPlaceholderText(self.tr("none (e.g. my-pc.local)"))
        self.hosts_edit.setToolTip(
            self.tr(
                "Requests must be addressed to this computer by a name it knows (localhost, its "
                "addresses). Add a name you use for it, such as a proxy's. Separate several with spaces."
            )
        )
        self.pictures_check = QCheckBox(self.tr("Fetch pictures that requests give by web address"))
        self.pictures_check.setToolTip(
            self.tr(
                "Off: requests send their pictures as data URLs, or as files on this computer when it "
                "serves this computer only. On: the server downloads any http(s) address a request names, "
                "so a request can make it connect anywhere."
            )
        )
        self.pictures_check.setVisible(False)  # a vision-language model's option only
        self.port_box = QSpinBox(minimum=0, maximum=65535, value=8000)
        self.port_box.setSpecialValueText(self.tr("any free port"))
        self.port_box.setToolTip(self.tr("0 takes any free port"))
        self.start_button = QPushButton(self.tr("Start"))
        self.start_button.setObjectName("primary")
        self.start_button.setEnabled(False)
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QToolButton(text=self.tr("Details"), checkable=True)
        self.details_button.setVisible(False)
        self.details = QPlainTextEdit(readOnly=True)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self.details.setVisible)

        settings = QFormLayout()
        settings.addRow(self.tr("Model:"), self.model_label)
        who = QVBoxLayout()
        who.addWidget(self.local_radio)
        network_row = QHBoxLayout()
        network_row.addWidget(self.network_radio)
        network_row.addWidget(self.new_key_button)
        network_row.addStretch()
        who.addLayout(network_row)
        who.addWidget(self.network_warning)
        settings.addRow(self.tr("Who can connect:"), who)
        port_row = QHBoxLayout()
        port_row.addWidget(self.port_box)
        port_row.addStretch()
        settings.addRow(self.tr("Port:"), port_row)
        settings.addRow(self.tr("Web pages that may use it:"), self.origins_edit)
        settings.addRow(self.tr("Other names for this computer:"), self.hosts_edit)
        settings.addRow("", self.pictures_check)
        run_row = QHBoxLayout()
        run_row.addWidget(self.start_button)
        run_row.addWidget(self.stop_button)
        self.busy = QProgressBar()  # while the server starts and the model loads
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        run_row.addWidget(self.busy)
        run_row.addWidget(self.status, 1)
        run_row.addWidget(self.details_button)
        self.connect_box = self._build_connect_box()
        layout = QVBoxLayout(self)
        layout.addLayout(settings)
        layout.addLayout(run_row)
        layout.addWidget(self.details)
        layout.addWidget(self.connect_box, 1)
        layout.addStretch(0)
        self.connect_box.setVisible(False)

        controller.loading_started.connect(self._on_controller_loading_started)
        controller.server_ready.connect(self._on_controller_server_ready)
        controller.request_answered.connect(self._on_controller_request_answered)
        controller.server_failed.connect(self._on_controller_server_failed)
        controller.port_taken.connect(self._on_controller_port_taken)
        controller.server_stopped.connect(self._on_controller_server_stopped)
        controller.running_changed.connect(self._on_controller_running_changed)

    def _build_connect_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Connect"))
        self.url_row = CopyRow()
        self.name_row = CopyRow()
        self.key_row = CopyRow()
        self.key_note = QLabel()
        self.key_note.setObjectName("hint")
        self.key_note.setWordWrap(True)
        self.remote_label = QLabel()
        self.remote_label.setWordWrap(True)
        self.remote_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow(self.tr("Base URL:"), self.url_row)
        form.addRow(self.tr("Model name:"), self.name_row)
        self.key_box = QWidget()
        key_layout = QVBoxLayout(self.key_box)
        key_layout.setContentsMargins(0, 0, 0, 0)
        key_layout.addWidget(self.key_row)
        key_layout.addWidget(self.key_note)
        form.addRow(self.tr("API key:"), self.key_box)
        self._connect_form = form
        self.curl_view = CodeView()
        self.python_view = CodeView()
        self.snippet_tabs = QTabWidget()
        self.snippet_tabs.addTab(self.curl_view, "curl")
        self.snippet_tabs.addTab(self.python_view, "Python")
        self.request_log = QPlainTextEdit(readOnly=True)
        self.request_log.setObjectName("requestLog")
        self.request_log.setMaximumBlockCount(LOG_LINES)
        self.request_log.setPlaceholderText(self.tr("Requests appear here as they are answered."))
        self.request_log.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.request_log.setMinimumWidth(self.request_log.fontMetrics().averageCharWidth() * 36)
        log_column = QVBoxLayout()
        log_column.addWidget(QLabel(self.tr("Requests:")))
        log_column.addWidget(self.request_log, 1)
        below = QHBoxLayout()  # the code beside the log: both in view on a laptop screen
        below.addWidget(self.snippet_tabs, 3)
        below.addLayout(log_column, 2)
        layout = QVBoxLayout(box)
        layout.addLayout(form)
        layout.addWidget(self.remote_label)
        layout.addLayout(below, 1)
        return box

    def set_model(self, model: str | Path | None) -> None:
        """Serve ``model`` (a run folder or a model folder) from the next start; a server that runs for
        another model is stopped."""
        model = Path(model) if model else None
        if model == self.model:
            return
        self.model = model
        self.model_label.setText(
            str(model) if model else self.tr("No model yet: train one, or open a model folder.")
        )
        self.pictures_check.setVisible(model is not None and reads_pictures(model))
        if self.controller.is_running():
            self._model_changed = True
            self.controller.stop()
        else:
            self._show_status("")  # what was said was about the last model
        self._update_buttons()

    def host(self) -> str:
        """The address the server listens on: this computer only, or every network."""
        return NETWORK_HOST if self.network_radio.isChecked() else LOCAL_HOST

    def allowed(self) -> tuple[list[str], list[str]] | None:
        """The names and the web pages typed (``None``, said in the status line, when one typed is not
        a web page's origin)."""
        from desktop.core.serving.guard import origin_of

        origins = []
        for typed in self.origins_edit.text().replace(",", " ").split():
            origin = origin_of(typed)
            if origin is None:
                self._show_status(
                    self.tr(
                        "{value} is not a web page's origin: write it as scheme://host:port, e.g. "
                        "http://localhost:3000 (no path)."
                    ).format(value=typed)
                )
                self.origins_edit.setFocus()
                return None
            origins.append(origin)
        return self.hosts_edit.text().replace(",", " ").split(), origins

    def start(self) -> None:
        """Start serving the model with the chosen host, port, names and web pages."""
        if self.model is None or self.controller.is_running():
            return
        allowed = self.allowed()
        if allowed is None:
            return
        self._show_key(None)
        key = ""
        if self.host() == NETWORK_HOST:
            from desktop.core.serving.keys import api_key

            issued, self._next_key = self._next_key or api_key(renew=False), None
            key = issued.value
            if issued.new:
                self._show_key(issued)
        self._model_changed = False
        self.request_log.clear()
        self._show_status(self.tr("Starting the server…"))
        hosts, origins = allowed
        remote = not self.pictures_check.isHidden() and self.pictures_check.isChecked()
        self.controller.start(self.model, self.host(), self.port_box.value(), key, hosts, origins, remote)

    def stop(self) -> None:
        """Stop the server; the model's memory is freed."""
        if self.controller.is_running():
            self._show_status(self.tr("Stopping…"))
            self.stop_button.setEnabled(False)
            self.controller.stop()

    def renew_key(self) -> None:
        """Make a new key (kept in the keyring); it replaces the old one from the next start."""
        from desktop.core.serving.keys import api_key

        self._next_key = api_key(renew=True)
        if self.connect_box.isVisible():
            self._show_key(self._next_key, next_start=True)
        else:
            self._show_status(self.tr("A new API key was made: it is shown when the server starts."))

    def shutdown(self) -> None:
        """The app quits: the server ends with it."""
        self.controller.shutdown()

    def _show_key(self, key: Any, next_start: bool = False) -> None:
        """Show a new key this once (``None`` hides it), and whether the keyring keeps it."""
        shown = key is not None
        self.key_row.set_text(key.value if shown else "")
        self.key_row.setVisible(shown)
        if shown:
            kept = (
                self.tr("Shown this once; it is kept in your OS keyring.")
                if key.kept
                else self.tr(
                    "Shown this once; it is not kept (no OS keyring): a new key is made at each start."
                )
            )
            used = self.tr("It is used from the next start.") if next_start else ""
            self.key_note.setText(sentences(kept, used))

    def _show_status(self, text: str, details: str = "") -> None:
        self.status.setText(text)
        self.details.setPlainText(details)
        self.details_button.setVisible(bool(details))
        if not details:
            self.details_button.setChecked(False)

    def _update_buttons(self) -> None:
        running = self.controller.is_running()
        self.start_button.setEnabled(self.model is not None and not running)
        self.stop_button.setEnabled(running)
        # A new key while serving would hide the one the server uses: it is made between runs.
        settings = (self.local_radio, self.network_radio, self.port_box, self.origins_edit, self.hosts_edit)
        for widget in (*settings, self.new_key_button):  # what the running server was started with
            widget.setEnabled(not running)
        self.busy.setVisible(running and not self.connect_box.isVisible())

    @Slot(bool)
    def _on_network_radio_toggled(self, network: bool) -> None:
        self.network_warning.setVisible(network)
        self.new_key_button.setVisible(network)

    @Slot(bool)
    def _on_controller_running_changed(self, running: bool) -> None:
        if running:
            self.connect_box.setVisible(False)
        self._update_buttons()

    @Slot(str)
    def _on_controller_loading_started(self, folder: str) -> None:
        self._show_status(self.tr("Loading the model…"))

    @Slot(dict)
    def _on_controller_server_ready(self, event: dict) -> None:
        from desktop.core.serving.keys import KEY_ENV
        from desktop.core.serving.snippets import snippets

        base_url, model, keyed = str(event["base_url"]), str(event["model"]), bool(event.get("keyed"))
        self.device = str(event.get("device", ""))
        self._show_status(self.tr("Serving at {url}").format(url=base_url))
        self.url_row.set_text(base_url)
        self.name_row.set_text(model)
        self._connect_form.setRowVisible(self.key_box, keyed)
        if keyed and not self.key_row.edit.text():
            self.key_note.setText(
                self.tr(
                    "Requests need the API key shown when it was made; if it is lost, New key makes "
                    "another for the next start."
                )
            )
        remote = []
        if keyed:
            remote.append(
                self.tr(
                    "The examples read the key from the environment variable {env}: set it first."
                ).format(env=KEY_ENV)
            )
        if self.host() == NETWORK_HOST:
            from desktop.core.serving.addresses import lan_addresses

            port, addresses = event.get("port"), lan_addresses()
            remote.append(
                self.tr("From other computers: {urls}").format(
                    urls=", ".join(f"http://{address}:{port}/v1" for address in addresses)
                )
                if addresses
                else self.tr("Other computers use this computer's address in place of 127.0.0.1.")
            )
        self.remote_label.setText("\n".join(remote))
        self.remote_label.setVisible(bool(remote))
        code = snippets(base_url, model, str(event.get("task", "")), keyed, bool(event.get("chat", True)))
        self.curl_view.code.setText(code["curl"])
        self.python_view.code.setText(code["python"])
        self.connect_box.setVisible(True)
        self.busy.setVisible(False)

    @Slot(dict)
    def _on_controller_request_answered(self, event: dict) -> None:
        line = self.tr("{method} {path} {status} {seconds:.2f} s").format(
            method=event.get("method", ""),
            path=event.get("path", ""),
            status=event.get("status", ""),
            seconds=float(event.get("seconds", 0.0)),
        )
        self.request_log.appendPlainText(line)

    @Slot(str, str, str)
    def _on_controller_server_failed(self, message: str, hint: str, details: str) -> None:
        self._end_serving()
        self._show_status(sentences(message, hint), details)

    @Slot()
    def _on_controller_port_taken(self) -> None:
        self.port_box.setFocus()  # where the user changes it
        self.port_box.selectAll()

    @Slot()
    def _on_controller_server_stopped(self) -> None:
        self._end_serving()
        if self._model_changed:
            self._show_status(self.tr("Stopped: the page now shows another model. Start to serve it."))
        elif self.device.startswith("cuda"):
            self._show_status(self.tr("Stopped — the GPU memory is free again."))
        else:
            self._show_status(self.tr("Stopped — the model's memory is free again."))
        self._model_changed = False

    def _end_serving(self) -> None:
        self.busy.setVisible(False)
        self.connect_box.setVisible(False)
        self._show_key(None)  # a key is shown once, while the server it was made for runs
        self.device = ""
