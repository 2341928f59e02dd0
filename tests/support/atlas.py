"""A small atlas for the tests: a few dozen sentences (Chinese, English, repeats for the
induction statistic), indexed into a temporary folder in seconds."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SENTENCES", "build_fixture_index", "write_corpus"]

SENTENCES = [
    "中和有一個永和路",
    "老師在教室裡用投影機講解注意力機制，學生們都聽得非常認真喔。",
    "我們今天去圖書館看書，然後在公園散步。",
    "這個程式會讀取檔案並輸出結果。",
    "小貓跳到桌子上，它把杯子推倒了。",
    "天氣很好，我們去爬山吧。",
    "學生問老師問題，老師回答學生的問題。",
    "台北的捷運很方便，每天有很多人搭捷運上班。",
    "如果檔案不存在，程式會顯示錯誤訊息。",
    "他說他明天會來，可是他今天就來了。",
    "The animal didn't cross the street because it was too tired.",
    "The cat sat on the mat and the cat slept.",
    "Read the file and print every line of the file.",
    "This command lists the files in the current directory.",
    "The teacher explained attention to the students in the classroom.",
    "If the file does not exist, the program prints an error message.",
    "She said she would come tomorrow, but she came today.",
    "Harry Potter met Harry Potter's friend at the station.",
    "A B C D A B C D",
    "一二三四一二三四",
    "The quick brown fox jumps over the lazy dog.",
    "Attention heads look at other tokens in the sentence.",
    "注意力頭會看句子裡的其他字。",
    "每一列的總和都是一。",
]


def write_corpus(folder: Path, sentences: list[str] = SENTENCES) -> Path:
    """The sentences as one text file, a blank line between groups (as the corpus has)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.txt"
    path.write_text("\n".join(sentences[:12]) + "\n\n" + "\n".join(sentences[12:]) + "\n", "utf-8")
    return path


def build_fixture_index(out: Path, models: tuple[str, ...] = ("untrained", "reader")) -> Path:
    """An index of SENTENCES for `models` under `out` (chunks of 8 sentences)."""
    from attention_core.atlas.build import build

    corpus = write_corpus(out.parent / f"{out.name}-corpus")
    for model in models:
        build(model, corpus, out, chunk_size=8)
    return out
