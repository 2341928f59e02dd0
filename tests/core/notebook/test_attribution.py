"""Tests for attention_core/notebook/attribution.py: the view's arrays are the agreement's,
its HTML is offline and escapes the text, in both languages."""

from __future__ import annotations

import numpy as np

from attention_core.notebook import attribution_view
from attention_core.reader.weights import load_shipped


def test_the_view_draws_two_rows_and_the_table_offline_with_its_arrays():
    reader = load_shipped()
    view = attribution_view(reader, "永和<b>路</b>", steps=4)
    page = view.to_html()
    assert "<b>路" not in view.data, view.data[view.data.find("<b>路") - 300 :]
    assert "&lt;" in view.data  # the text is never markup
    assert "<script" not in page and "http" not in page  # offline, nothing fetched
    assert view.data.count("<tr>") == 1 + 16  # the header and every head of the reader
    ig = view.result.attributions["integrated_gradients"]
    np.testing.assert_array_equal(view.scores, ig.scores)
    assert view.rho.shape == (3, 3, 4, 4) and len(view.tokens) == len(ig.ids)
    assert "completeness gap" in page
    chinese = attribution_view(
        reader, "中和有一個永和路", steps=4, lang="zh-TW", method="occlusion"
    )
    assert "注意力是解釋嗎" in chinese.data and "完整性差距" not in chinese.data
    assert chinese.result.methods[0] == "occlusion"
