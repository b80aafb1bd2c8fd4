"""Finetune Studio: fine-tune Hugging Face models on your own data and GPU."""

__version__ = "0.1.0"
