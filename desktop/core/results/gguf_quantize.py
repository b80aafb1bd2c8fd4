"""K-quants (``q4_k_m``) made by llama.cpp's own quantizer from the f16 GGUF we wrote.

The f16 file is written first (as ``NAME.PID.f16.partial``); llama.cpp's ``llama_model_quantize``
turns it into the smaller file in a child process, so that Cancel can stop it (the call itself cannot
be interrupted), then the f16 file is deleted. Needs ``llama-cpp-python``.

Run as a script (``python -I gguf_quantize.py SOURCE DEST TYPE``) it is that child: it imports only
``llama_cpp``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

TENSOR_LINE = re.compile(r"\[\s*(\d+)/\s*(\d+)\]")
"""llama.cpp's log line for each tensor it quantizes: ``[  12/ 290] blk.0.attn_k.weight ...``."""
K_QUANTS = {"q4_k_m": 15}
"""Our name -> llama.cpp's ``LLAMA_FTYPE_MOSTLY_*`` number (``llama.h``)."""


def quantize(
    source: str,
    dest: str,
    quant: str,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Quantize ``source`` (a f16 GGUF) into ``dest`` as ``quant`` in a child process.

    Args:
        progress: Called with (tensors done, tensors in all) as llama.cpp logs them.

    Raises:
        GgufCancelled: ``cancelled()`` said so; the child was stopped (``dest`` is the caller's to delete).
        ModelError: llama.cpp failed; its last words are the message.
    """
    import subprocess

    from desktop.core.results.gguf_writer import GgufCancelled
    from desktop.core.system import processes
    from desktop.core.system.errors import ModelError
    from desktop.core.system.messages import msg

    child = processes.popen(
        [sys.executable, "-I", __file__, source, dest, str(K_QUANTS[quant])],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    done, stopped = processes.kill_when(child, cancelled)
    last = ""
    try:
        assert child.stdout is not None
        for (
            line
        ) in child.stdout:  # read as it comes: llama.cpp logs a line per tensor, more than a pipe holds
            last = line.strip() or last
            found = TENSOR_LINE.search(line)
            if found and progress is not None:
                progress(int(found.group(1)), int(found.group(2)))
        child.wait()
    except BaseException:
        processes.kill_tree(child.pid)  # Ctrl-C, or a failing progress callback: never left running
        raise
    finally:
        done.set()
    if stopped.is_set():
        raise GgufCancelled
    if child.returncode != 0:
        error = last or msg("exit code {code}", code=child.returncode)
        raise ModelError(
            msg("llama.cpp could not quantize the model: {error}", error=error),
            msg("Export it as f16 or q8_0, which need no llama.cpp."),
        )


def _main(source: str, dest: str, ftype: str) -> int:
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = int(ftype)
    code = llama_cpp.llama_model_quantize(source.encode(), dest.encode(), params)
    if code != 0:
        print(f"llama_model_quantize returned {code}", file=sys.stderr)
    return 1 if code else 0


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:4]))
