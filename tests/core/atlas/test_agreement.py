"""The head atlas's agreement statistic (attention_core/atlas/rows.py, query.py): each
reader head's row against SciPy's Spearman ρ of that head's last attention row with the
integrated-gradients attribution computed here, the map's mean and spread against NumPy's
over those sentences, NULL for a model that predicts no token."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from attention_core.atlas.build import build
from attention_core.atlas.query import Atlas
from attention_core.atlas.sentences import sentence_id
from attention_core.attribution import attribute
from attention_core.lens import reader_attention
from attention_core.reader.weights import load_shipped

TEXTS = ["中和有一個永和路", "小貓跳到桌子上，它把杯子推倒了。", "This is a file of words."]


def test_each_reader_head_carries_its_rank_agreement_with_the_attribution(tmp_path: Path) -> None:
    build("reader", None, tmp_path, texts=TEXTS)
    atlas = Atlas.open("reader", tmp_path)
    reader = load_shipped()
    expected = np.zeros((len(TEXTS), 4, 4))
    for s, text in enumerate(TEXTS):
        found = attribute(reader, text)
        own = reader_attention(reader, text).attentions  # (L, H, n, n)
        y = np.abs(found.scores)
        for layer in range(4):
            for head in range(4):
                expected[s, layer, head] = stats.spearmanr(own[layer, head, -1], y).statistic
        rows = atlas._rows(
            "SELECT layer, head, agreement FROM heads WHERE sentence = ?", [sentence_id(text)]
        )
        for layer, head, value in rows:
            assert value == pytest.approx(expected[s, layer, head], abs=1e-6)
    head_map = atlas.head_map("all")
    for i, (layer, head) in enumerate(zip(head_map.layer, head_map.head, strict=True)):
        column = expected[:, layer, head]
        assert head_map.values["agreement"][i] == pytest.approx(column.mean(), abs=1e-6)
        assert head_map.spread["agreement"][i] == pytest.approx(column.std(ddof=1), abs=1e-6)
    best = atlas.search("agreement", 0.0, "all", limit=16)
    assert best and all(value >= 0.0 for *_, value in best)


def test_a_model_without_a_next_token_has_no_agreement(tmp_path: Path) -> None:
    build("untrained", None, tmp_path, texts=TEXTS[:1])
    atlas = Atlas.open("untrained", tmp_path)
    assert atlas._rows("SELECT count(*) FROM heads WHERE agreement IS NOT NULL") == [(0,)]
    assert np.isnan(atlas.head_map("all").values["agreement"]).all()
