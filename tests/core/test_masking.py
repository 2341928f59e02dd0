"""attention_core.masking: padded batches against torch.nn.MultiheadAttention's
key_padding_mask and against each sentence run alone through the pipeline."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from attention_core.attention import build_attention
from attention_core.embedding import embed
from attention_core.limits import EXACT
from attention_core.masking import (
    PAD_TOKEN,
    future_share,
    padded_batch_attention,
    padding_mask,
)
from attention_core.pipeline import analyze
from attention_core.settings import Settings

TEXTS = ["中和有一個永和路", "貓坐在墊子上，因為它很累。"]
CONFIGS = [
    Settings(attention="multi", embed_dim=16, num_heads=4, seed=0),
    Settings(attention="single", embed_dim=12, num_heads=1, seed=3),
    Settings(attention="multi", embed_dim=8, num_heads=2, seed=7, positional=True),
]


@pytest.fixture(params=[(c, causal) for c in CONFIGS for causal in (False, True)])
def settings(request: pytest.FixtureRequest) -> Settings:
    base, causal = request.param
    return replace(base, causal=causal)


def test_padding_mask_by_hand() -> None:
    mask = padding_mask([2, 3], 3)
    assert mask.shape == (2, 1, 1, 3)
    assert mask[:, 0, 0].tolist() == [[True, True, False], [True, True, True]]
    causal = padding_mask([2, 3], 3, causal=True)
    assert causal.shape == (2, 1, 3, 3)
    assert causal[0, 0].tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, False],
    ]
    assert causal[1, 0].tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, True],
    ]
    with pytest.raises(ValueError, match="between 0 and n=3"):
        padding_mask([4], 3)


def test_batch_is_padded_with_pad_tokens(settings: Settings) -> None:
    batch = padded_batch_attention(TEXTS, settings)
    short, long = batch.lengths
    assert short < long == batch.n
    assert batch.tokens[0][short:] == [PAD_TOKEN] * (long - short)
    assert PAD_TOKEN not in batch.tokens[1]
    assert batch.key_mask.tolist() == [[i < k for i in range(batch.n)] for k in batch.lengths]
    assert batch.weights.shape == (2, settings.heads, batch.n, batch.n)


def test_padded_keys_get_exactly_zero_weight(settings: Settings) -> None:
    batch = padded_batch_attention(TEXTS, settings)
    short = batch.lengths[0]
    assert np.all(batch.weights[0, :, :, short:] == 0.0)
    assert batch.pad_weight == 0.0


def test_every_row_sums_to_one(settings: Settings) -> None:
    batch = padded_batch_attention(TEXTS, settings)
    # real rows, and (by the module's choice) padded query rows, which attend to real keys
    np.testing.assert_allclose(batch.weights.sum(-1), 1.0, atol=EXACT)


def test_padding_does_not_change_the_real_weights(settings: Settings) -> None:
    batch = padded_batch_attention(TEXTS, settings)
    for b, text in enumerate(TEXTS):
        k = batch.lengths[b]
        alone = analyze(replace(settings, text=text)).weights  # (H, k, k), no batch, no padding
        assert alone.shape[-1] == k
        np.testing.assert_allclose(batch.weights[b, :, :k, :k], alone, atol=EXACT)
        np.testing.assert_allclose(batch.alone[b], alone, atol=EXACT)
    assert batch.max_difference < 1e-6


def test_causal_weights_are_zero_above_the_diagonal() -> None:
    batch = padded_batch_attention(TEXTS, replace(CONFIGS[0], causal=True))
    upper = np.triu(np.ones((batch.n, batch.n), dtype=bool), k=1)
    assert np.all(batch.weights[:, :, upper] == 0.0)
    assert not batch.allowed[:, upper].any()


def test_matches_torch_multihead_attention_key_padding_mask() -> None:
    settings = CONFIGS[0]
    batch = padded_batch_attention(TEXTS, settings)
    ours = build_attention("multi", settings.embed_dim, settings.num_heads, seed=settings.seed)
    C = settings.embed_dim
    ref = ours.to_torch()  # torch's module, holding exactly our weights
    x = torch.cat([embed(tokens, C, seed=settings.seed) for tokens in batch.tokens])  # (B, n, C)
    ignore = torch.from_numpy(~batch.key_mask)  # torch: True = ignore this key
    with torch.no_grad():
        _, weights = ref(x, x, x, key_padding_mask=ignore, average_attn_weights=False)
    np.testing.assert_allclose(batch.weights, weights.numpy(), atol=EXACT)


def test_a_sentence_without_tokens_gets_zero_rows() -> None:
    batch = padded_batch_attention(["中和有一個永和路", "   "], CONFIGS[0])
    assert batch.lengths == [4, 0]
    assert np.all(batch.weights[1] == 0.0)
    assert batch.pad_weight == 0.0


def test_a_single_sentence_needs_no_padding() -> None:
    batch = padded_batch_attention(["中和有一個永和路"], CONFIGS[0])
    assert batch.key_mask.all()
    np.testing.assert_allclose(batch.weights[0], analyze(CONFIGS[0]).weights, atol=EXACT)


def test_no_texts_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one sentence"):
        padded_batch_attention([], CONFIGS[0])


def test_view_one_head_or_the_mean() -> None:
    batch = padded_batch_attention(TEXTS, CONFIGS[0])
    np.testing.assert_array_equal(batch.view(1, 2), batch.weights[1, 2])
    mean = batch.view(0)
    np.testing.assert_allclose(mean, batch.weights[0].mean(0))
    assert np.all(mean[:, batch.lengths[0] :] == 0.0)


def test_future_share_by_hand() -> None:
    weights = np.array([[0.5, 0.5], [0.2, 0.8]])
    assert future_share(weights) == pytest.approx(0.25)  # row 0 gives 0.5 ahead, row 1 nothing
    assert future_share(np.eye(3)[None]) == 0.0
    assert future_share(np.zeros((2, 0, 0))) == 0.0
    with pytest.raises(ValueError, match=r"\(H, n, n\)"):
        future_share(np.ones((2, 3)))


def test_future_share_of_encoder_and_decoder() -> None:
    encoder = analyze(Settings(causal=False)).weights
    decoder = analyze(Settings(causal=True)).weights
    assert future_share(encoder) > 0.1
    assert future_share(decoder) == 0.0
