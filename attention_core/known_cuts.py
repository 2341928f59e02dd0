"""jieba's cuts of the app's own sentences, shipped so a fresh server needs no dictionary.

    python -m attention_core.known_cuts        # rewrites data/jieba/known_cuts.json

The sentences: the default one (`Settings().text`) and every example of
data/examples.json that has CJK in it. Each entry is what `tokenize`'s jieba mode cuts
(`attention_core.tokenize.jieba_spans_live`: spans of the original text). The app looks a
sentence up there first, so the landing page's first heatmaps on a fresh server do not wait
for jieba's dictionary; tests/core/test_known_cuts.py checks every entry against jieba.
"""

from __future__ import annotations

import json

from attention_core.resources import DATA_DIR
from attention_core.settings import Settings
from attention_core.tokenize import KNOWN_CUTS_PATH, contains_cjk, jieba_spans_live

__all__ = ["known_texts", "main"]


def known_texts() -> list[str]:
    """The sentences whose cuts ship: the default, then the examples with CJK."""
    examples = json.loads((DATA_DIR / "examples.json").read_text(encoding="utf-8"))
    texts = [Settings().text, *(t for group in examples.values() for t in group)]
    return list(dict.fromkeys(t for t in texts if contains_cjk(t)))


def main() -> None:
    cuts = {text: [list(span) for span in jieba_spans_live(text)] for text in known_texts()}
    lines = [f" {json.dumps(t, ensure_ascii=False)}: {json.dumps(c)}" for t, c in cuts.items()]
    KNOWN_CUTS_PATH.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"wrote {KNOWN_CUTS_PATH} ({len(cuts)} sentences)")


if __name__ == "__main__":
    main()
