"""Predict on a file: run a trained model over every row of a CSV, TSV, JSONL or Excel file and write
the file back with the predictions added (the label and its probability, or the generated text).

The file keeps its rows, its columns and (CSV / TSV) its encoding: a GBK file from Excel comes back in
GBK. The result is written beside its final name and renamed when complete, so a cancelled or failed
prediction leaves nothing half-written. Progress and Cancel go through :mod:`desktop.core.system.progress`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.data.images import is_image, read_folder, read_picture, resolve_paths
from desktop.core.system.errors import InputError, NoRowsError
from desktop.core.system.messages import msg
from desktop.core.system.progress import report

BATCH = 32
"""Rows classified at a time."""
WRITABLE = (".csv", ".tsv", ".jsonl", ".xlsx")


@dataclass
class Prediction:
    """What :func:`predict_file` wrote.

    Attributes:
        out: The file written.
        rows: Rows predicted.
        column: The column the model read.
        added: The columns added.
        encoding: The encoding of a CSV / TSV written (its input's, where every prediction fits in it).
        notes: What the user should know (an encoding that could not hold the predictions).
        unread: Rows whose picture could not be read (no prediction).
        listed: The rows are pictures listed from a folder (or one picture given alone), not a file's.
    """

    out: Path
    rows: int
    column: str
    added: list[str]
    encoding: str = "utf-8"
    notes: list[str] = field(default_factory=list)
    unread: int = 0
    listed: bool = False

    @property
    def predicted(self) -> int:
        """The rows that got a prediction."""
        return self.rows - self.unread


def default_output(path: str | Path) -> Path:
    """Where predictions on ``path`` go unless the user says: ``NAME.predicted.csv`` beside it (the
    input's type where predictions can be written in it)."""
    path = Path(path)
    suffix = path.suffix.lower() if path.suffix.lower() in WRITABLE else ".csv"
    return path.with_name(f"{path.stem}.predicted{suffix}")


def model_folder(ref: str | Path) -> tuple[Path, Path | None]:
    """The model folder of a run folder (its ``model/``, with its ``config.toml``) or a model folder
    itself (a run's ``model/`` or an exported folder)."""
    ref = Path(ref)
    if (ref / "model").is_dir() and (ref / "config.toml").is_file():
        return ref / "model", ref / "config.toml"
    if ref.name == "model" and (ref.parent / "config.toml").is_file():
        return ref, ref.parent / "config.toml"
    return ref, None


def predict_file(
    model: str | Path,
    path: str | Path,
    out: str | Path,
    column: str = "",
    max_new_tokens: int = 128,
) -> Prediction:
    """Predict every row of ``path`` with ``model`` and write ``out``.

    Args:
        model: A run folder, its ``model/`` folder, or an exported model folder.
        column: The column the model reads; empty: the one the run trained on, else the only text column.
        max_new_tokens: The longest generated answer (causal-LM and sequence-to-sequence).

    Raises:
        InputError: The model, the file or the column cannot be used (nothing is written).
        Cancelled: Cancel was pressed (nothing is written).
    """
    from desktop.core.data.local_files import read_file
    from desktop.core.results.tryit import Playground, inspect_folder

    path, out = Path(path), Path(out)
    if out.suffix.lower() not in WRITABLE:
        raise InputError(
            msg("{file}: predictions are written as CSV, TSV, JSONL or Excel (.xlsx).", file=out.name),
            msg("Give the output file one of those types."),
        )
    if out.resolve() == path.resolve():
        raise InputError(
            msg("The output would replace the input file {file}.", file=path.name),
            msg("Choose another name for the output."),
        )
    check_output(out)
    folder, run_config = model_folder(model)
    info = inspect_folder(folder, run_config)
    one_picture = path.is_file() and is_image(path.name)
    listed = path.is_dir() or one_picture  # pictures, not a file's rows: an image classifier's alone
    if listed and info.task != "image-classification":
        raise InputError(
            msg("{file} is a picture; this model reads a file of rows.", file=path.name)
            if one_picture
            else msg("{folder} is a folder; this model reads a file of rows.", folder=path.name),
            msg(
                "Choose a CSV, TSV, JSONL or Excel file (for a vision-language model: a picture and a "
                "question in each row)."
            ),
        )
    try:
        if path.is_dir():  # an image classifier: every picture in the folder
            table = read_folder(path, labelled=False)
        elif one_picture:
            table = read_picture(path)
        else:  # the cells as written: the output keeps them, the model reads them made full
            table = read_file(path)
    except NoRowsError:
        raise InputError(
            msg("{file} has no rows to predict.", file=path.name),
            msg("Choose the file with the rows to predict: a header line, then one row per text."),
        ) from None
    saved = run_config or folder / "finetune-studio-config.toml"
    pictures = ""
    chats = _chat_columns(table, column, saved) if info.task == "vision-chat" else None
    if info.task == "image-classification":
        column = _picture_column(table, column, saved)
    elif chats is not None:  # conversations (and their pictures' column): each answered next
        column, pictures = chats
    elif info.task == "vision-chat":  # each row's picture, and its question (the column read)
        pictures = _picture_column(table, "", saved)
        column = _text_column([c for c in table.columns if c != pictures], column, saved, info.task)
    else:
        column = _text_column(table.columns, column, saved, info.task)
    texts = ["" if v is None else str(v) for v in table.column(column)] if chats is None else []
    report(0.0, msg("Loading the model"))
    playground = Playground(info)
    playground.load()
    unread: list[int] = []
    try:
        if chats is not None:
            asked = _full_chats(table, column, pictures, path.parent)
            listed_pictures = list(asked[pictures]) if pictures else [None] * len(asked)
            answers = _converse(playground, asked[column], listed_pictures, max_new_tokens, unread)
            added = {"generated": answers}
        elif info.task == "vision-chat":
            sources = _sources(table, pictures, path, listed)
            added = {"generated": _describe(playground, sources, texts, max_new_tokens, unread)}
        elif info.task == "image-classification":
            labels, probabilities = _classify_pictures(
                playground, _sources(table, column, path, listed), unread
            )
            added = {"prediction": labels, "probability": probabilities}
        elif info.task == "classification":
            labels, probabilities = _classify(playground, texts)
            added = {"prediction": labels, "probability": probabilities}
        else:
            added = {"generated": _generate(playground, texts, max_new_tokens)}
    finally:
        playground.release()
    frame = table.frame.copy()
    names = []
    for name, values in added.items():
        unique = name
        while unique in frame.columns:  # a file that already has a "prediction" column keeps it
            unique = f"{unique}_new"
        frame[unique] = values
        names.append(unique)
    result = Prediction(out, len(frame), column, names, unread=len(unread), listed=listed)
    if unread:
        note = (
            msg(
                "{count} of {rows} rows could not be answered (no conversation with a question, or a picture "
                "missing, not a picture, cut short or too large); they have no answer: {where}.",
                count=len(unread),
                rows=len(frame),
                where=table.locate_many(unread),
            )
            if chats is not None
            else msg(
                "{count} of {rows} pictures could not be read (missing, not a picture, cut short or too "
                "large); their rows have no prediction: {where}.",
                count=len(unread),
                rows=len(frame),
                where=table.locate_many(unread),
            )
        )
        if len(unread) == len(frame):  # nothing predicted: an error, and no file of empty cells
            raise InputError(
                note,
                msg(
                    "Check that each row holds a conversation ending in a question, and that its pictures "
                    "are there (a file's paths are read from its own folder) and open in a picture viewer."
                )
                if chats is not None
                else msg(
                    "Check that the pictures are there (a file's paths are read from its own folder) and "
                    "open in a picture viewer."
                ),
            )
        result.notes.append(note)
    _write(frame, path, out, result)
    return result


def _sources(table: Any, column: str, path: Path, listed: bool) -> list[Any]:
    """The pictures a column names, paths made full (relative to the file's folder, as the run read
    them); the table itself keeps the cells as written. Pictures ``listed`` from a folder are full
    already."""
    if listed:
        return list(table.column(column))
    import pandas as pd

    frame = pd.DataFrame({column: list(table.column(column))})
    resolve_paths(frame, path.parent)
    return list(frame[column])


def check_output(out: Path) -> None:
    """Refuse, before any row is read or the model loaded, an output that would land inside a run
    folder (its files are the run's record: ``-o RUN/events.jsonl --force`` replaced its log) or in a
    folder that cannot be written.

    Raises:
        InputError: Where and why, and what to choose instead.
    """
    import tempfile

    from desktop.core.runs.folders import EVENTS_NAME, RunDir

    target = out.resolve()
    for parent in target.parents:
        if RunDir(parent).is_run() and (parent / EVENTS_NAME).is_file():
            raise InputError(
                msg(
                    "{file} is inside the run folder {run}, which holds the run's own record.",
                    file=out,
                    run=parent,
                ),
                msg(
                    "Write the predictions outside it, e.g. {suggestion}.",
                    suggestion=parent.parent / out.name,
                ),
            )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".predict-check-"):
            pass
    except OSError as exc:
        raise InputError(
            msg(
                "Predictions cannot be written to {folder}: {error}",
                folder=target.parent,
                error=exc.strerror or exc,
            ),
            msg("Choose an output file in a folder you can write to."),
        ) from exc


def _text_column(columns: list[str], given: str, saved: Path, task: str) -> str:
    if given:
        if given not in columns:
            raise InputError(
                msg(
                    'The file has no column "{column}"; its columns are: {columns}.',
                    column=given,
                    columns=", ".join(columns),
                ),
                msg("Give one of those columns."),
            )
        return given
    if saved.is_file():
        from desktop.core.settings.config import load_config

        trained = load_config(saved).columns
        for name in (trained.text, trained.source, trained.prompt, trained.instruction):
            if name and name in columns:
                return name
    if len(columns) == 1:
        return columns[0]
    for name in ("text", "sentence", "review", "content", "prompt", "source", "input", "question"):
        if name in columns:
            return name
    raise InputError(
        msg(
            "Which column should the model read? The file's columns are: {columns}.",
            columns=", ".join(columns),
        ),
        msg("Name the column (in the app: Column to read; in the CLI: --column)."),
    )


def _picture_column(table: Any, given: str, saved: Path) -> str:
    """The column that names the pictures: the one given, the one the run trained on, else the only
    one that looks like pictures."""
    from desktop.core.data.images import looks_like_images

    if given:
        return _text_column(table.columns, given, saved, "image-classification")
    if saved.is_file():
        from desktop.core.settings.config import load_config

        trained = load_config(saved).columns.image
        if trained and trained in table.columns:
            return trained
    found = [name for name in table.columns if looks_like_images(list(table.head(50).column(name)))]
    if found:
        return found[0]
    raise InputError(
        msg(
            "No column of the file names pictures; its columns are: {columns}.",
            columns=", ".join(table.columns),
        ),
        msg(
            "Name the column with the pictures' paths (in the CLI: --column), or choose a folder of pictures."
        ),
    )


def _classify_pictures(
    playground: Any, values: list[Any], unread: list[int]
) -> tuple[list[str], list[float | None]]:
    """Each picture's most likely label and its probability, :data:`BATCH` pictures a forward pass (""
    and no probability for a picture that cannot be read, its row added to ``unread``: not a failure of
    the whole file)."""
    from desktop.core.data.images import decode, reading_side, source_of

    side = reading_side(playground.tokenizer)
    labels: list[str] = [""] * len(values)
    probabilities: list[float | None] = [None] * len(values)  # an empty cell, not a score of 0
    for start in range(0, len(values), BATCH):
        report(start / len(values), msg("Predicting: {done} of {rows} rows", done=start, rows=len(values)))
        rows, pictures = [], []
        for row in range(start, min(start + BATCH, len(values))):
            source = source_of(values[row])
            try:
                if source is None:
                    raise FileNotFoundError
                pictures.append(decode(source, at_least=side))
                rows.append(row)
            except Exception:  # missing, not a picture, truncated, huge: counted and named
                unread.append(row)
        if not pictures:
            continue
        try:
            answers: list[Any] = playground.classify_pictures(pictures)
        except Exception:  # one picture the processor cannot take (1 x 1?): the others one at a time
            answers = [_alone(playground, picture) for picture in pictures]
        for row, ranked in zip(rows, answers, strict=True):
            if ranked is None:
                unread.append(row)
            else:
                labels[row], probabilities[row] = ranked[0][0], round(ranked[0][1], 4)
    unread.sort()
    return labels, probabilities


def _alone(playground: Any, picture: Any) -> list[tuple[str, float]] | None:
    """One picture's ranked labels, or ``None`` when the model cannot take it."""
    try:
        return playground.classify_pictures([picture])[0]
    except Exception:
        return None


def _describe(
    playground: Any, values: list[Any], questions: list[str], max_new_tokens: int, unread: list[int]
) -> list[str]:
    """Each row's answer to its question about its picture ("" for a picture that cannot be read, its
    row added to ``unread``; a failure of the model itself, out of memory say, stops the whole file)."""
    from desktop.core.data.images import decode, source_of

    out = []
    for row, (value, question) in enumerate(zip(values, questions, strict=True)):
        report(row / len(values), msg("Predicting: {done} of {rows} rows", done=row, rows=len(values)))
        source = source_of(value)
        try:
            if source is None:
                raise FileNotFoundError
            picture = decode(source)
        except Exception:  # missing, not a picture, truncated, huge: counted and named
            out.append("")
            unread.append(row)
            continue
        out.append(playground.describe(picture, question, max_new_tokens))
    return out


def _chat_columns(table: Any, given: str, saved: Path) -> tuple[str, str] | None:
    """A vision-language file's column of conversations (the one given, the run's, else the first
    that holds conversations) and the column of their pictures ("" when they name their own), or
    ``None`` when the file has no conversations (a picture and a question in each row)."""
    from desktop.core.data.picture_chats import looks_like_picture_chats

    trained = None
    if saved.is_file():
        from desktop.core.settings.config import load_config

        trained = load_config(saved).columns
    if given:  # the column the user named, and only it
        names = [given] if given in table.columns else []
    else:
        first = [trained.messages] if trained and trained.messages in table.columns else []
        names = first + [n for n in table.columns if n not in first]
    for name in names:
        if not looks_like_picture_chats(list(table.head(20).column(name))):
            continue
        others = [c for c in table.columns if c != name]
        for images in ([trained.image] if trained and trained.image else []) + ["images", "image"]:
            if images in others:
                return name, images
        return name, ""
    return None


def _full_chats(table: Any, column: str, pictures: str, folder: Path) -> Any:
    """A copy of the conversations and their pictures' column with the pictures' paths made full
    (relative to the file's folder, as the run read them); the table keeps the cells as written."""
    import pandas as pd

    from desktop.core.data.local_files import full_picture_paths

    frame = pd.DataFrame({name: list(table.column(name)) for name in (column, pictures) if name})
    full_picture_paths(frame, folder)
    return frame


def _converse(playground: Any, values: Any, listed: Any, max_new_tokens: int, unread: list[int]) -> list[str]:
    """Each row's next assistant turn after its conversation's last user turn ("" for a row whose
    conversation cannot be read or whose pictures cannot be, its row added to ``unread``)."""
    from desktop.core.data.images import decode
    from desktop.core.data.picture_chats import parse_picture_chat, question_of

    values, listed = list(values), list(listed)
    out = []
    for row, (value, given) in enumerate(zip(values, listed, strict=True)):
        report(row / len(values), msg("Predicting: {done} of {rows} rows", done=row, rows=len(values)))
        chat = parse_picture_chat(value, given, answered=False)
        asked = question_of(chat) if chat is not None else None
        try:
            if asked is None:
                raise ValueError
            pictures = [decode(source) for source in asked.pictures]
        except Exception:  # no conversation; a picture missing, not a picture, truncated, huge
            out.append("")
            unread.append(row)
            continue
        out.append(playground.converse(asked.messages, pictures, max_new_tokens))
    return out


def _classify(playground: Any, texts: list[str]) -> tuple[list[str], list[float]]:
    import torch

    names = playground.model.config.id2label or {}
    labels: list[str] = []
    probabilities: list[float] = []
    for start in range(0, len(texts), BATCH):
        report(start / len(texts), msg("Predicting: {done} of {rows} rows", done=start, rows=len(texts)))
        batch = playground.tokenizer(
            texts[start : start + BATCH], return_tensors="pt", truncation=True, padding=True
        ).to(playground.device)
        with torch.no_grad():
            probs = torch.softmax(playground.model(**batch).logits.float(), dim=-1)
        best, index = probs.max(dim=-1)
        labels += [str(names.get(i, i)) for i in index.tolist()]
        probabilities += [round(p, 4) for p in best.tolist()]
    return labels, probabilities


def _generate(playground: Any, texts: list[str], max_new_tokens: int) -> list[str]:
    out = []
    for row, text in enumerate(texts):
        report(row / len(texts), msg("Predicting: {done} of {rows} rows", done=row, rows=len(texts)))
        out.append(playground.generate(text, max_new_tokens=max_new_tokens, temperature=0).strip())
    return out


def encoding_of(path: Path) -> str:
    """The encoding a text file is in, as :func:`desktop.core.data.encodings.decode_text` reads it."""
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        raw.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    from desktop.core.data.encodings import guess_encoding

    return guess_encoding(raw) or "utf-8"


def _write(frame: Any, source: Path, out: Path, result: Prediction) -> None:
    """Write ``frame`` to ``out`` through a temporary file in the same folder."""
    report(1.0, msg("Writing {file}", file=out.name))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    suffix = out.suffix.lower()
    if suffix != ".jsonl":  # a CSV's or a workbook's cells are texts
        frame = _cells_as_text(frame)
    try:
        if suffix in (".csv", ".tsv"):
            same_kind = source.suffix.lower() in (".csv", ".tsv", ".txt")
            encoding = encoding_of(source) if same_kind else "utf-8"
            text = frame.to_csv(index=False, sep="\t" if suffix == ".tsv" else ",", lineterminator="\r\n")
            try:
                data = text.encode(encoding)
            except UnicodeEncodeError:
                result.notes.append(
                    msg(
                        "Some predictions do not fit the input's encoding ({encoding}): the file is written "
                        "in UTF-8 with a BOM, which Excel also opens.",
                        encoding=encoding,
                    )
                )
                encoding, data = "utf-8-sig", text.encode("utf-8-sig")
            partial.write_bytes(data)
            result.encoding = encoding
        elif suffix == ".jsonl":  # pandas writes "/" as "\\/": paths come back as they were written
            text = frame.to_json(orient="records", lines=True, force_ascii=False)
            partial.write_text(text.replace("\\/", "/"), encoding="utf-8", newline="")  # "\n", as pandas
        else:
            frame.to_excel(partial, index=False, engine="openpyxl")
        try:
            os.replace(partial, out)
        except PermissionError:  # Windows: the file is open in Excel
            raise InputError(
                msg("{file} cannot be replaced: another program (Excel?) has it open.", file=out.name),
                msg("Close it there, or choose another name for the output."),
            ) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _cells_as_text(frame: Any) -> Any:
    """``frame`` with the cells a CSV or a workbook cannot hold as they are written as text: a
    conversation or a list (a JSONL's or a Parquet's) as JSON, a hub dataset's picture as its path (its
    bytes would fill the file)."""
    import json

    import numpy as np

    def text(value: Any) -> Any:
        if isinstance(value, dict) and "bytes" in value:
            return value.get("path") or ""
        if isinstance(value, (list, dict, np.ndarray)):
            return json.dumps(value, ensure_ascii=False, default=plain)
        return value

    def plain(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return ""
        return value.tolist() if hasattr(value, "tolist") else str(value)

    frame = frame.copy()
    for name in frame.columns:
        if frame[name].dtype == object:
            frame[name] = [text(v) for v in frame[name].tolist()]
    return frame
