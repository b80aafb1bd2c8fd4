"""What a finished run gives: a verified model folder, predictions for a file, and answers to try.

Owns export to a complete model folder, merged LoRA optional (``export``), its verification by
reloading it in a clean process (``reload_check``, a script run with ``python -I``), the model card's
loss plot (``plot_png``), trying a model on one input (``tryit``) and predictions for a whole file
(``predict``).

May use: every other package of core but serving.
"""
