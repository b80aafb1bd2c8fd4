"""What a finished run gives: a verified model folder, predictions for a file, and answers to try.

Owns export to a complete model folder, merged LoRA optional (``export``), where it may go and how it
is put there (``destination``: what may be replaced, one export per folder at a time), logging it to
MLflow (``mlflow_log``), publishing it to a hub (``publish``), the last step's model of a run that
kept its best checkpoint (``last_step``), its verification by reloading it in a clean process
(``reload_check``, a script run with ``python -I``), the model card's loss plot (``plot_png``), trying
a model on one input (``tryit``) and predictions for a whole file (``predict``).

May use: every other package of core but serving.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "destination",
    "export",
    "gguf_check",
    "gguf_export",
    "gguf_writer",
    "last_step",
    "ollama",
    "predict",
    "publish",
    "tryit",
]
