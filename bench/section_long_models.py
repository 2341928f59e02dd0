"""Section long-models: a real model's long text as maps, at 1 024 / 2 048 / 4 096
tokens — what a notebook's model costs the server for one long view.

The model is a randomly initialised Llama of a small real size, built offline from its config:
6 layers × 8 query heads (2 key/value heads, grouped-query attention), head size 64, width
512, rotary positions, an 8 192-token context, eager attention (as `load_model` loads). Its
weights are random, its cost is not: every number below depends on the shapes only.

Each row runs in a fresh child process (so its peak memory is its own), one torch thread:
- *run_model_long*: the text through the model as maps (`attention_core.long.pretrained`):
  the check of its first 48 tokens against output_attentions, one forward pass of the base
  model whose layers build their maps as they are called.
- *peak RSS*: the child's highest resident memory (ru_maxrss) minus what it held after loading
  the model: the forward pass (a twin of the model on SDPA: no layer's H·n² scores held), the
  check of the first tokens (eager), and the maps.
- *maps*: what the view keeps (q̂ and k̂ of every head of every layer, `nbytes`).
- *dense*: what `run_model`'s every weight would be, L·H·n² float32.
- *overview*: one layer's 8 heads pooled to 256² cells ("share"), the long map's first paint.
- *rollout*: one query's rollout through the 6 layers (`long.lens.rollout_row`).
- *received*: every head's received attention (the lens's sinks), 48 heads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.measure import REPO
from bench.tables import Table, median

__all__ = ["run"]

TOKENS = (1024, 2048, 4096)
REPEATS = 3
TIMEOUT_S = 600

_CHILD = r"""
import json, resource, sys, time
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
import transformers
from transformers import AutoTokenizer
from attention_core.resources import minilm_dir
from attention_core.long.pretrained import run_model_long
from attention_core.pretrained import from_model
from attention_core.long.lens import received, rollout_row
from attention_core.long.run import overview_size

n, repeats = int(sys.argv[1]), int(sys.argv[2])
tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
tokenizer.model_max_length = 8192
config = transformers.LlamaConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=512, intermediate_size=1376,
    num_hidden_layers=6, num_attention_heads=8, num_key_value_heads=2,
    max_position_embeddings=8192,
)
model = transformers.LlamaForCausalLM(config).eval()
loaded = from_model(model, tokenizer, name="llama-6x8")
text = "the cat sat on the mat and then it slept. " * (n // 10 + 2)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
runs, overview, rollout, got = [], [], [], []
for _ in range(repeats):
    t = time.perf_counter(); long = run_model_long(loaded, text, max_tokens=n)
    runs.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
size = overview_size(8)
for _ in range(repeats):
    t = time.perf_counter()
    for h in range(8):
        long.maps[0].overview(h, size=size, reduce="mass")
    overview.append(time.perf_counter() - t)
    t = time.perf_counter(); rollout_row(long.maps, n - 1); rollout.append(time.perf_counter() - t)
t = time.perf_counter()
for m in long.maps:
    for h in range(m.num_heads):
        received(m, h)
got.append(time.perf_counter() - t)
print(json.dumps({"n": long.n, "run": runs, "peak": peak, "maps": long.nbytes,
                  "overview": overview, "rollout": rollout, "received": got}))
"""


def _row(n: int, repeats: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), str(repeats)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    tokens = TOKENS[:1] if quick else TOKENS
    repeats = 1 if quick else REPEATS
    table = Table(
        "Long prompts through a real model's shapes: a Llama of 6 layers × 8 heads "
        "(GQA 8/2, head size 64, RoPE), one torch thread",
        [
            "tokens",
            "run_model_long s",
            "peak RSS MB (over the model)",
            "maps MB",
            "dense weights MB",
            "overview 8 heads s",
            "rollout 1 row s",
            "received 48 heads s",
        ],
    )
    raw: dict[str, Any] = {}
    for n in tokens:
        row = raw[str(n)] = _row(n, repeats)
        if "error" in row:
            table.add(n, row["error"], "", "", "", "", "", "")
            continue
        table.add(
            row["n"],
            f"{median(row['run']):.2f}",
            f"{row['peak'] / 1e6:.0f}",
            f"{row['maps'] / 1e6:.1f}",
            f"{4 * 6 * 8 * n * n / 1e6:,.0f}",
            f"{median(row['overview']):.2f}",
            f"{median(row['rollout']):.2f}",
            f"{median(row['received']):.2f}",
        )
    table.notes += [
        f"medians of {repeats} runs in a child process per row (random weights: the cost "
        "depends on the shapes only). peak RSS: the child's highest resident memory minus "
        "what it held once the model was loaded: the forward pass (SDPA: no n² scores), the "
        "eager check of the first 48 tokens, and the maps kept.",
    ]
    return [table], raw
