"""The "Is attention an explanation?" page's models and computing: which model explains
(the trained reader, the packaged MiniLM, the Pretrained page's model), what it cannot take
(said in the UI's language before anything runs), and its agreement for a sentence, kept
for every visitor, with a bar and Cancel while it runs (`ui.cancellable`).

Not `st.cache_data`: the bar is drawn by `progress(done, total)` from inside the run, which
a cached function's replay cannot draw again; a run cancelled midway (the page reran from
inside `progress`) keeps nothing. The last few results are shared by every visitor.

Model keys: "reader"; "minilm" (the packaged all-MiniLM-L6-v2: the similarity of the
sentence's embedding to a second sentence's); "pretrained:<name>" (the model the Pretrained
page loaded last: a causal model explains its next token, an encoder a similarity).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.resources import minilm_dir
from ui.cancellable import run_or_cancelled
from ui.common import md_escape
from ui.language import tr
from ui.models import model_or_stop

if TYPE_CHECKING:
    from attention_core.attribution import Agreement

READER, MINILM, PRETRAINED = "reader", "minilm", "pretrained:"
_KEPT = 8
_kept: OrderedDict[tuple[str, ...], Agreement] = OrderedDict()
_lock = threading.Lock()


def model_keys(pretrained_name: str) -> list[str]:
    """The models offered: the reader, MiniLM when it is installed, and the Pretrained
    page's last model when one was typed there."""
    keys = [READER]
    if minilm_dir() is not None:
        keys.append(MINILM)
    if pretrained_name.strip():
        keys.append(PRETRAINED + pretrained_name.strip())
    return keys


def model_name(key: str) -> str:
    """How the page names the model `key`."""
    if key == READER:
        return tr("explain_model_reader")
    if key == MINILM:
        return tr("explain_model_minilm")
    return tr("explain_model_pretrained", name=key.removeprefix(PRETRAINED))


def model_or_stop_for(key: str) -> Any:
    """ "reader", or the LoadedModel of `key` (a message and st.stop() when it cannot load)."""
    if key == READER:
        return READER
    return model_or_stop("" if key == MINILM else key.removeprefix(PRETRAINED))


def model_kind(model: Any) -> str:
    """ "reader", or the LoadedModel's family: "decoder", "encoder" or "encoder-decoder"."""
    return READER if model == READER else str(model.family)


def refusal(key: str, model: Any, text: str, second: str, token: str) -> str | None:
    """Why `model` cannot explain `text` with this second sentence or target token (in the
    UI's language), or None."""
    name = md_escape(model_name(key))
    if len(text) > MAX_TEXT_CHARS:
        return tr("explain_too_many_chars", n=len(text), most=MAX_TEXT_CHARS)
    if model == READER:
        return _reader_refusal(text, token)
    if model.family == "encoder-decoder":
        return tr("explain_not_causal", model=name)
    from attention_core.pretrained.forward import count_tokens

    if not text.strip():
        return tr("explain_empty_model", model=name)
    limit = min(MAX_TOKENS, model.max_length)
    n = count_tokens(model.tokenizer, text)
    if n > limit:
        return tr("explain_too_long_model", n=n, most=limit, model=name)
    if model.family == "encoder":
        return None if second.strip() else tr("explain_second_empty")
    return _token_refusal(model.tokenizer, token, name) if token else None


def _reader_refusal(text: str, token: str) -> str | None:
    from attention_core.reader import load_shipped
    from attention_core.reader.run import reader_tokens
    from attention_core.reader.vocab import BOS

    reader = load_shipped()
    read = reader_tokens(text, reader.vocab)
    if len(read.tokens) < 2:
        return tr("explain_empty")
    if len(read.tokens) > reader.config.context:
        return tr("explain_too_long", n=len(read.tokens), most=reader.config.context)
    if token and token not in reader.vocab.index:
        return tr("explain_token_unknown", token=md_escape(token), model=tr("explain_model_reader"))
    if token == BOS:
        return tr("explain_token_barred", token=md_escape(token))
    return None


def _token_refusal(tokenizer: Any, token: str, name: str) -> str | None:
    """A target token the decoder cannot explain: not one token of its vocabulary, or its
    padding token."""
    vocab = tokenizer.get_vocab()
    if token in vocab:
        ids = [vocab[token]]
    else:
        ids = tokenizer(token, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        return tr("explain_token_unknown", token=md_escape(token), model=name)
    if ids[0] == getattr(tokenizer, "pad_token_id", None):
        return tr("explain_token_padding", token=md_escape(token))
    return None


def explained(
    key: str,
    model: Any,
    text: str,
    method: str,
    target: str | None,
    progress: Callable[[int, int], None] | None = None,
) -> Agreement:
    """`model`'s agreement for `text`, `method` first (attention_core.attribution); `target`:
    an encoder's second sentence, a decoder's token (None: its most likely next one)."""
    from attention_core.attribution import METHODS, agreement

    kept = (key, text, method, target or "")
    with _lock:
        if kept in _kept:
            _kept.move_to_end(kept)
            return _kept[kept]
    methods = [method, *(m for m in METHODS if m != method)]
    found = agreement(model, text, target=target, methods=methods, progress=progress)
    with _lock:
        _kept[kept] = found
        while len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return found


def run_key(key: str, method: str, target: str | None, text: str) -> str:
    """What a Cancel applies to: this model, method, target and sentence."""
    return hashlib.sha1("\x00".join([key, method, target or "", text]).encode()).hexdigest()


def agreement_or_cancelled(
    key: str, model: Any, text: str, method: str, target: str | None
) -> Agreement | None:
    """`explained`, with a bar and Cancel when it takes over a second (MiniLM: a few
    seconds); None (and a button to start again) once cancelled, for this run only."""
    return run_or_cancelled(
        lambda progress: explained(key, model, text, method, target, progress),
        key=run_key(key, method, target, text),
        prefix="explain",
    )
