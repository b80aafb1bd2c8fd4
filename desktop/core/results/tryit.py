"""Try a trained model: the predicted label with its probabilities, or generated text as it is made.

Works on a run's ``model/`` folder and on any exported folder, merged or adapters only: the task is
read from the folder itself. Heavy imports stay inside the functions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.core.settings.config_sections import model_task
from desktop.core.system.errors import ModelError, StudioError
from desktop.core.system.messages import msg

if TYPE_CHECKING:
    from desktop.core.data.tasks.generation import Message

STUDIO_CONFIG = "finetune-studio-config.toml"
CONTEXT_FALLBACK = 2048
"""The context size of a model whose config names none (a T5 reads any length; its training did not)."""


@dataclass(frozen=True)
class FolderInfo:
    """What a model folder holds, read from its files without loading weights.

    Attributes:
        task: ``classification``, ``causal-lm``, ``seq2seq`` or ``image-classification``.
        adapter: The folder holds LoRA adapters only; the base model is loaded from ``base_model``.
        base_model: The adapters' base model (folder or hub id).
        chat: Prompts should go through the chat template (the run trained on instructions or chats).
        trained_from: The model the run started from (its config's model), for the side-by-side with
            the base model; ``seed``: the run's seed (a classifier's new head starts as it did).
    """

    folder: Path
    task: str
    adapter: bool = False
    base_model: str = ""
    chat: bool = False
    trained_from: str = ""
    seed: int = 42


def inspect_folder(folder: str | Path, run_config: Path | None = None) -> FolderInfo:
    """Tell which task a model folder is for, and how prompts should be given to it.

    Args:
        folder: A run's ``model/`` folder or an exported folder.
        run_config: The run's ``config.toml`` when known (an export carries its own copy).

    Raises:
        ModelError: The folder holds no model this app can run.
    """
    folder = Path(folder)
    adapter_file, config_file = folder / "adapter_config.json", folder / "config.json"
    saved = run_config if run_config and run_config.is_file() else folder / STUDIO_CONFIG
    task = chat = None
    trained_from, seed = "", 42
    if saved.is_file():
        from desktop.core.settings.config import load_config

        config = load_config(saved)
        task = model_task(config.task)
        chat = task == "causal-lm" and not config.columns.text
        trained_from, seed = config.model.name, config.training.seed
    base = ""
    if adapter_file.is_file():
        adapter = _read_json(adapter_file)
        base = adapter.get("base_model_name_or_path") or ""
        task = task or {"SEQ_CLS": "classification", "SEQ_2_SEQ_LM": "seq2seq"}.get(
            adapter.get("task_type", ""), "causal-lm"
        )
    elif config_file.is_file():
        task = task or _task_from_model_config(_read_json(config_file))
    else:
        raise ModelError(
            msg("{folder} holds no model (no config.json or adapter_config.json).", folder=str(folder)),
            msg("Open the folder that an export or a finished run wrote."),
        )
    if task is None:
        raise ModelError(
            msg("The model in {folder} is not of a kind this app trains.", folder=str(folder)),
            msg(
                "Open a text or image classifier, a causal language model, a sequence-to-sequence model or a "
                "vision-language model."
            ),
        )
    if chat is None:
        chat = task == "causal-lm" and (folder / "chat_template.jinja").is_file()
    return FolderInfo(folder, task, adapter_file.is_file(), base, bool(chat), trained_from or base, seed)


def base_playground(info: FolderInfo) -> Playground | None:
    """The model a run started from, ready to answer beside the fine-tuned one (:meth:`Playground.load`
    it first), or ``None`` when the folder does not say. It reads prompts with the fine-tuned folder's
    tokenizer (the same vocabulary, and the chat template the run used). A classifier's head is new,
    as it was before the first step: the same labels, and the run's seed."""
    if not info.trained_from:
        return None
    from desktop.core.hub.models import pretrained_kwargs, resolve
    from desktop.core.settings.config import ModelSource

    source = ModelSource(name=info.trained_from)
    kwargs: dict[str, Any] = dict(pretrained_kwargs(source))  # from this computer only: never a download
    if info.task in ("classification", "image-classification"):
        labels = _read_json(info.folder / "config.json").get("id2label") or {}
        kwargs.update(
            num_labels=len(labels),
            id2label={int(k): v for k, v in labels.items()},
            label2id={v: int(k) for k, v in labels.items()},
        )
        if info.task == "image-classification":
            kwargs["ignore_mismatched_sizes"] = True  # an ImageNet checkpoint's head: replaced, as in the run
    reader = "preprocessor_config.json" if info.task == "image-classification" else "tokenizer_config.json"
    tokenizer_from = str(info.folder) if (info.folder / reader).is_file() else ""
    base = FolderInfo(Path(resolve(source)), info.task, chat=info.chat, seed=info.seed)
    playground = Playground(base, model_kwargs=kwargs, tokenizer_from=tokenizer_from)
    playground.made_for = info
    return playground


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        error = ModelError(
            msg("{file} cannot be read: it is damaged or not a JSON file.", file=str(path)),
            msg("Export the model again."),
        )
        error.detail = str(exc)
        raise error from exc


def _task_from_model_config(config: dict[str, Any]) -> str | None:
    names = " ".join(config.get("architectures") or [])
    if "ForSequenceClassification" in names:
        return "classification"
    if "ForImageClassification" in names:
        return "image-classification"
    if config.get("vision_config") and ("ForConditionalGeneration" in names or "ImageTextToText" in names):
        return "vision-chat"
    if config.get("is_encoder_decoder") or "ForConditionalGeneration" in names:
        return "seq2seq"
    if "CausalLM" in names or "LMHeadModel" in names:
        return "causal-lm"
    return None


class Playground:
    """A loaded model that answers one prompt at a time.

    Load it off the GUI thread (:meth:`load` reads the weights). ``generate`` reports text through
    ``on_text`` as it is produced and stops early when ``stop`` is set.
    """

    def __init__(
        self, info: FolderInfo, model_kwargs: dict[str, Any] | None = None, tokenizer_from: str = ""
    ) -> None:
        self.info = info
        self.model: Any = None
        self.tokenizer: Any = None
        self.device = "cpu"
        self.model_kwargs = model_kwargs or {}
        self.tokenizer_from = tokenizer_from
        self.made_for: FolderInfo | None = None
        """For a base model (:func:`base_playground`): the fine-tuned model it answers beside."""

    def load(self) -> None:
        """Read the model and tokenizer (to the GPU when PyTorch can use one)."""
        import torch
        from transformers import AutoTokenizer

        from desktop.core.data.tasks import auto_class

        info = self.info
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            if info.adapter:
                from peft import PeftModel

                base = auto_class(info.task).from_pretrained(info.base_model)
                model = PeftModel.from_pretrained(base, str(info.folder))
                has_tokenizer = (info.folder / "tokenizer_config.json").is_file()
                tokenizer_from = str(info.folder) if has_tokenizer else info.base_model
            else:
                if "num_labels" in self.model_kwargs:  # a new head: as it started before the first step
                    from transformers import set_seed

                    set_seed(info.seed)
                model = auto_class(info.task).from_pretrained(str(info.folder), **self.model_kwargs)
                tokenizer_from = self.tokenizer_from or str(info.folder)
            if info.task == "image-classification":  # pictures: the image processor reads them
                from transformers import AutoImageProcessor

                has_processor = (info.folder / "preprocessor_config.json").is_file()
                self.tokenizer = AutoImageProcessor.from_pretrained(
                    str(info.folder) if has_processor else tokenizer_from
                )
            elif info.task == "vision-chat":  # pictures and text: the folder's processor reads both
                from transformers import AutoProcessor

                self.tokenizer = AutoProcessor.from_pretrained(tokenizer_from)
            else:
                self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_from)
                if self.tokenizer.pad_token is None:
                    self.tokenizer.pad_token = self.tokenizer.eos_token
        except Exception as exc:  # a missing file, a damaged safetensors header, a wrong config
            if isinstance(exc, (StudioError, ImportError)):
                raise
            error = ModelError(
                msg(
                    "The model in {folder} could not be loaded: a file is missing or damaged.",
                    folder=str(info.folder),
                ),
                msg(
                    "Check that the folder is complete (export it again), and that an adapter's base "
                    "model is still where it was."
                ),
            )
            error.detail = f"{type(exc).__name__}: {exc}"
            raise error from exc
        self.model = model.to(self.device).eval()

    def classify(self, text: str) -> list[tuple[str, float]]:
        """Every label with its probability, most likely first (a text past the context is cut there,
        as training cut it)."""
        return self.classify_many([text])[0]

    def classify_many(self, texts: Sequence[str], max_length: int = 0) -> list[list[tuple[str, float]]]:
        """:meth:`classify` for each text, one at a time (no padding: the same figures as alone)."""
        import torch

        longest = max_length or self.context_size()
        names = self.model.config.id2label or {}
        answers = []
        for text in texts:
            inputs = self.tokenizer(text, return_tensors="pt", truncation=True, max_length=longest)
            with torch.no_grad():
                logits = self.model(**inputs.to(self.device)).logits[0].float()
            ranked = [(str(names.get(i, i)), p) for i, p in enumerate(torch.softmax(logits, dim=-1).tolist())]
            answers.append(sorted(ranked, key=lambda pair: -pair[1]))
        return answers

    def classify_picture(self, picture: Any) -> list[tuple[str, float]]:
        """Every label with its probability for a picture (a path, the file's bytes, or a Pillow image),
        most likely first."""
        from desktop.core.data.images import decode, reading_side

        image = (
            picture if hasattr(picture, "convert") else decode(picture, at_least=reading_side(self.tokenizer))
        )
        return self.classify_pictures([image])[0]

    def classify_pictures(self, pictures: Sequence[Any]) -> list[list[tuple[str, float]]]:
        """:meth:`classify_picture` of several decoded pictures (Pillow images) in one forward pass."""
        import torch

        inputs = self.tokenizer(images=[p.convert("RGB") for p in pictures], return_tensors="pt")
        with torch.no_grad():
            logits = self.model(pixel_values=inputs["pixel_values"].to(self.device)).logits.float()
        names = self.model.config.id2label or {}
        ranked = []
        for row in torch.softmax(logits, dim=-1).tolist():
            pairs = [(str(names.get(i, i)), p) for i, p in enumerate(row)]
            ranked.append(sorted(pairs, key=lambda pair: -pair[1]))
        return ranked

    def describe(
        self,
        picture: Any,
        question: str,
        max_new_tokens: int = 128,
        on_text: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
    ) -> str:
        """A vision-language model's answer to ``question`` about ``picture`` (a path, the file's bytes
        or a Pillow picture), greedy; ``on_text`` gets each new piece as it is written (from the thread
        that generates), ``stop`` set ends it after the current token."""
        from desktop.core.data.tasks.vision_chat import answer_picture

        return answer_picture(
            self.model, self.tokenizer, self.device, picture, question, max_new_tokens, on_text, stop
        )

    def converse(self, messages: list[dict[str, Any]], pictures: list[Any], max_new_tokens: int = 128) -> str:
        """A vision-language model's next turn in a conversation holding ``pictures`` (its image parts
        bare placeholders, taking the pictures in order), greedy."""
        from desktop.core.data.tasks.vision_chat import answer_conversation

        return answer_conversation(
            self.model, self.tokenizer, self.device, messages, pictures, max_new_tokens
        )[0]

    def embed_many(self, texts: Sequence[str], max_length: int = 0) -> tuple[list[list[float]], int]:
        """Each text's embedding by the model's encoder: its last hidden states averaged over the text's
        tokens, scaled to length 1 (as OpenAI's are); and the tokens read. One text at a time (no padding:
        the same figures as alone)."""
        import torch

        longest = max_length or self.context_size()
        vectors, tokens = [], 0
        for text in texts:
            inputs = self.tokenizer(text, return_tensors="pt", truncation=True, max_length=longest)
            tokens += int(inputs["input_ids"].shape[1])
            with torch.no_grad():
                states = self.model(**inputs.to(self.device), output_hidden_states=True).hidden_states[-1]
            mean = states[0].float().mean(dim=0)
            vectors.append(torch.nn.functional.normalize(mean, dim=0).tolist())
        return vectors, tokens

    def context_size(self) -> int:
        """The most tokens the model reads at once (prompt and answer together)."""
        config = getattr(self.model, "config", None)
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        value = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(value, int) and 0 < value < 1_000_000:
            return value
        return CONTEXT_FALLBACK

    def generate(
        self,
        prompt: str | Sequence[Message],
        max_new_tokens: int = 128,
        temperature: float = 0.7,
        use_chat: bool | None = None,
        on_text: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
        top_p: float = 1.0,
    ) -> str:
        """Generate a reply to ``prompt``: a text, or a conversation (a list of ``{"role", "content"}``
        messages, system prompt first); ``temperature`` 0 means greedy (always the same answer).

        Args:
            use_chat: Go through the chat template, as one user turn for a text (default: as trained).
                A plain model given a conversation answers its last user turn.
            on_text: Called with each new piece of text (from the thread that generates).
            stop: Set it to end generation after the current token.
        """
        from desktop.core.data.tasks.generation import generate_reply

        chat = self.info.chat if use_chat is None else use_chat
        return generate_reply(
            self.model, self.tokenizer, self.device, self.info.task, prompt, chat,
            max_new_tokens=max_new_tokens, temperature=temperature, on_text=on_text, stop=stop,
            top_p=top_p,
        )  # fmt: skip

    def release(self) -> None:
        """Drop the model so its memory (and VRAM) is returned."""
        from desktop.core.system.heap import release_memory

        self.model = self.tokenizer = None
        release_memory()
