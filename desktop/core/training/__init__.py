"""A run: ``RunSession(RunRequest(config), on_event).run() -> RunResult``, in this process or a supervised
child.

Owns the one path both front ends start a run by (``session``: the run to resume, what to download first,
keeping the computer awake, where the run goes, stop then hard stop), the run itself (``run``): its
preparation, from data to the Trainer (``preparation``), the Trainer's loop and saving the model
(``train_loop``) and the evaluation of the base and the fine-tuned model (``run_evaluation``); the Trainer
callback that turns progress into events and Stop into a graceful end (``callbacks``), resuming from the
newest checkpoint that loads (``resume``), going on with less memory after an out-of-memory error
(``recovery``), keeping the best checkpoint and stopping early (``best``), the child process that runs a
config and its supervisor (``supervisor``), several GPUs through Accelerate (``distributed``,
``launch``), jobs written out for a cluster (``jobs``), what a run scores on its validation split
(``evaluation``), and TensorBoard and MLflow beside a run (``trackers``, ``mlflow_store``).

May use: ``system``, ``environment``, ``settings``, ``hub``, ``data``, ``runs``.
"""

# The package's public face: the modules other packages may import (tests/test_house_rules.py holds
# it). The others are this package's own; what another package needs of them goes through these.
__all__ = [
    "best",
    "distributed",
    "evaluation",
    "grouping",
    "jobs",
    "mlflow_store",
    "non_finite",
    "preference_evaluation",
    "run",
    "session",
]
