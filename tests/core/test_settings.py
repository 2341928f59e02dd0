"""attention_core.settings: every value from a URL is validated, nothing ever raises."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.settings import (
    DEFAULT_TEXT,
    KEYS,
    MAX_URL_TEXT,
    Settings,
    head_options,
    nearest_heads,
    parse_settings,
)


def test_defaults_and_round_trip():
    s, problems = parse_settings({})
    assert s == Settings() and s.text == DEFAULT_TEXT and not problems
    custom = Settings(
        text="a b",
        tokenizer="char",
        attention="single",
        embed_dim=6,
        num_heads=3,
        seed=9,
        causal=True,
        positional=True,
        lang="zh-TW",
    )
    back, problems = parse_settings(custom.to_query_params())
    assert back == custom and not problems


def test_issue_example():
    s, problems = parse_settings(
        {
            "text": "中和有一個永和路",
            "tokenizer": "jieba",
            "attention": "multi",
            "embed_dim": "8",
            "num_heads": "2",
        }
    )
    assert (s.tokenizer, s.embed_dim, s.num_heads) == ("jieba", 8, 2) and not problems


@pytest.mark.parametrize(
    ("params", "key", "expected"),
    [
        ({"embed_dim": "8", "num_heads": "5"}, "num_heads", 4),
        ({"embed_dim": "-3"}, "embed_dim", 16),
        ({"embed_dim": "999999999"}, "embed_dim", 16),
        ({"embed_dim": "1e3"}, "embed_dim", 16),
        ({"num_heads": "0"}, "num_heads", 4),
        ({"seed": "abc"}, "seed", 0),
        ({"seed": "-1"}, "seed", 0),
        ({"seed": "1e99"}, "seed", 0),
        ({"causal": "maybe"}, "causal", False),
        ({"tokenizer": "<script>"}, "tokenizer", "auto"),
        ({"lang": "fr"}, "lang", "en"),
        ({"attention": ""}, "attention", "multi"),
    ],
)
def test_invalid_values_fall_back_with_a_problem(params, key, expected):
    s, problems = parse_settings(params)
    assert getattr(s, key) == expected
    assert [p.key for p in problems] == [key]
    assert len(problems[0].value) <= 40


def test_heads_follow_embed_dim_and_repeated_params_take_the_last():
    s, problems = parse_settings({"embed_dim": "6"})
    assert s.num_heads in head_options(6) and not problems  # default 4 → nearest divisor
    s, _ = parse_settings({"seed": ["1", "2"], "causal": ["true", "false"]})
    assert (s.seed, s.causal) == (2, False)
    assert head_options(1024)[-1] == 64 and nearest_heads(12, 5) == 4
    assert Settings(attention="single", num_heads=4).heads == 1


def test_text_from_url_is_kept_verbatim_but_long_text_stays_out_of_links():
    evil = "<img src=x onerror=alert(1)>**b** $$x$$"
    assert parse_settings({"text": evil})[0].text == evil
    assert parse_settings({"text": "a\x00b"})[0].text == "ab"
    assert "text" not in Settings(text="x" * (MAX_URL_TEXT + 1)).to_query_params()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_query_string_parses_to_valid_settings(query):
    s, _ = parse_settings(parse_qs(query, keep_blank_values=True))
    assert 1 <= s.embed_dim <= 1024 and s.embed_dim % s.num_heads == 0
    assert s.num_heads in head_options(s.embed_dim)
    assert s.lang in ("en", "zh-TW") and s.seed >= 0


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*KEYS, "other"]),  # every URL parameter, and one that is not
        st.one_of(st.text(max_size=50), st.lists(st.text(max_size=20))),
    )
)
def test_any_mapping_parses(params):
    s, problems = parse_settings(params)
    assert s.embed_dim % s.num_heads == 0
    assert all(p.key in params for p in problems)


# --- the trained reader: ?weights=trained&layer= ---------------------------------------------
def test_trained_weights_and_a_layer_come_from_the_link_and_go_back_into_it():
    s, problems = parse_settings({"weights": "trained", "layer": "2", "embed_dim": "8"})
    assert problems == [] and s.trained and s.layer == 2
    assert s.to_query_params()["weights"] == "trained" and s.to_query_params()["layer"] == "2"
    assert parse_settings(s.to_query_params())[0] == s
    # the sidebar's untrained sliders stay in the link; the computed view uses the checkpoint's
    assert s.embed_dim == 8 and s.effective.embed_dim == 128 and s.effective.num_heads == 4


def test_untrained_links_look_as_before_and_forget_a_layer():
    s, _ = parse_settings({"layer": "1"})
    assert not s.trained and "weights" not in s.to_query_params()
    assert "layer" not in s.to_query_params() and s.effective.layer is None
    assert Settings().effective == Settings()


def test_an_impossible_weights_or_layer_value_falls_back_with_a_reason():
    from attention_core.reader.card import shipped_shape

    s, problems = parse_settings({"weights": "<script>", "layer": "4"})
    assert not s.trained and s.layer is None
    assert {p.key: p.reason for p in problems} == {
        "weights": "reason_choice",
        "layer": "reason_range",
    }
    clearest = str(shipped_shape().default_layer)  # the checkpoint's clearest layer
    assert [p.fallback for p in problems if p.key == "layer"] == [clearest]
    for raw in ("-1", "1.5", "x", "9" * 30):
        assert parse_settings({"layer": raw})[1][0].key == "layer"


def test_a_trained_view_without_a_layer_starts_on_the_checkpoints_clearest():
    from attention_core.reader.card import shipped_shape

    s = Settings(weights="trained")
    assert s.effective.layer == shipped_shape().default_layer
    assert "layer" not in s.to_query_params()
