"""A run: ``run_training(config, on_event, stop) -> RunResult``, in this process or a supervised child.

Owns the run itself (``run``): its preparation, from data to the Trainer (``preparation``), the
Trainer's loop and saving the model (``train_loop``) and the evaluation of the base and the
fine-tuned model (``run_evaluation``); the Trainer callback that turns progress into events and Stop
into a graceful end (``callbacks``), resuming from the newest checkpoint that loads (``resume``),
going on with less memory after an out-of-memory error (``recovery``), the child process that runs a
config and its supervisor (``supervisor``), several GPUs through Accelerate (``distributed``,
``launch``), jobs written out for a cluster (``jobs``) and what a run scores on its validation split
(``evaluation``).

May use: ``system``, ``environment``, ``settings``, ``hub``, ``data``, ``runs``.
"""
