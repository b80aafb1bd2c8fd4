"""The private names of other libraries that we keep, each checked on the installed release.

Each has no public equivalent, lives in one module that says why, and is listed with its reason in
``tests/test_house_rules.py`` (``KEPT_PRIVATE``). The code falls back safely where one goes away; these
tests make sure that we hear of it, on the release that changes it, instead of losing the feature
without a word.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from pathlib import Path

import pytest

from desktop.core.system import lazy


def test_python_says_which_thread_another_waits_for_in_an_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``importlib._bootstrap._blocking_on``, read by ``lazy.threads_awaited``."""
    gate = types.ModuleType("studio_private_gate")
    gate.started, gate.release = threading.Event(), threading.Event()
    monkeypatch.setitem(sys.modules, "studio_private_gate", gate)
    (tmp_path / "studio_private_slow.py").write_text(
        "import studio_private_gate as gate\ngate.started.set()\ngate.release.wait(30)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "studio_private_slow", raising=False)
    importing = threading.Thread(target=__import__, args=("studio_private_slow",), daemon=True)
    waiting = threading.Thread(target=__import__, args=("studio_private_slow",), daemon=True)
    importing.start()
    try:
        assert gate.started.wait(30)
        owners = lazy.threads_awaited()
        assert owners is not None, "this Python keeps importlib._bootstrap._blocking_on otherwise"
        assert importing.ident not in owners  # nobody waits for it yet
        waiting.start()  # imports the same module: waits for the first thread's lock
        deadline = time.monotonic() + 10
        while importing.ident not in (lazy.threads_awaited() or set()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert importing.ident in (lazy.threads_awaited() or set()), "the waiting thread was not seen"
    finally:
        gate.release.set()
        importing.join(30)
        waiting.join(30)
    assert importing.ident not in (lazy.threads_awaited() or set())
    del sys.modules["studio_private_slow"]


def test_python_says_when_a_finder_holds_its_global_import_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_imp.lock_held``, read by ``lazy.import_lock_held`` (True, the safe answer, where it is gone:
    so False outside a finder shows that it is read)."""
    seen: list[bool] = []

    class Finder:
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "studio_private_probe":
                seen.append(lazy.import_lock_held())

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    with pytest.raises(ImportError):
        import studio_private_probe  # noqa: F401
    # Other finders on the path (editable installs, hooks earlier tests leave) may ask again.
    assert seen and all(seen)
    assert lazy.import_lock_held() is False


def test_a_module_spec_says_while_its_module_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ModuleSpec._initializing``, read by ``lazy.imported``: true while the module's code runs, then
    false (tests/core/test_lazy.py checks what the window sees of it from another thread)."""
    (tmp_path / "studio_private_spec.py").write_text(
        "import sys\nfrom desktop.core.system import lazy\n"
        "SEEN = sys.modules[__name__].__spec__._initializing, lazy.imported(__name__)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "studio_private_spec", raising=False)
    import studio_private_spec

    assert studio_private_spec.SEEN == (True, False)
    assert studio_private_spec.__spec__._initializing is False and lazy.imported("studio_private_spec")
    del sys.modules["studio_private_spec"]


def _trainer(tiny_bert: Path, tmp_path: Path, dataset: object) -> object:
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments

    from desktop.core.training.grouping import length_grouped

    args = TrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=8, report_to="none",
        remove_unused_columns=False, disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert, num_labels=2)
    collate = lambda rows: [int(row["labels"]) for row in rows]  # noqa: E731  (the example indices)
    return length_grouped(Trainer)(model=model, args=args, train_dataset=dataset, data_collator=collate)


def test_the_trainer_takes_its_training_sampler_from_our_hook(tiny_bert: Path, tmp_path: Path) -> None:
    """``Trainer._get_train_sampler``, overridden in ``training/grouping.py``: the batches drawn through
    the public ``get_train_dataloader`` are grouped by length."""
    from desktop.core.data.examples import Examples, to_batch

    lengths = [4, 64] * 100
    rows = [{"input_ids": [5] * n, "attention_mask": [1] * n, "labels": i} for i, n in enumerate(lengths)]
    trainer = _trainer(tiny_bert, tmp_path, Examples.from_batches([to_batch(rows)]))
    batches = [list(batch) for batch in trainer.get_train_dataloader()]
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    mixed = [batch for batch in batches if len({lengths[i] for i in batch}) > 1]
    # Grouped: at most one mixed batch per group of batches (7 here); drawn at random, nearly all 25.
    assert len(mixed) < len(batches) / 2, "transformers no longer asks Trainer._get_train_sampler"


def test_a_dataset_without_lengths_gets_the_trainers_own_sampler(tiny_bert: Path, tmp_path: Path) -> None:
    """The hook hands other datasets to the Trainer's own ``_get_train_sampler``, with its argument."""
    trainer = _trainer(tiny_bert, tmp_path, [{"labels": i} for i in range(20)])
    assert sorted(i for batch in trainer.get_train_dataloader() for i in batch) == list(range(20))


def test_pyside_asks_its_feature_module_whether_a_module_uses_it() -> None:
    """``PySide6.support.feature._mod_uses_pyside``, replaced by ``gui/app_support/import_hook.py``
    (tests/gui/test_import_hook.py checks that the replacement is the one asked)."""
    import PySide6.QtCore  # noqa: F401  (PySide6 installs its import hook with its first module)

    feature = sys.modules.get("PySide6.support.feature") or sys.modules.get("shibokensupport.feature")
    assert feature is not None and callable(getattr(feature, "_mod_uses_pyside", None))


def test_python_names_the_interpreter_a_venv_was_made_from() -> None:
    """``sys._base_executable``, read by ``installer/build.py`` to make the release venv from a Python
    outside any venv (CPython's own ``venv`` module reads it too)."""
    base = getattr(sys, "_base_executable", None)
    assert base is not None and Path(base).is_file()
    if sys.prefix == sys.base_prefix:  # not in a venv: the same Python
        assert Path(base).resolve() == Path(sys.executable).resolve()
    else:
        assert not Path(base).resolve().is_relative_to(Path(sys.prefix).resolve())
