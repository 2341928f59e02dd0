"""The long lens (attention_core/long/lens.py) against the dense lens on the same weights:
received attention = column means of (H, n, n) weights, sink mass = lens.sinks' mass, the
rollout row = lens.rollout's last layer, at n ≤ 512 where both exist (the module's own maps
and a real model's), and a tiny real model's figures at 4 096 tokens against its own eager
output_attentions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_core.lens import rollout, sinks
from attention_core.limits import EXACT
from attention_core.long.lens import received, rollout_row, sink_mass, top_keys
from attention_core.long.map import AttentionMap
from tests.support.availability import needs_minilm


def _maps(L: int, H: int, n: int, *, causal: bool, seed: int = 0) -> list[AttentionMap]:
    g = torch.Generator().manual_seed(seed)
    return [
        AttentionMap.from_qk(
            torch.randn(H, n, 8, generator=g) * 2,
            torch.randn(H, n, 8, generator=g) * 2,
            causal=causal,
            scratch=4096,  # small blocks: many of them at n = 300
        )
        for _ in range(L)
    ]


def _dense(maps: list[AttentionMap]) -> np.ndarray:
    """(L, H, n, n): every weight, from each map's exact rectangle."""
    n = maps[0].n
    return np.stack(
        [np.stack([m.exact(h, slice(0, n), slice(0, n)) for h in range(m.num_heads)]) for m in maps]
    ).astype(np.float64)


@pytest.mark.parametrize("causal", [False, True])
def test_received_sinks_and_rollout_equal_the_dense_lens(causal: bool) -> None:
    maps = _maps(3, 4, 300, causal=causal)
    dense = _dense(maps)  # (3, 4, 300, 300)
    for h in range(4):
        np.testing.assert_allclose(received(maps[1], h), dense[1, h].mean(axis=0), atol=EXACT)
    tokens = ["[CLS]", *[("," if i % 7 == 0 else f"w{i}") for i in range(298)], "[SEP]"]
    special = [True, *[False] * 298, True]
    mass, present, got = sink_mass(maps, tokens, special)
    want = sinks(dense, np.ones(dense.shape[:3]), tokens, special)
    assert got.shape == (3, 4, 300) and present == want.present
    for kind, value in want.mass.items():
        np.testing.assert_allclose(mass[kind], value, atol=EXACT)
    np.testing.assert_allclose(rollout_row(maps, 123), rollout(dense)[-1, 123], atol=EXACT)


@needs_minilm
def test_a_real_models_received_attention_sinks_and_rollout_at_4096_tokens() -> None:
    """A tiny Llama's (built offline, random weights) long-lens figures at 4 096 tokens
    against its own eager output_attentions: every head's received attention, the sink
    mass of each kind of sink token and the last query's rollout row."""
    from attention_core.lens import SINK_KINDS
    from attention_core.lens.sink_tokens import sink_positions
    from attention_core.long.pretrained import run_model_long
    from attention_core.pretrained import from_model
    from tests.support.models import minilm_tokenizer, tiny_decoder

    tokenizer = minilm_tokenizer()
    model = tiny_decoder("LlamaConfig", tokenizer.vocab_size, num_key_value_heads=2)
    text = "the cat sat on the mat, and then it slept. " * 400  # past 4 096 tokens
    long = run_model_long(from_model(model, tokenizer, name="llama"), text)
    assert long.n == 4096
    inputs = tokenizer(text, return_tensors="pt", truncation=True, max_length=4096)
    with torch.no_grad():  # the reference: L × (1, H, n, n), 537 MB
        own = model.model(**inputs, output_attentions=True, use_cache=False).attentions
    mass, present, got = sink_mass(long.maps, long.tokens, long.special)
    where = sink_positions(long.tokens, long.special)
    assert all(present[kind] for kind in SINK_KINDS)  # [CLS], [SEP], the first token, ","
    row = torch.zeros(4096, dtype=torch.float64)
    row[4095] = 1
    for layer in range(len(own) - 1, -1, -1):  # row 4095 of Ã_L ⋯ Ã_1 (lens.rollout)
        a = own[layer][0].double()  # (H, n, n)
        np.testing.assert_allclose(got[layer], a.mean(dim=1).numpy(), atol=EXACT)
        for kind in SINK_KINDS:
            want = a[..., torch.from_numpy(where[kind])].sum(dim=-1).mean(dim=-1)  # (H,)
            np.testing.assert_allclose(mass[kind][layer], want.numpy(), atol=EXACT)
        row = 0.5 * row + 0.5 * (row @ a.mean(dim=0))
    np.testing.assert_allclose(rollout_row(long.maps, 4095), row.numpy(), atol=EXACT)


def test_top_keys_largest_first_ties_by_position() -> None:
    assert top_keys(np.array([0.1, 0.4, 0.1, 0.4]), 3) == [(1, 0.4), (3, 0.4), (0, 0.1)]
    assert top_keys(np.array([0.5]), 9) == [(0, 0.5)]
    assert top_keys(np.array([0.5]), 0) == []


def test_a_long_minimal_pair_equals_the_dense_row_change() -> None:
    """long_row_change against lens.row_change on the same maps' full weights: two texts of
    300 tokens that differ in two places (one token swapped, one inserted)."""
    from attention_core.lens import row_change
    from attention_core.long.lens import long_row_change

    tokens_a = [f"w{i % 37}" for i in range(300)]
    tokens_b = [*tokens_a[:100], "other", *tokens_a[101:200], "new", *tokens_a[200:299]]
    maps_a = _maps(2, 3, 300, causal=True, seed=3)
    maps_b = _maps(2, 3, 300, causal=True, seed=4)
    got = long_row_change(maps_a, tokens_a, maps_b, tokens_b, 250)
    want = row_change(_dense(maps_a), tokens_a, _dense(maps_b), tokens_b, 250)
    assert got is not None and want is not None
    assert got.pairs == want.pairs and got.query == want.query == (250, 251)
    np.testing.assert_allclose(got.change, want.change, atol=EXACT)
    np.testing.assert_allclose(got.rows_b, want.rows_b, atol=EXACT)
    assert long_row_change(maps_a, tokens_a, maps_b, tokens_b, 100) is None  # swapped away
