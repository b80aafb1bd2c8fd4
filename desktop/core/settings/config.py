"""The run config: one tree of dataclasses that describes a run completely, saved as TOML."""

from __future__ import annotations

import dataclasses
import math
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.core.settings.config_sections import (
    ATTENTIONS,
    BEST_METRICS,
    BUNDLED_MODELS,
    COMPILE_BACKENDS,
    DATA_SUFFIXES,
    HUB_ID,
    METHODS,
    OPTIMIZERS,
    PRECISIONS,
    SCHEDULERS,
    STRATEGIES,
    TASKS,
    Columns,
    DataSource,
    Grpo,
    Images,
    Launch,
    Lora,
    ModelSource,
    Output,
    Performance,
    Preference,
    Training,
    Validation,
    help_field,
)
from desktop.core.system.errors import ConfigError, Problem
from desktop.core.system.messages import msg

# 1.1: [performance] and [lora]; 1.2: [launch]; 1.3: out-of-memory recovery; 1.4: [preference];
# 1.5: [grpo] and columns.answer; 1.6: image-classification, vision-chat, [images] and columns.image
SCHEMA_VERSION = "1.6"


@dataclass
class RunConfig:
    """Everything needed to reproduce a run."""

    schema_version: str = SCHEMA_VERSION
    task: str = help_field(
        "classification, causal-lm, seq2seq, preference, grpo (reasoning with rewards), "
        "image-classification or vision-chat (pictures and text).",
        default="classification",
    )
    model: ModelSource = field(default_factory=ModelSource)
    data: DataSource = field(default_factory=DataSource)
    columns: Columns = field(default_factory=Columns)
    validation: Validation = field(default_factory=Validation)
    training: Training = field(default_factory=Training)
    performance: Performance = field(default_factory=Performance)
    lora: Lora = field(default_factory=Lora)
    preference: Preference = field(default_factory=Preference)
    grpo: Grpo = field(default_factory=Grpo)
    images: Images = field(default_factory=Images)
    output: Output = field(default_factory=Output)
    launch: Launch = field(default_factory=Launch)

    def validate(self) -> list[Problem]:
        """Every problem with this config at once, each naming the field and the fix."""
        return _validate(self)

    def to_toml(self, comments: bool = False) -> str:
        """This config as TOML text, optionally with each field's help as a comment."""
        import tomlkit  # 20-30 ms: when a config is written, not when the app starts

        return tomlkit.dumps(_to_document(self, comments))

    def save(self, path: str | Path, comments: bool = False) -> None:
        """Write the config to ``path`` atomically (never half-written)."""
        from desktop.core.system.paths import atomic_write_text

        atomic_write_text(Path(path), self.to_toml(comments))


# --------------------------------------------------------------------------- TOML in and out


def _to_document(obj: Any, comments: bool) -> Any:
    import tomlkit

    doc = tomlkit.document()
    if comments:
        doc.add(tomlkit.comment("Finetune Studio run config. Empty values are guessed or use defaults."))
    _fill(doc, obj, comments)
    return doc


def _fill(container: Any, obj: Any, comments: bool) -> None:
    import tomlkit

    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            table = tomlkit.table()
            _fill(table, value, comments)
            container.add(f.name, table)
            continue
        if comments and "help" in f.metadata:
            container.add(tomlkit.comment(f.metadata["help"]))
        container.add(f.name, value)


def from_dict(data: dict[str, Any], base_dir: Path | None = None) -> RunConfig:
    """Build a config from parsed TOML, raising :class:`ConfigError` with every problem found.

    Args:
        data: The parsed TOML document.
        base_dir: Folder that relative data and model paths are resolved against.
    """
    problems: list[Problem] = []
    # A hand-written file without a version is read as the current one.
    version = str(data.get("schema_version", SCHEMA_VERSION))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        problems.append(
            Problem(
                "schema_version",
                msg(
                    "this file is version {version}, this app reads {supported}; "
                    "create a new config with `finetune-studio-cli init`.",
                    version=version,
                    supported=SCHEMA_VERSION,
                ),
            )
        )
    config = _build(RunConfig, data, "", problems)
    if problems:
        raise ConfigError(problems)
    config.schema_version = SCHEMA_VERSION
    if base_dir is not None:
        _resolve_paths(config, base_dir)
    return config


def _build(cls: type, data: Any, prefix: str, problems: list[Problem]) -> Any:
    if not isinstance(data, dict):
        problems.append(Problem(prefix.rstrip("."), msg("must be a table ([section]).")))
        return cls()
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            near = _closest(key, known)
            problems.append(
                Problem(
                    prefix + key,
                    msg('unknown field; did you mean "{near}"?', near=near)
                    if near
                    else msg("unknown field."),
                )
            )
    kwargs = {}
    for name in known:
        if name not in data:
            continue
        kind = hints[name]
        if dataclasses.is_dataclass(kind):
            kwargs[name] = _build(kind, data[name], f"{prefix}{name}.", problems)
            continue
        value = _coerce(kind, data[name])
        if value is _BAD:
            problems.append(Problem(prefix + name, _wrong_type(kind, data[name])))
        else:
            kwargs[name] = value
    return cls(**kwargs)


_BAD = object()


def _coerce(kind: Any, value: Any) -> Any:
    value = value.unwrap() if hasattr(value, "unwrap") else value
    if kind is bool:
        return value if isinstance(value, bool) else _BAD
    if kind is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else _BAD
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return float(value) if ok else _BAD
    if kind is str:
        return value if isinstance(value, str) else _BAD
    if typing.get_origin(kind) is list:
        if isinstance(value, str):
            value = [value]
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return list(value) if ok else _BAD
    return value


def _wrong_type(kind: Any, value: Any) -> str:
    """What a field of type ``kind`` must be, as a whole sentence per type."""
    value = repr(value)
    if kind is bool:
        return msg("must be true or false, not {value}.", value=value)
    if kind is int:
        return msg("must be a whole number, not {value}.", value=value)
    if kind is float:
        return msg("must be a number, not {value}.", value=value)
    if kind is str:
        return msg("must be text, not {value}.", value=value)
    return msg("must be a list of texts, not {value}.", value=value)


def _closest(key: str, known: set[str]) -> str:
    import difflib

    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return match[0] if match else ""


def _resolve_paths(config: RunConfig, base: Path) -> None:
    def resolve(p: str) -> str:
        path = Path(p).expanduser()
        return str(path if path.is_absolute() else (base / path).resolve())

    config.data.files = [resolve(p) for p in config.data.files]
    config.validation.files = [resolve(p) for p in config.validation.files]
    name = config.model.name
    if name and not name.startswith("bundled:") and (base / name).is_dir():
        config.model.name = resolve(name)
    if config.output.runs_dir:
        config.output.runs_dir = resolve(config.output.runs_dir)
    if config.grpo.custom_file:
        config.grpo.custom_file = resolve(config.grpo.custom_file)


def load_config(path: str | Path) -> RunConfig:
    """Read a run config from a TOML file; relative paths are taken from the file's folder.

    Raises:
        ConfigError: The file is missing, not TOML, or has fields of the wrong name or type.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError([Problem(str(path), msg("file not found; check the path."))]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([Problem(str(path), msg("cannot be read ({error}).", error=exc))]) from None
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([Problem(str(path), msg("is not valid TOML: {error}.", error=exc))]) from None
    return from_dict(data, base_dir=path.resolve().parent)


def parse_toml(text: str) -> dict[str, Any]:
    """The values of a TOML text (a config as saved), as plain Python values.

    Read with ``tomllib`` rather than tomlkit, which writes configs with their comments: tomlkit reads
    a saved config in 9-12 ms, ``tomllib`` in under 1 ms, and the window reads one when a run is
    resumed, ends or is exported.

    Raises:
        tomllib.TOMLDecodeError: The text is not TOML.
    """
    return tomllib.loads(text)


def with_overrides(config: RunConfig, assignments: list[str], base_dir: Path | None = None) -> RunConfig:
    """Apply ``key=value`` overrides (dotted keys, TOML values; bare words are text).

    Args:
        config: The config to change (it is not modified).
        assignments: ``key=value`` texts.
        base_dir: Folder that relative paths in the overrides are taken from (the config file's
            folder, so ``--set`` means what the same line in the file would mean).

    Raises:
        ConfigError: A key is unknown, a value has the wrong type, or an assignment has no ``=``.
    """
    import tomlkit

    data = tomlkit.parse(config.to_toml()).unwrap()
    problems = []
    for item in assignments:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            problems.append(Problem(item, msg("write overrides as key=value, e.g. training.epochs=2.")))
            continue
        try:
            value = tomlkit.parse(f"v = {raw.strip()}")["v"]
        except tomlkit.exceptions.ParseError:
            value = raw.strip()
        *parents, leaf = key.split(".")
        table = data
        for part in parents:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                problems.append(Problem(key, msg("is not a section.")))
                break
        else:
            table[leaf] = value
    try:
        config = from_dict(data, base_dir=base_dir)
    except ConfigError as exc:
        problems += exc.problems
    if problems:
        raise ConfigError(problems)
    return config


def with_changes(config: RunConfig, changes: dict[str, Any]) -> RunConfig:
    """A copy of ``config`` with ``{"section.field": value}`` changes applied (typed like ``--set``)."""
    import json

    return with_overrides(config, [f"{key}={json.dumps(value)}" for key, value in changes.items()])


# --------------------------------------------------------------------------- validation


def _validate(config: RunConfig) -> list[Problem]:
    problems: list[Problem] = []
    add = lambda f, m: problems.append(Problem(f, m))  # noqa: E731
    if config.task not in TASKS:
        add("task", msg("must be one of {choices}.", choices=", ".join(TASKS)))
    _validate_model(config.model, add)
    _validate_data(config, add)
    _validate_launch(config.launch, add)
    t = config.training
    # inf and nan pass every comparison below the wrong way (nan < 0 is false): name them first.
    infinite = set()
    sections = (("training", t), ("validation", config.validation), ("lora", config.lora))
    for section, values in (*sections, ("preference", config.preference), ("grpo", config.grpo)):
        for name, value in vars(values).items():
            if isinstance(value, float) and not math.isfinite(value):
                add(f"{section}.{name}", msg("must be a finite number, not {value}.", value=value))
                infinite.add(f"{section}.{name}")
    if "training.epochs" not in infinite and t.epochs <= 0 and t.max_steps <= 0:
        add("training.epochs", msg("must be above 0 (or set training.max_steps)."))
    if t.max_steps < 0:
        add("training.max_steps", msg("must be 0 (use epochs) or a positive number of steps."))
    if "training.learning_rate" not in infinite and not 0 < t.learning_rate < 1:
        add("training.learning_rate", msg("must be between 0 and 1; 2e-5 to 5e-4 is usual."))
    if t.scheduler not in SCHEDULERS:
        add("training.scheduler", msg("must be one of {choices}.", choices=", ".join(SCHEDULERS)))
    if t.warmup < 0:
        add("training.warmup", msg("must be 0 or more."))
    if t.weight_decay < 0:
        add("training.weight_decay", msg("must be 0 or more."))
    for name in ("batch_size", "gradient_accumulation", "logging_steps"):
        if getattr(t, name) < 1:
            add(f"training.{name}", msg("must be 1 or more."))
    if t.eval_batch_size < 0:
        add("training.eval_batch_size", msg("must be 0 (the batch size) or more."))
    for name in ("eval_steps", "save_steps"):
        if getattr(t, name) < 0:
            add(f"training.{name}", msg("must be 0 (once per epoch) or a positive number of steps."))
    if t.best_metric not in BEST_METRICS:
        add("training.best_metric", msg("must be one of {choices}.", choices=", ".join(BEST_METRICS)))
    elif t.best_metric != "loss" and config.task != "classification":
        add(
            "training.best_metric",
            msg("must be loss for this task: {metric} is a classification figure.", metric=t.best_metric),
        )
    if t.early_stopping < 0:
        add("training.early_stopping", msg("must be 0 (never) or a number of evaluations."))
    if not 8 <= t.max_length <= 1_048_576:
        add("training.max_length", msg("must be between 8 and 1048576 tokens."))
    _validate_performance(config, add)
    if config.preference.method not in METHODS:
        add("preference.method", msg("must be one of {choices}.", choices=", ".join(METHODS)))
    if "preference.beta" not in infinite and config.preference.beta <= 0:
        add("preference.beta", msg("must be above 0; 0.1 is usual."))
    resolution = config.images.resolution
    if resolution < 0 or 0 < resolution < 28:
        add("images.resolution", msg("must be 0 (the model's own) or at least 28 pixels."))
    if config.task == "grpo":
        from desktop.core.settings.grpo_checks import validate_grpo

        validate_grpo(config, infinite, add)
    return problems


def _validate_launch(launch: Launch, add: Any) -> None:
    if launch.num_processes < 1:
        add("launch.num_processes", msg("must be 1 or more."))
    if launch.strategy not in STRATEGIES:
        add("launch.strategy", msg("must be one of {choices}.", choices=", ".join(STRATEGIES)))
    ids = [i.strip() for i in launch.gpu_ids.split(",")] if launch.gpu_ids.strip() else []
    if not all(i.isdigit() for i in ids) or len(set(ids)) != len(ids):
        add("launch.gpu_ids", msg('must be GPU numbers separated by commas, e.g. "0,1".'))
    elif ids and len(ids) != launch.num_processes:
        add(
            "launch.gpu_ids",
            msg(
                "names {count} GPUs for {processes} processes; name one GPU per process, or leave it empty.",
                count=len(ids),
                processes=launch.num_processes,
            ),
        )


def _validate_performance(config: RunConfig, add: Any) -> None:
    p, lora = config.performance, config.lora
    for name, allowed in (
        ("precision", PRECISIONS),
        ("optimizer", OPTIMIZERS),
        ("compile_backend", COMPILE_BACKENDS),
        ("attention", ATTENTIONS),
    ):
        if getattr(p, name) not in allowed:
            add(f"performance.{name}", msg("must be one of {choices}.", choices=", ".join(allowed)))
    if p.dataloader_workers < 0:
        add("performance.dataloader_workers", msg("must be 0 or more."))
    if p.empty_cache_steps < 0:
        add("performance.empty_cache_steps", msg("must be 0 (never) or a number of steps."))
    if lora.rank < 1:
        add("lora.rank", msg("must be 1 or more; 8 or 16 is usual."))
    if lora.alpha < 1:
        add("lora.alpha", msg("must be 1 or more; often twice the rank."))
    if math.isfinite(lora.dropout) and not 0 <= lora.dropout < 1:
        add("lora.dropout", msg("must be at least 0 and below 1."))


def _validate_model(model: ModelSource, add: Any) -> None:
    name = model.name.strip()
    if not name:
        add("model.name", msg('is empty; give a hub id such as "bert-base-uncased" or a local model folder.'))
    elif name.startswith("bundled:"):
        if name.removeprefix("bundled:") not in BUNDLED_MODELS:
            add(
                "model.name",
                msg("unknown bundled model; known: {choices}.", choices=", ".join(BUNDLED_MODELS)),
            )
    elif Path(name).expanduser().is_dir():
        if not (Path(name).expanduser() / "config.json").is_file():
            add(
                "model.name",
                msg(
                    "the folder {folder} has no config.json; pick the folder that holds the model.",
                    folder=name,
                ),
            )
    elif Path(name).is_absolute() or name.startswith((".", "~")) or "\\" in name:
        add("model.name", msg("the folder {folder} does not exist.", folder=name))
    elif not HUB_ID.match(name):
        add(
            "model.name",
            msg(
                '"{name}" is neither a local folder nor a hub id like "owner/model" '
                '(or "modelscope:owner/model").',
                name=name,
            ),
        )


def _validate_data(config: RunConfig, add: Any) -> None:
    data, val = config.data, config.validation
    if bool(data.files) == bool(data.hub_id):
        add("data", msg("set either data.files (local files) or data.hub_id (a hub dataset), not both."))
    if data.hub_id and not HUB_ID.match(data.hub_id):
        add("data.hub_id", msg('"{name}" is not a hub dataset id like "owner/name".', name=data.hub_id))
    for section, files in (("data.files", data.files), ("validation.files", val.files)):
        for f in files:
            path = Path(f)
            if path.is_dir():
                if config.task != "image-classification":
                    add(
                        section,
                        msg(
                            "{file} is a folder; a folder of pictures is data for image classification, "
                            "other tasks read files.",
                            file=f,
                        ),
                    )
            elif not path.suffix and not path.exists():  # a mistyped folder (or file) name
                add(section, msg("{file} does not exist.", file=f))
            elif path.suffix.lower() not in DATA_SUFFIXES:
                add(
                    section,
                    msg(
                        "{file}: unsupported type; use one of {types}.",
                        file=path.name,
                        types=" ".join(DATA_SUFFIXES),
                    ),
                )
            elif not path.is_file():
                add(section, msg("{file} does not exist.", file=f))
    if math.isfinite(val.fraction) and not 0 <= val.fraction < 1:
        add("validation.fraction", msg("must be at least 0 and below 1; 0.1 is usual."))
    if val.split and not data.hub_id:
        add("validation.split", msg("only applies to hub datasets; use validation.files for local data."))
