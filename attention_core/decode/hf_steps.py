"""A transformers causal language model writing with its own key/value cache.

Each step is one call of the model on the new token alone, with `past_key_values` (its
own cache: a DynamicCache), `use_cache=True`, `output_attentions=True` on eager attention
and `output_hidden_states=True`: the attention it returns is the new query against every
cached key (1, H, 1, t) per layer, which is exactly the row that chooses the next token;
nothing earlier is recomputed. The model runs as `pretrained.from_model`'s eager twin, so
the user's model (SDPA, its hooks, its mode) is never changed. A sliding-window layer's
cache keeps only its window: its row is the window's weights, the keys it dropped at 0.

Shape legend: L layers, H query heads, t cached positions, C width, V vocabulary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from attention_core.decode.passes import Pass
from attention_core.decode.result import CacheSize, DecodeRefused
from attention_core.pretrained.forward import model_family
from attention_core.pretrained.load import LoadedModel, from_model

__all__ = ["FINAL_NORMS", "HFStepper", "final_norm", "hf_stepper"]

# where families keep the norm before the unembedding (Llama, Qwen, Mistral: model.norm;
# GPT-2, GPT-J, BLOOM: transformer.ln_f; GPT-NeoX: final_layer_norm; Phi: final_layernorm)
FINAL_NORMS = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f")


def hf_stepper(model: Any, tokenizer: Any) -> HFStepper:
    """A LoadedModel, or a transformers model with its tokenizer, as a stepper; refused
    (DecodeRefused) when it does not write text one token at a time."""
    if isinstance(model, LoadedModel):
        _check_writes(model.model, model.name)
        return HFStepper(model)
    config = getattr(model, "config", None)
    if config is None:
        raise DecodeRefused(
            f"decode takes 'reader', a transformers model or a LoadedModel, not "
            f"{type(model).__name__}"
        )
    if tokenizer is None:
        raise ValueError(
            "a transformers model needs its tokenizer: decode(model, prompt, "
            "steps, tokenizer=tokenizer)"
        )
    name = getattr(config, "_name_or_path", "") or type(model).__name__
    _check_writes(model, name)
    return HFStepper(from_model(model, tokenizer, name=name))


def _check_writes(model: Any, name: str) -> None:
    config = model.config
    if getattr(config, "is_encoder_decoder", False):
        raise DecodeRefused(
            f"{name} is an encoder-decoder: its decoder writes after a decoder prompt, which "
            "decode does not take; pretrained.run_model(loaded, text, generate=k) shows its "
            "decoder's writing and cross-attention, or bring a decoder-only model"
        )
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None:
        raise DecodeRefused(
            f"{name} has no language-model head (a base model, or an encoder such as MiniLM): "
            "nothing turns its states into next tokens; load it with AutoModelForCausalLM"
        )
    if model_family(config, model) != "decoder":
        raise DecodeRefused(
            f"{name} is an encoder (BERT, MiniLM…): it reads a whole text in both directions "
            "and writes nothing after it; bring a causal model (AutoModelForCausalLM: "
            "GPT-2, Llama, Qwen) or decode('reader', …)"
        )


def final_norm(model: Any) -> Any:
    """The norm the model applies before its unembedding, found by name (FINAL_NORMS)."""
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    for owner in (base, model):
        for name in FINAL_NORMS:
            module = getattr(owner, name, None) if owner is not None else None
            if isinstance(module, torch.nn.Module):
                return module
    raise DecodeRefused(
        f"no final norm found ({', '.join(FINAL_NORMS)} on {type(model).__name__}): the "
        "logit lens needs the norm the model applies before its unembedding"
    )


class HFStepper:
    """A decoder-only LoadedModel with its cache: `feed(ids)` reads ids after those read."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.name = loaded.name
        self.context = loaded.max_length
        self.head = self.model.get_output_embeddings()
        self.norm = final_norm(self.model)
        self.vocab_size = int(self.head.weight.shape[0])
        eos = self.model.generation_config.eos_token_id  # where generate() reads it
        self.eos_ids = frozenset([] if eos is None else [eos] if isinstance(eos, int) else eos)
        # Gemma 2 and 3 soft-cap the logits after the unembedding: the lens does the same
        self.cap = getattr(self.model.config, "final_logit_softcapping", None)
        self.cache: Any = None
        self.fed = 0  # positions read so far (a sliding-window layer keeps fewer)
        self.normed_last: bool | None = None  # whether hidden_states[-1] is after the norm

    def encode(self, prompt: str) -> list[int]:
        """The prompt's ids as the tokenizer makes them; an empty one is the model's BOS."""
        ids = list(self.tokenizer(prompt)["input_ids"]) if prompt else []
        if ids:
            return ids
        bos = getattr(self.tokenizer, "bos_token_id", None)
        bos = self.model.config.bos_token_id if bos is None else bos
        if bos is None:
            raise DecodeRefused(
                f"the prompt is empty and {self.name} has no beginning-of-text token to start "
                "from: type a prompt"
            )
        return [int(bos)]

    def token_id(self, token: int | str) -> int:
        if isinstance(token, str):
            vocab = self.tokenizer.get_vocab()
            if token in vocab:
                return int(vocab[token])
            ids = self.tokenizer(token, add_special_tokens=False)["input_ids"]
            if len(ids) != 1:
                raise ValueError(
                    f"{token!r} is {len(ids)} tokens to this tokenizer, not one of its "
                    f"vocabulary: force one token (an id or a piece such as "
                    f"{self.label(ids[0]) if ids else 'a word'!r})"
                )
            return int(ids[0])
        if not 0 <= int(token) < self.vocab_size:
            raise ValueError(f"token id {token} is outside the vocabulary 0..{self.vocab_size - 1}")
        return int(token)

    def label(self, token_id: int) -> str:
        text = self.tokenizer.decode([token_id])
        return text if text else str(self.tokenizer.convert_ids_to_tokens(token_id))

    @torch.inference_mode()
    def feed(self, ids: list[int]) -> Pass:
        device = self.head.weight.device
        out = self.model(
            input_ids=torch.tensor([ids], device=device),  # (1, q)
            past_key_values=self.cache,
            use_cache=True,
            output_attentions=True,
            output_hidden_states=True,
        )
        self.cache = out.past_key_values
        attentions, states = out.attentions, out.hidden_states
        if not attentions or any(a is None for a in attentions):
            raise DecodeRefused(f"{self.name} returned no attention weights with its cache")
        self.fed += len(ids)
        rows = torch.stack([self._row(a[0, :, -1].float()) for a in attentions])  # (L, H, t)
        cache = _cache_size(self.cache, heads=int(rows.shape[1]), positions=self.fed)
        logits = out.logits[0, -1].float().cpu()  # (V,), chosen from on the CPU
        last = [s[0, -1] for s in states[1:]]  # L × (C,): each layer's residual stream
        if self.normed_last is None:
            self.normed_last = self._find_last(last[-1], logits)
        normed = [self.norm(s) for s in last[:-1]]
        normed.append(last[-1] if self.normed_last else self.norm(last[-1]))
        lens = self._unembed(torch.stack(normed))  # (L, V)
        return Pass(logits=logits, rows=rows.cpu().numpy(), lens=lens.cpu(), cache=cache)

    def _row(self, row: torch.Tensor) -> torch.Tensor:
        """A layer's row (H, m) over the t positions read so far. A sliding-window layer's
        cache keeps only its window's last m keys: the keys it dropped are outside the
        window, where the model's own full forward gives them weight 0."""
        kept, t = row.shape[-1], self.fed
        if kept == t:
            return row
        if kept > t or not getattr(self.model.config, "sliding_window", None):
            raise DecodeRefused(
                f"{self.name}'s query met {kept} of the {t} positions read, and the model "
                "names no sliding window that would explain it"
            )
        return F.pad(row, (t - kept, 0))  # (H, t), the dropped keys first, at 0

    def _unembed(self, x: torch.Tensor) -> torch.Tensor:
        """States (…, C) → logits (…, V) float32 on the CPU, as the model's head makes them."""
        logits = self.head(x).float()
        if self.cap:
            logits = torch.tanh(logits / self.cap) * self.cap
        return logits.cpu()

    def _find_last(self, state: torch.Tensor, logits: torch.Tensor) -> bool:
        """Is the last of hidden_states already normed (GPT-2, Llama) or not? Whichever
        gives the model's own logits; refused when neither does (a soft cap, a scale)."""
        scale = 1e-4 * max(1.0, float(logits.abs().max()))
        for normed_last, x in ((True, state), (False, self.norm(state))):
            if torch.allclose(self._unembed(x), logits, atol=scale, rtol=0):
                return normed_last
        raise DecodeRefused(
            f"{self.name}'s logits are not its unembedding of its final norm (a scale or a "
            "cap after it that the lens does not know): a logit lens through them would not "
            "be the model's own"
        )


def _cache_size(cache: Any, *, heads: int, positions: int) -> CacheSize:
    """Per layer bytes of the cached keys and values (1, KV, t', D) each: t' = t, or a
    sliding-window layer's window."""
    layers = getattr(cache, "layers", None)
    pairs = [(layer.keys, layer.values) for layer in layers] if layers else list(cache)
    keys = [k for k, _ in pairs]
    return CacheSize(
        positions=positions,
        layer_positions=np.array([k.shape[-2] for k in keys], dtype=np.int64),
        heads=heads,
        kv_heads=int(keys[0].shape[1]),
        keys_bytes=np.array([k.numel() * k.element_size() for k in keys], dtype=np.int64),
        values_bytes=np.array([v.numel() * v.element_size() for _, v in pairs], dtype=np.int64),
    )
