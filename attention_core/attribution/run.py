"""`attribute`: which input tokens moved one prediction, with Captum doing the maths.

    integrated_gradients   Captum's IntegratedGradients from an all-zero embedding baseline
                           (Sundararajan et al. 2017, "Axiomatic Attribution for Deep
                           Networks"): the path's steps run as one batch
    input_x_gradient       Captum's InputXGradient: the gradient at the text times the
                           embedding, no path (Shrikumar et al. 2016)
    occlusion              Captum's FeatureAblation with one feature per token: the target
                           for the text minus the target with that token's embedding set to
                           the baseline, every token in one batch

Each differentiates `subjects.Subject.run` with respect to the input embeddings (the output
of `get_input_embeddings()`, before positions are added) and sums over the embedding
dimension: one score per token. Why Captum: it is the field's reference implementation,
tested against the papers; this module only says what is differentiated.

Shape legend: B copies of the text, n tokens, C embedding width, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from attention_core.attribution.result import METHODS, Attribution, AttributionRefused
from attention_core.attribution.subjects import Subject, subject_for

__all__ = ["CAPTUM_HINT", "MAX_STEPS", "attribute", "attribute_subject"]

MAX_STEPS = 512  # integrated gradients' steps: 32 already close the gap to a few percent
CAPTUM_HINT = (
    "attribution needs Captum (the field's attribution library): "
    "pip install 'attention-studio[attribution]' (or pip install captum)"
)


def attribute(
    model: Any,
    text: str,
    *,
    tokenizer: Any = None,
    target: int | str | None = None,
    position: int = -1,
    method: str = "integrated_gradients",
    steps: int = 32,
    baseline: Any = None,
) -> Attribution:
    """One score per input token of `text` for the logit of `target` at `position`.

    `model`: "reader" (the shipped reader, or an `attention_core.reader.Reader`), a
    transformers causal LM with its `tokenizer`, or a `pretrained.LoadedModel`; an encoder
    without a head (MiniLM) takes a second sentence as `target` and explains the cosine
    similarity of the two sentences' mean-pooled embeddings.

    `target`: a token id or a token the vocabulary holds; default the model's own most
    likely next token at `position` (a row index, negative from the end). `baseline`:
    integrated gradients' and occlusion's starting embedding, (n, C) or (1, n, C); default
    all zeros. `steps`: integrated gradients' points along the path, run as one batch.

    Raises AttributionRefused (a ValueError) for a model that cannot be attributed (no
    gradient reaches its embeddings, an encoder without a second sentence, Captum missing)
    and ValueError for bad arguments (a text over the model's bound, a target outside the
    vocabulary or the padding token, a position outside the text, an unknown method).
    The model is left as it was: its mode is restored and no gradient is kept in it.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be a whole number from 2 to {MAX_STEPS}, got {steps!r}")
    second = target if isinstance(target, str) else None
    subject = subject_for(model, text, tokenizer, second)
    return attribute_subject(
        subject, target=target, position=position, method=method, steps=steps, baseline=baseline
    )


def attribute_subject(
    subject: Subject,
    *,
    target: int | str | None = None,
    position: int = -1,
    method: str = "integrated_gradients",
    steps: int = 32,
    baseline: Any = None,
) -> Attribution:
    """`attribute` on a text already read (`subjects.subject_for`): what `agreement` runs
    for each method without reading the text again."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    captum = _captum()
    import torch

    n = len(subject.ids)
    with _as_is(subject.module), torch.inference_mode(False), torch.enable_grad():
        embeds = subject.embeds.clone()  # (1, n, C); a normal tensor even under inference_mode
        base = _baseline(baseline, embeds)
        if subject.kind == "encoder":
            row, target_id, target_token = n - 1, None, str(target)
            forward = subject.run
        else:
            row = _position(position, n)
            target_id = _target(subject, target, embeds, row)
            target_token = subject.label(target_id)

            def forward(e: Any) -> Any:
                return subject.run(e, row)[:, target_id]  # (B,)

        output = _checked_output(forward, embeds, subject)
        baseline_output = None
        if method == "integrated_gradients":
            ig = captum.IntegratedGradients(forward)
            scores = ig.attribute(embeds, baselines=base, n_steps=steps, internal_batch_size=steps)
            with torch.no_grad():
                baseline_output = float(forward(base)[0])
        elif method == "input_x_gradient":
            scores = captum.InputXGradient(forward).attribute(embeds.requires_grad_())
        else:
            mask = torch.arange(n).view(1, n, 1).expand_as(embeds)  # (1, n, C): a token a feature
            scores = captum.FeatureAblation(forward).attribute(
                embeds, baselines=base, feature_mask=mask, perturbations_per_eval=n
            )[..., :1]  # every coordinate of a token holds the same difference: keep one
    return Attribution(
        method=method,
        model=subject.name,
        text=subject.text,
        tokens=subject.tokens,
        ids=subject.ids,
        special=subject.special,
        scores=scores.detach()[0].double().sum(-1).cpu().numpy(),  # (n,)
        position=row,
        target=target_id,
        target_token=target_token,
        output=output,
        baseline_output=baseline_output,
        steps=steps if method == "integrated_gradients" else None,
        kind=subject.kind,
        characters=subject.characters,
        words=subject.words,
    )


def _captum() -> Any:
    try:
        from captum import attr
    except ImportError as error:
        raise AttributionRefused(CAPTUM_HINT) from error
    return attr


@contextmanager
def _as_is(module: Any) -> Iterator[None]:
    """Eval mode inside (no dropout in the attributions), the module's own mode after."""
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


def _baseline(baseline: Any, embeds: Any) -> Any:
    import torch

    if baseline is None:
        return torch.zeros_like(embeds)  # (1, n, C)
    base = torch.as_tensor(np.asarray(baseline), dtype=embeds.dtype)
    base = base[None] if base.dim() == 2 else base
    if tuple(base.shape) != tuple(embeds.shape):
        raise ValueError(
            f"baseline must have the embeddings' shape {tuple(embeds.shape[1:])} (n, C), "
            f"got {tuple(base.shape)}"
        )
    return base


def _position(position: int, n: int) -> int:
    if isinstance(position, bool) or not isinstance(position, int) or not -n <= position < n:
        raise ValueError(
            f"position must be a row of the text's {n} tokens (0 … {n - 1}, or "
            f"negative from the end), got {position!r}"
        )
    return position % n


def _target(subject: Subject, target: int | str | None, embeds: Any, row: int) -> int:
    """The target's id, checked: in the vocabulary, not a token the model never predicts;
    None → the model's most likely next token at `row` other than those."""
    import torch

    if target is None:
        with torch.no_grad():
            logits = subject.run(embeds, row)[0].float()  # (V,)
        for barred in subject.barred:
            logits[barred] = float("-inf")
        return int(logits.argmax())
    if isinstance(target, str):
        target = _token_id(subject, target)
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise ValueError(f"target must be a token id or a token, got {target!r}")
    if not 0 <= int(target) < subject.vocab_size:
        raise ValueError(
            f"target {target} is not in the vocabulary of {subject.name} "
            f"(ids 0 … {subject.vocab_size - 1})"
        )
    if int(target) in subject.barred:
        raise ValueError(
            f"target {target} ({subject.label(int(target))!r}): "
            f"{subject.barred[int(target)]}; choose another token"
        )
    return int(target)


def _token_id(subject: Subject, token: str) -> int:
    if subject.reader is not None:
        index = subject.reader.vocab.index
        if token in index:
            return int(index[token])
        raise ValueError(
            f"{token!r} is not one unit of the reader's vocabulary: give a "
            "character, a word or a sign it knows, or an id"
        )
    tokenizer = subject.loaded.tokenizer
    vocab = tokenizer.get_vocab()
    if token in vocab:
        return int(vocab[token])
    ids = tokenizer(token, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ValueError(
            f"{token!r} is {len(ids)} tokens to this tokenizer, not one of its "
            "vocabulary: give one token or its id"
        )
    return int(ids[0])


def _checked_output(forward: Any, embeds: Any, subject: Subject) -> float:
    """f(x), after checking that a gradient reaches the embeddings."""
    probe = embeds.detach().clone().requires_grad_(True)
    try:
        out = forward(probe)  # (1,)
    except RuntimeError as error:
        raise AttributionRefused(
            f"{subject.name} could not run on its own input embeddings ({error})"
        ) from error
    if not out.requires_grad or not out.is_floating_point():
        raise AttributionRefused(
            f"{subject.name}'s output does not depend differentiably on its input embeddings "
            "(quantised layers, or a forward that turns gradients off): attribute the model "
            "in floating point"
        )
    return float(out.detach()[0])
