"""A model and a text as a differentiable function of the text's input embeddings: what
`attribute` hands Captum, and what the agreement views read the same tokens from.

    the reader             ReaderLM.hidden_from_embeddings: the next unit's logits at a row
    a causal transformers  model(inputs_embeds=…): the next token's logits at a row
    model (a LoadedModel,  (on `pretrained.from_model`'s eager twin: the user's model keeps
    or with its tokenizer)  its attention implementation, mode and flags)
    an encoder (MiniLM)    the cosine similarity of its mean-pooled sentence embedding to a
                           second sentence's (sentence-transformers' own pooling for it)

The text is read exactly as the lens reads it (the reader's units after [BOS];
`pretrained.parts.model_inputs` for a transformers model), so scores, attention rows and
ablation line up token for token. A text longer than the model reads is refused, not cut.

Shape legend: B copies of the text (the path's steps), n tokens, C embedding width,
V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attention_core.attribution.result import AttributionRefused
from attention_core.limits import MAX_TEXT_CHARS, MAX_TOKENS
from attention_core.pooling import ReadablePieces, readable_pieces, word_groups
from attention_core.pretrained.bridge import NATIVE_REASON, is_native
from attention_core.pretrained.forward import count_tokens, encode
from attention_core.pretrained.load import LoadedModel, from_model
from attention_core.pretrained.parts import model_inputs
from attention_core.reader.weights import Reader, load_shipped

__all__ = ["Subject", "subject_for"]


@dataclass(frozen=True)
class Subject:
    """One text through one model, ready to be differentiated."""

    name: str
    kind: str  # "reader", "decoder" or "encoder"
    module: Any  # the torch module whose attention layers the views read (eager)
    loaded: LoadedModel | None  # a transformers model's LoadedModel; None for the reader
    reader: Reader | None
    text: str
    ids: list[int]  # (n,)
    tokens: list[str]  # (n,)
    special: list[bool]  # (n,)
    embeds: Any  # (1, n, C) the input embeddings, detached
    # decoders: embeds (B, n, C), position → logits (B, V); encoders: embeds → similarity (B,);
    # `module=` runs it through a stand-in sharing the model's weights (lens.ablation.branched)
    run: Callable[..., Any]
    vocab_size: int  # 0 for an encoder
    barred: dict[int, str]  # target ids refused, and why
    label: Callable[[int], str]
    characters: ReadablePieces
    words: ReadablePieces


def subject_for(model: Any, text: str, tokenizer: Any, second: str | None) -> Subject:
    """`model` ("reader", a Reader, a LoadedModel, a transformers model with `tokenizer`)
    reading `text`; `second` is an encoder's second sentence."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(
            f"the text is {len(text)} characters; attribution reads at most "
            f"{MAX_TEXT_CHARS}: shorten it"
        )
    if isinstance(model, str):
        if model != "reader":
            raise AttributionRefused(
                f"model {model!r}: pass 'reader', a transformers model with its tokenizer, "
                "or pretrained.load_model(…) / from_model(…)"
            )
        model = load_shipped()
    if isinstance(model, Reader):
        return _reader_subject(model, text)
    if is_native(model):
        raise AttributionRefused(
            NATIVE_REASON.format(
                what="attribution", needs="input embeddings, which the gradients go through"
            )
        )
    if not isinstance(model, LoadedModel):
        if getattr(model, "config", None) is None:
            raise AttributionRefused(
                f"attribute takes 'reader', a transformers model or a LoadedModel, not "
                f"{type(model).__name__}"
            )
        if tokenizer is None:
            raise ValueError(
                "a transformers model needs its tokenizer: attribute(model, text, "
                "tokenizer=tokenizer)"
            )
        _check_floats(model)
        model = from_model(model, tokenizer)
    _check_floats(model.model)
    return _hf_subject(model, text, second)


def _check_floats(model: Any) -> None:
    """Refuse a quantised model (its input embeddings or any layer in integers, e.g.
    torch's dynamic quantisation): no gradient goes through it."""
    embedding = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    weight = getattr(embedding, "weight", None)
    quantised = any(".quantized" in type(m).__module__ for m in model.modules())
    if quantised or weight is None or not weight.is_floating_point():
        raise AttributionRefused(
            "the model is quantised (integer weights): no gradient goes through it, so it "
            "is not differentiable where attribution needs it. Attribute the model in "
            "float32, bfloat16 or float16"
        )


def _reader_subject(reader: Reader, text: str) -> Subject:
    import torch

    from attention_core.reader.run import reader_ids, reader_tokens
    from attention_core.reader.vocab import BOS

    read = reader_tokens(text, reader.vocab)
    context = reader.config.context
    if len(read.tokens) > context:
        raise ValueError(
            f"the text is {len(read.tokens)} units with [BOS] and the reader reads at most "
            f"{context}: shorten it"
        )
    if len(read.tokens) < 2:
        raise ValueError(
            "the text has no unit the reader reads (a character, a word or a sign): type a sentence"
        )
    ids = reader_ids(read.tokens, reader.vocab)
    lm = reader.model
    with torch.no_grad():
        embeds = lm.get_input_embeddings()(torch.tensor([ids])).detach()  # (1, n, C)

    def run(e: Any, position: int, module: Any = None) -> Any:
        hidden, _ = (module or lm).hidden_from_embeddings(e)  # (B, n, C)
        return hidden[:, position] @ lm.token_embedding.weight.T  # (B, V)

    labels = [t.label for t in read.tokens]
    special = [t.special for t in read.tokens]
    vocab = reader.vocab
    characters = ReadablePieces(labels, [[i] for i in range(len(ids))], special)
    offsets = [(t.start, t.end) for t in read.tokens]
    return Subject(
        name="reader",
        kind="reader",
        module=lm,
        loaded=None,
        reader=reader,
        text=text,
        ids=ids,
        tokens=labels,
        special=special,
        embeds=embeds,
        run=run,
        vocab_size=len(vocab),
        barred={vocab.index[BOS]: "[BOS] only starts a sentence; the reader never predicts it"},
        label=lambda i: vocab.tokens[i],
        characters=characters,
        words=_words(labels, offsets, special, text),
    )


def _words(
    labels: list[str], offsets: list[tuple[int, int]], special: list[bool], text: str
) -> ReadablePieces:
    """The pieces grouped by jieba word as the lens pools them (`pooling.word_groups`)."""
    groups = word_groups(offsets, special, text)
    runs = [[int(i) for i in (groups.group == w).nonzero()[0]] for w in range(len(groups.spans))]
    out = [
        text[a:b] if joined else labels[run[0]]
        for (a, b), joined, run in zip(groups.spans, groups.joined, runs, strict=True)
    ]
    flags = [
        not joined and all(special[i] for i in run)
        for joined, run in zip(groups.joined, runs, strict=True)
    ]
    return ReadablePieces(out, runs, flags)


def _hf_subject(loaded: LoadedModel, text: str, second: str | None) -> Subject:
    import torch

    limit = min(MAX_TOKENS, loaded.max_length)
    total = count_tokens(loaded.tokenizer, text)
    if total > limit:
        raise ValueError(
            f"the text is {total} tokens and attribution on {loaded.name} reads at most "
            f"{limit}: shorten it"
        )
    if loaded.family == "encoder-decoder":
        raise AttributionRefused(
            f"{loaded.name} is an encoder-decoder: attribution explains a decoder's next "
            "token or an encoder's sentence embedding; bring a causal model or an encoder"
        )
    model, tokenizer = loaded.model, loaded.tokenizer
    enc, _ = encode(tokenizer, text, limit=limit)  # as pretrained.parts.model_inputs reads it
    ids = [int(i) for i in enc["input_ids"]]
    if not ids:
        raise ValueError("the text gives no tokens for this model: type a sentence")
    with torch.no_grad():
        embeds = model.get_input_embeddings()(torch.tensor([ids])).detach()  # (1, n, C)
    tokens = list(tokenizer.convert_ids_to_tokens(ids))
    specials = set(getattr(tokenizer, "all_special_ids", []))
    special = [i in specials for i in ids]
    offsets = [tuple(o) for o in enc.get("offset_mapping", [(0, 0)] * len(ids))]
    if loaded.family == "decoder":
        run, vocab_size = _decoder_run(loaded), int(model.get_output_embeddings().weight.shape[0])
        kind = "decoder"
    else:
        run, vocab_size, kind = _encoder_run(loaded, second), 0, "encoder"
    pad = getattr(tokenizer, "pad_token_id", None)
    barred = (
        {}
        if pad is None
        else {int(pad): "the padding token fills a batch; no model predicts it as a next token"}
    )
    return Subject(
        name=loaded.name,
        kind=kind,
        module=model,
        loaded=loaded,
        reader=None,
        text=text,
        ids=ids,
        tokens=tokens,
        special=special,
        embeds=embeds,
        run=run,
        vocab_size=vocab_size,
        barred=barred,
        label=lambda i: tokenizer.decode([i]) or str(tokenizer.convert_ids_to_tokens(i)),
        characters=readable_pieces(tokenizer, ids),
        words=_words(tokens, offsets, special, text),
    )


def _decoder_run(loaded: LoadedModel) -> Callable[..., Any]:
    """embeds (B, n, C), position → the next token's logits at that row (B, V), through
    the model's own forward (its positions, mask and head; only the rows from `position`
    on go through the head when the model takes `logits_to_keep`)."""
    import torch

    model = loaded.model
    if model.get_output_embeddings() is None:
        raise AttributionRefused(
            f"{loaded.name} has no language-model head: nothing turns its states into next "
            "tokens; load it with AutoModelForCausalLM"
        )

    def run(e: Any, position: int, module: Any = None) -> Any:
        n, m = e.shape[1], model if module is None else module
        mask = torch.ones(e.shape[:2], dtype=torch.long, device=e.device)  # (B, n)
        try:
            logits = m(inputs_embeds=e, attention_mask=mask, logits_to_keep=n - position)
            return logits.logits[:, 0]  # (B, V), the row at `position`
        except TypeError:  # a model without logits_to_keep
            return m(inputs_embeds=e, attention_mask=mask).logits[:, position]

    return run


def _encoder_run(loaded: LoadedModel, second: str | None) -> Callable[..., Any]:
    """embeds (B, n, C) → cos(mean-pooled last hidden state, the second sentence's) (B,):
    how sentence-transformers compares two sentences with MiniLM."""
    import torch

    if not isinstance(second, str) or not second.strip():
        raise AttributionRefused(
            f"{loaded.name} is an encoder without a head: it predicts no token, so no logit "
            "can be explained. Give a second sentence as the target (target='…'): the "
            "attribution then explains the similarity of the two sentences' embeddings"
        )

    def pooled(module: Any, **inputs: Any) -> Any:
        out = getattr(module, "base_model", module)(**inputs).last_hidden_state  # (B, n, C)
        return out.mean(dim=1)  # (B, C); no padding: every position counts

    with torch.no_grad():
        other = pooled(
            loaded.model, **model_inputs(loaded, second, min(MAX_TOKENS, loaded.max_length))
        )

    def run(e: Any, module: Any = None) -> Any:
        mask = torch.ones(e.shape[:2], dtype=torch.long, device=e.device)  # (B, n)
        m = loaded.model if module is None else module
        return torch.nn.functional.cosine_similarity(
            pooled(m, inputs_embeds=e, attention_mask=mask), other, dim=-1
        )  # (B,)

    return run
