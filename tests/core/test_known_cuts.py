"""The app's own sentences ship with jieba's cuts (attention_core/known_cuts.py), so a fresh
server's first heatmaps need no dictionary: each shipped cut must be jieba's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from attention_core.known_cuts import known_texts
from attention_core.settings import Settings
from attention_core.tokenize import KNOWN_CUTS_PATH, jieba_spans_live, tokenize

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_cut_is_jiebas_own() -> None:
    shipped = json.loads(KNOWN_CUTS_PATH.read_text(encoding="utf-8"))
    assert list(shipped) == known_texts()  # rebuild: python -m attention_core.known_cuts
    for text, spans in shipped.items():
        assert [tuple(s) for s in spans] == jieba_spans_live(text), text


def test_the_default_and_the_examples_are_known() -> None:
    texts = known_texts()
    assert Settings().text in texts and "貓坐在墊子上，因為它很累。" in texts
    assert [t.text for t in tokenize(Settings().text, "jieba")] == ["中和", "有", "一個", "永和路"]


def test_a_known_sentence_is_cut_without_loading_jieba_and_another_loads_it() -> None:
    code = (
        "import importlib\n"
        "tk = importlib.import_module('attention_core.tokenize')\n"
        "print([t.text for t in tk.tokenize('中和有一個永和路', 'auto')], tk._JIEBA is None)\n"
        "print([t.text for t in tk.tokenize('我在永和路上', 'auto')], tk._JIEBA is None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "['中和', '有', '一個', '永和路'] True"  # from the shipped cut
    assert out[1].endswith("False")  # jieba itself, loaded on demand
