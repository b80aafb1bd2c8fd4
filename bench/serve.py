"""Serving: our OpenAI-compatible server against plain ``model.generate`` in a loop, same model and answers.

Workload: the Qwen2-shaped model of ``bench/preference.py`` (4 layers, hidden 384, random weights, a
byte-level BPE tokenizer trained on the spot with our fallback chat template: no network), its end of
sequence suppressed in the folder's generation_config.json so that every answer is exactly ``--tokens``
new tokens (64); greedy; 4 different chat prompts taken in turn. fp32 on the CPU, PyTorch's threads
``--threads`` (1) on both sides.

- ours: what users run, ``python -m desktop.cli serve FOLDER --port 0 --events`` in a process of its own
  (the "ready" line gives the base URL; "stop" on its stdin ends it); the clients are this process's
  threads, each with the official ``openai`` client, ``chat.completions.create(stream=True,
  temperature=0, max_tokens=...)``. 1 client: N requests one after another; 4 clients: 4 threads
  released together, each doing N requests one after another (the server answers the requests that
  wait together in one batch: ``desktop/core/serving/batching.py``).
- plain: the transformers docs' streaming, in a process of its own: ``AutoModelForCausalLM`` and
  ``AutoTokenizer.from_pretrained``, the prompt through ``apply_chat_template``, ``model.generate`` on a
  thread with a ``TextIteratorStreamer``, one request after another. "4 clients" is the same loop
  serving 4 x N requests as 4 users would get them from a server that answers one at a time: the
  requests taken in turn (user 1, 2, 3, 4, 1, ...), and each user's next request arriving when its
  previous answer ended (its first at the start), exactly how our 4 client threads ask. A user's wait
  in that queue counts in its latency, as it does for ours.

Clocks (time.perf_counter, per request): "first token" from the request's arrival (ours: the call to
``create``; plain: as above) to the first piece of text (ours: the first chunk with content; plain: the
streamer's first text, which it holds back until a word ends: ours sends each token's text at once);
"end" to the answer's last piece. Tokens/s per client: a client's tokens over the time from its first
request to its last answer's end, averaged over the clients; total: all tokens over the round's wall
time. Each repeat starts fresh processes, alternating which side goes first, each doing 2 warm-up
requests before measuring. Printed: a line per run and concurrency, then per side the medians over the
repeats: median and p90 first-token latency (ms), tokens/s per client and in total; then the medians of
the paired ratios ours / plain (latency: lower is better; tokens/s: higher is better), and whether the
answers of both sides are the same text (they must be: same model, greedy; an answer's last half
character, which the plain streamer sends as U+FFFD and ours holds back, is left out of the comparison).

Figures with batching and joining (2026-12-05), a 2-core CPU, 3 repeats, 6 requests per client, 64
tokens, 1 thread, the answers the same text on both sides: ours with 4 clients made 2.95, 2.53 and 2.50
times the total tokens/s of ours with 1 client (median 2.53; 517 vs 195 tokens/s); 1 client 0.96 of
plain's tokens/s (the three runs 0.84, 0.96, 1.00: the machine is noisy), first token 16 vs 13 ms; 4
clients 2.40 times plain's total (plain answers them one at a time), first token median 39 vs 880 ms.
What got there from 2.22: a request that comes while a batch runs joins it at the next token (the
first request of a burst no longer runs its whole answer alone, as it did before: batches 1, 4, 4, 4,
4, 4, 3), and while answers are made together a streamed piece waits up to 20 ms for the next ones to go
in the same chunk (``streaming.JOIN_S``; a chunk per token per client took the model's thread's turns at
Python):
2.57 in a 2-repeat run before the first words were exempted from that wait, 2.53 after. The ceiling on
this machine is ``generate`` itself: one call over 4 prompts makes 2.65 times the tokens/s of one over
1 (639 vs 241), and the 4 client threads, the server's HTTP loop and the model share the 2 cores.

Earlier, batching without joining: 4 clients 2.22 and 2.23 times ours with 1 client (451 and 458
tokens/s), 1 client 1.01 and 0.95 of plain's.

Figures before batching, a 2-core CPU, 3 repeats, 6 requests per client, 64 tokens, 1 thread, medians of
the paired ratios ours / plain, the answers the same text on both sides. With the TCP_NODELAY fix (below), the
machine otherwise quiet: 1 client: first token 17 vs 15 ms (1.07, p90 1.06: the HTTP round trip and the
request's handling, about 2 ms), 165 vs 156 tokens/s (1.05); 4 clients: first token 1130 vs 1098 ms
(1.02, p90 1.01: the wait in the queue, as long on both sides), tokens/s per client 0.98, total 0.99.
An earlier run beside other people's tests: 1 client 0.99 tokens/s, 4 clients 0.98. Found by this
bench: a response that was not streamed (and ``/v1/models``) came about 40 ms late, the server's socket
lacking TCP_NODELAY (Nagle's algorithm against the client's delayed ACK); with it (server.py names
IPPROTO_TCP) ``GET /v1/models`` takes 0.8 ms instead of 44.

    python bench/serve.py [--repeats 3] [--requests 6] [--tokens 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MARK = "RESULT "
PROMPTS = [
    "Say something about the garden and a song",
    "Tell me about my report on the weather",
    "What do you think of this code and our trip",
    "Write a few words about his bike, her cake and the plan",
]
WARMUP = 2
CLIENTS = (1, 4)


def build(root: Path) -> Path:
    """The model folder, every answer exactly as long as asked (the end of sequence never chosen)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from preference import build as build_preference  # the same model and tokenizer
    from transformers import GenerationConfig

    model, _ = build_preference(root)
    config = GenerationConfig.from_pretrained(model)
    config.suppress_tokens = [config.eos_token_id]
    config.save_pretrained(model)
    return model


def summary(records: list[dict], clients: int) -> dict:
    """Figures of one round: records with client, asked, first, end, tokens, text."""
    latency = sorted(r["first"] - r["asked"] for r in records)
    start, end = min(r["asked"] for r in records), max(r["end"] for r in records)
    per_client = []
    for c in range(clients):
        mine = [r for r in records if r["client"] == c]
        span = max(r["end"] for r in mine) - min(r["asked"] for r in mine)
        per_client.append(sum(r["tokens"] for r in mine) / span)
    return {
        "ttft_ms": statistics.median(latency) * 1000,
        "p90_ms": latency[min(len(latency) - 1, int(len(latency) * 0.9))] * 1000,
        "client_tps": statistics.mean(per_client),
        "total_tps": sum(r["tokens"] for r in records) / (end - start),
        "tokens": sorted({r["tokens"] for r in records}),
        "texts": {r["prompt"]: r["text"] for r in records},
    }


# ---------------------------------------------------------------------------------------- ours


def ours(model: Path, requests: int, tokens: int, threads: int) -> dict[int, dict]:
    from openai import OpenAI

    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    command = [sys.executable, "-m", "desktop.cli", "serve", str(model), "--port", "0", "--events"]
    root = Path(__file__).resolve().parents[1]
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=root
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        for line in server.stdout:
            event = json.loads(line)
            if event["event"] == "failed":
                sys.exit(f"the server failed: {event}")
            if event["event"] == "ready":
                break
        else:
            sys.exit("the server ended before it was ready")
        threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()  # request lines
        url, name = event["base_url"], event["model"]

        def ask(client: OpenAI, prompt: str) -> dict:
            asked, first, text, used = time.perf_counter(), None, "", 0
            stream = client.chat.completions.create(
                model=name,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=tokens,
                temperature=0,
                stream=True,
                stream_options={"include_usage": True},
            )
            for chunk in stream:
                if chunk.usage is not None:
                    used = chunk.usage.completion_tokens
                if chunk.choices and chunk.choices[0].delta.content:
                    first = first or time.perf_counter()
                    text += chunk.choices[0].delta.content
            end = time.perf_counter()
            return {
                "asked": asked,
                "first": first,
                "end": end,
                "tokens": used,
                "text": text,
                "prompt": prompt,
            }

        warm = OpenAI(base_url=url, api_key="none")
        for i in range(WARMUP):
            ask(warm, PROMPTS[i % len(PROMPTS)])
        results = {}
        for clients in CLIENTS:
            records: list[dict] = []
            gate = threading.Barrier(clients)

            def user(
                c: int, records: list = records, gate: threading.Barrier = gate, n: int = clients
            ) -> None:
                client = OpenAI(base_url=url, api_key="none")
                gate.wait()
                for i in range(requests):
                    record = ask(client, PROMPTS[(c + i * n) % len(PROMPTS)])
                    records.append({**record, "client": c})

            users = [threading.Thread(target=user, args=(c,)) for c in range(clients)]
            for u in users:
                u.start()
            for u in users:
                u.join()
            results[clients] = summary(records, clients)
        return results
    finally:
        server.stdin.write("stop\n")
        server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()  # a server that does not stop must not outlive the bench
            sys.exit("the server did not stop within 60 s of 'stop'")


# ---------------------------------------------------------------------------------------- plain


def plain(model_dir: Path, requests: int, tokens: int) -> dict[int, dict]:
    """The transformers docs' streaming, one request after another."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, TextIteratorStreamer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()

    def answer(prompt: str, asked: float) -> dict:
        messages = [{"role": "user", "content": prompt}]
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        inputs = tokenizer(text, add_special_tokens=False, return_tensors="pt")
        streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
        out: list = []
        kwargs = dict(inputs, streamer=streamer, max_new_tokens=tokens, do_sample=False)

        def run() -> None:
            with torch.no_grad():
                out.append(model.generate(**kwargs))

        thread = threading.Thread(target=run)
        thread.start()
        first, made = None, ""
        for piece in streamer:
            if piece:
                first = first or time.perf_counter()
                made += piece
        thread.join()
        end = time.perf_counter()
        used = out[0].shape[1] - inputs["input_ids"].shape[1]
        return {"asked": asked, "first": first, "end": end, "tokens": used, "text": made, "prompt": prompt}

    for i in range(WARMUP):
        answer(PROMPTS[i % len(PROMPTS)], time.perf_counter())
    results = {}
    for clients in CLIENTS:
        records = []
        arrived = [time.perf_counter()] * clients  # each user's next request, in turn (see the docstring)
        for i in range(requests):
            for c in range(clients):
                record = answer(PROMPTS[(c + i * clients) % len(PROMPTS)], arrived[c])
                arrived[c] = record["end"]
                records.append({**record, "client": c})
        results[clients] = summary(records, clients)
    return results


def run_plain(model: Path, requests: int, tokens: int, threads: int) -> dict[int, dict]:
    command = [sys.executable, __file__, "--side", "plain", "--model", str(model)]
    command += ["--requests", str(requests), "--tokens", str(tokens), "--threads", str(threads)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode or not lines:
        sys.exit(f"plain failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return {int(k): v for k, v in json.loads(lines[-1][len(MARK) :]).items()}


# ---------------------------------------------------------------------------------------- main

COLUMNS = ("ttft_ms", "p90_ms", "client_tps", "total_tps")


def _row(label: str, f: dict) -> str:
    return f"{label:16}{f['ttft_ms']:10.0f}{f['p90_ms']:10.0f}{f['client_tps']:12.1f}{f['total_tps']:11.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=6, help="requests per client")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per answer")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch's threads on both sides")
    parser.add_argument("--side", choices=("plain",), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        import transformers

        transformers.logging.set_verbosity_error()
        print(MARK + json.dumps(plain(Path(args.model), args.requests, args.tokens)), flush=True)
        return
    sides = {
        "ours": lambda m: ours(m, args.requests, args.tokens, args.threads),
        "plain": lambda m: run_plain(m, args.requests, args.tokens, args.threads),
    }
    runs: dict[str, list[dict[int, dict]]] = {"ours": [], "plain": []}
    with tempfile.TemporaryDirectory() as tmp:
        model = build(Path(tmp))
        print(f"{'run':16}{'ttft ms':>10}{'p90 ms':>10}{'tok/s/client':>12}{'tok/s all':>11}")
        for i in range(args.repeats):
            for side in ("ours", "plain") if i % 2 == 0 else ("plain", "ours"):  # drift hits both alike
                result = sides[side](model)
                runs[side].append(result)
                for clients, f in result.items():
                    assert f["tokens"] == [args.tokens], f"{side}: answers of {f['tokens']} tokens"
                    print(_row(f"{side} {i + 1} x{clients}", f), flush=True)
    same = all(
        {k: t.rstrip("\ufffd") for k, t in o[c]["texts"].items()}
        == {k: t.rstrip("\ufffd") for k, t in p[c]["texts"].items()}
        for o, p in zip(runs["ours"], runs["plain"], strict=True)
        for c in CLIENTS
    )
    for side, results in runs.items():
        for c in CLIENTS:
            print(_row(f"{side} med x{c}", {k: statistics.median(r[c][k] for r in results) for k in COLUMNS}))
    print(f"ours / plain, median of the {args.repeats} paired ratios, {args.requests} requests per client, "
          f"{args.tokens} tokens; answers the same text: {'yes' if same else 'NO'}")  # fmt: skip
    scaling = [r[CLIENTS[-1]]["total_tps"] / r[1]["total_tps"] for r in runs["ours"]]
    print(
        f"ours, {CLIENTS[-1]} clients / 1 client, total tokens/s: "
        + ", ".join(f"{x:.2f}" for x in scaling)
        + f" (median {statistics.median(scaling):.2f}; target >= 2.5)"
    )
    for c in CLIENTS:
        ratio = {
            k: statistics.median(o[c][k] / p[c][k] for o, p in zip(runs["ours"], runs["plain"], strict=True))
            for k in COLUMNS
        }
        print(
            f"  {c} client{'s' if c > 1 else ' '}: first token median {ratio['ttft_ms']:.2f}, "
            f"p90 {ratio['p90_ms']:.2f} (lower is better); tokens/s per client {ratio['client_tps']:.2f}, "
            f"total {ratio['total_tps']:.2f} (higher is better)"
        )


if __name__ == "__main__":
    main()
