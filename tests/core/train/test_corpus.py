"""The corpus builder (attention_core/train/corpus.py): each step on small fixtures, whole
builds on a fake file system (dpkg's status and file lists, the packages' files), and one
build from the real Debian packages when they are installed (under CI they must be)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from attention_core.train import corpus
from attention_core.train.corpus import (
    CorpusError,
    Document,
    build,
    dedupe,
    fortune_entries,
    is_heldout,
    normalize,
    roff_to_text,
    sentences,
    split_documents,
    verify,
)
from tests.support.corpus import real_corpus as shared_real_corpus

DEBIAN = list(corpus.SOURCES)  # the fake root holds Debian packages only

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
HAN = re.compile(r"[\u4e00-\u9fff]")


def man(roff: str) -> bytes:
    return gzip.compress(roff.encode("utf-8"), mtime=0)


def fake_packages() -> dict[str, dict[str, bytes | str]]:
    """package → {installed path: content}; a str content is a symlink's target."""
    demo_roff = (FIXTURES / "demo.1.gz").read_bytes()
    return {
        "manpages-zh": {
            "/usr/share/man/zh_TW/man1/demo.1.gz": demo_roff,
            "/usr/share/man/zh_TW/man1/alias.1.gz": "demo.1.gz",  # a symlink: skipped
            # shadowed by the zh_TW page of the same name: must not appear
            "/usr/share/man/zh_CN/man1/demo.1.gz": man(
                ".SH 名称\n这个简体版本应该被繁体版取代。\n"
            ),
            "/usr/share/man/zh_CN/man1/only.1.gz": man(
                ".SH 描述\n这一页只在简体版里，我们会转换它。\n"
            ),
        },
        "fortunes-zh": {
            "/usr/share/games/fortunes/chinese": (FIXTURES / "chinese").read_bytes(),
            "/usr/share/games/fortunes/tang300": "唐詩不在語料中。\n%\n".encode(),  # not picked
        },
        "manpages": {
            "/usr/share/man/man1/demo.1.gz": man(
                ".TH DEMO 1\n.SH NAME\ndemo \\- list files\n.SH DESCRIPTION\nThe\n.B demo\n"
                "command lists every file it is given.\n"
            ),
        },
        "manpages-dev": {
            "/usr/share/man/man2/open.2.gz": man(
                ".SH DESCRIPTION\nThe open() system call opens the file named by its path.\n"
            ),
        },
    }


def fake_root(tmp_path: Path, packages: dict[str, dict[str, bytes | str]]) -> Path:
    """A file system holding `packages` as dpkg installs them."""
    root = tmp_path / "root"
    info = root / "var/lib/dpkg/info"
    info.mkdir(parents=True)
    status = []
    for package, files in packages.items():
        for path, content in files.items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                target.symlink_to(content)
            else:
                target.write_bytes(content)
        doc = root / "usr/share/doc" / package
        doc.mkdir(parents=True)
        (doc / "copyright").write_text("Files: *\nLicense: GPL-2+\n\nFiles: x\nLicense: MIT\n")
        (info / f"{package}.list").write_text("\n".join(["/.", "/usr", *files]) + "\n")
        status.append(
            f"Package: {package}\nStatus: install ok installed\nInstalled-Size: 12\n"
            f"Version: 1.0-{len(status)}\n"
        )
    (root / "var/lib/dpkg/status").write_text("\n".join(status))
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return fake_root(tmp_path, fake_packages())


def lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


# --- the steps ------------------------------------------------------------------------------


def test_roff_to_text_keeps_the_prose_and_drops_the_markup():
    roff = gzip.decompress((FIXTURES / "demo.1.gz").read_bytes()).decode("utf-8")
    assert roff_to_text(roff) == [
        "名稱",
        "demo - 示範用的手冊頁",
        "描述",
        # .B/.I keep their words; wrapped Chinese lines join without a space
        "demo 把檔案列出來。它會讀取設定檔並且顯示結果。這一行接著上一行，中間不應有空格。",
        # .BR joins its arguments; \(em and \[u4E2D] become characters
        "參見 ls(1) 和 grep(1)— 兩個常用的命令。字元中來自 Unicode 跳脫。",
        "-a, --all",  # a .TP tag is a paragraph of its own
        "顯示所有的檔案，包括隱藏檔。",
        "第一行不填充",  # .nf … .fi: each line a paragraph
        "第二行不填充",
        "SEE ALSO",
        "The demo command lists files. It is a “demo”.",
    ]  # gone: the comments, .TH, the .de macro, the .TS table


def test_roff_to_text_mdoc_and_unclosed_requests():
    mdoc = ".Dd 2020\n.Sh NAME\n.Nm demo\n.Nd show a demo\n.Sh DESCRIPTION\nSome text.\n"
    assert roff_to_text(mdoc) == ["NAME", "demo show a demo", "DESCRIPTION", "Some text."]
    assert roff_to_text(".so man1/other.1\n") == []  # a redirect page has no text
    assert roff_to_text(".ig\nhidden\n..\nshown\n") == ["shown"]


def test_fortune_entries_split_on_percent_lines_and_lose_colour_codes():
    entries = fortune_entries((FIXTURES / "chinese").read_text(encoding="utf-8"))
    assert entries == [
        ["我们这里的软件很好用。 --《测试》"],
        ["要有礼貌", "在 Debian 这种规模的项目中，很难避免遇到与你意见不和的人。"],
        ["The quick brown fox jumps over the lazy dog."],
        ["我们这里的软件很好用。"],
    ]
    assert fortune_entries("%\n\n%\n") == []


def test_opencc_turns_the_simplified_entry_into_taiwan_traditional():
    from opencc import OpenCC

    convert = OpenCC(corpus.OPENCC_CONFIG).convert
    text = normalize(
        fortune_entries((FIXTURES / "chinese").read_text("utf-8"))[0][0], convert=convert
    )
    assert text.startswith("我們這裡的軟體很好用。")  # 们→們, 这→這, 里→裡, s2twp: 软件→軟體
    assert "们" not in text and "这" not in text
    assert normalize("cafe\u0301  \u3000 x") == "café x"  # NFC, one space


def test_sentences_cut_chinese_and_english_and_keep_only_prose():
    assert sentences("第一句。第二句！Is it here? Yes it is. And so on, e.g. this.") == [
        "第一句。",
        "第二句！",
        "Is it here?",
        "Yes it is.",
        "And so on, e.g. this.",  # no cut before a small letter
    ]
    assert sentences("好。Is it?") == []  # under three characters; under three words
    assert sentences("-a, --all") == []
    assert sentences("│ 表格 │ 的框線 │") == []
    assert sentences("$ ls -l /etc/ >> 1 2 3") == []
    assert sentences("foo bar") == []  # English needs three words


def test_dedupe_keeps_the_first_occurrence_and_drops_empty_documents():
    docs = [
        Document("a", "s", ("一", "二", "一")),
        Document("b", "s", ("二",)),
        Document("c", "s", ("三", "一")),
    ]
    assert dedupe(docs) == [Document("a", "s", ("一", "二")), Document("c", "s", ("三",))]


def test_the_split_is_deterministic_whole_documents_and_about_five_percent():
    docs = [Document(f"man:page{i}.1", "s", (f"line {i} a", f"line {i} b")) for i in range(4000)]
    train, heldout = split_documents(docs)
    assert (train, heldout) == split_documents(docs)
    assert split_documents(list(reversed(docs)))[1] == list(reversed(heldout))  # order-free
    assert 0.035 < len(heldout) / len(docs) < 0.065
    assert {d.key for d in train}.isdisjoint(d.key for d in heldout)
    assert len(train) + len(heldout) == len(docs)  # every document whole, on one side
    assert all(is_heldout(d.key) for d in heldout) and not any(is_heldout(d.key) for d in train)


# --- whole builds on a fake file system -------------------------------------------------------


def test_build_writes_the_corpus_and_a_manifest_whose_hashes_match(root: Path, tmp_path: Path):
    out = tmp_path / "out"
    manifest = build(out, root=root, fraction=0.5, sources=DEBIAN)
    assert verify(out) == manifest == json.loads((out / "manifest.json").read_text("utf-8"))
    for name, entry in manifest["outputs"].items():
        data = (out / name).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data) and entry["chars"] == len(data.decode("utf-8"))
    train, heldout = lines(out / "train.txt"), lines(out / "heldout.txt")
    assert train and heldout and set(train).isdisjoint(heldout)
    assert len(train + heldout) == len(set(train + heldout))  # deduplicated
    everything = "\n".join(train + heldout)
    assert "我們這裡的軟體很好用。" in everything  # the fortune, converted (s2twp)
    assert "這一頁只在簡體版裡，我們會轉換它。" in everything  # a zh_CN-only page, converted
    assert "取代" not in everything  # the zh_CN page that has a zh_TW one
    assert "唐詩" not in everything and "表格" not in everything and "註解" not in everything
    assert "The demo command lists every file it is given." in train
    # a page and its translation share a key (man:demo.1), so they share a side
    assert "demo 把檔案列出來。" in train
    sources = {s["name"]: s for s in manifest["sources"]}
    assert list(sources) == list(corpus.SOURCES)
    assert sources["manpages-zh"]["files"] == 3  # the symlink is not read
    assert sources["manpages-zh"]["opencc"] == sources["fortunes-zh"]["opencc"] == "s2twp"
    assert sources["manpages"]["opencc"] is None
    assert sources["manpages"]["licences"] == ["GPL-2+", "MIT"]
    assert sources["fortunes-zh"]["version"] == "1.0-1"
    assert manifest["opencc"]["config"] == "s2twp"
    han = sum(o["han_chars"] for o in manifest["outputs"].values())
    assert han == len(HAN.findall(everything)) == sum(s["han_chars"] for s in sources.values())


def test_two_builds_are_byte_identical(root: Path, tmp_path: Path):
    build(tmp_path / "one", root=root, sources=DEBIAN)
    build(tmp_path / "two", root=root, sources=DEBIAN)
    for name in ("train.txt", "heldout.txt", "manifest.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_a_missing_package_names_the_apt_get_command(tmp_path: Path, capsys):
    packages = fake_packages()
    del packages["fortunes-zh"], packages["manpages"]
    root = fake_root(tmp_path, packages)
    command = "apt-get install -y --no-install-recommends fortunes-zh manpages"
    with pytest.raises(CorpusError, match=re.escape(command)):
        build(tmp_path / "out", root=root, sources=DEBIAN)
    assert corpus.main(["build", "--out", str(tmp_path / "out"), "--root", str(root)]) == 1
    assert command in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing half-written
    build(tmp_path / "out", root=root, sources=["manpages-zh"])  # the installed one builds


def test_unknown_sources_and_files_removed_by_dpkg_excludes_are_clear(root: Path, tmp_path: Path):
    with pytest.raises(CorpusError, match=r"unknown source.*known: manpages-zh"):
        build(tmp_path / "out", root=root, sources=["wikipedia"])
    (root / "usr/share/games/fortunes/chinese").unlink()
    with pytest.raises(CorpusError, match=r"path-exclude.*--reinstall fortunes-zh"):
        build(tmp_path / "out", root=root, sources=["fortunes-zh"])


def test_verify_says_how_to_rebuild_a_missing_or_changed_corpus(root: Path, tmp_path: Path):
    with pytest.raises(CorpusError, match=r"no corpus in .*attention_core\.train\.corpus build"):
        verify(tmp_path / "nothing")
    build(tmp_path / "out", root=root, sources=DEBIAN)
    with (tmp_path / "out" / "train.txt").open("a", encoding="utf-8") as f:
        f.write("一行多出來的字。\n")
    with pytest.raises(CorpusError, match=r"train\.txt is missing or changed; rebuild"):
        verify(tmp_path / "out")


def test_default_dir_is_the_users_cache(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("ATTENTION_STUDIO_CORPUS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert corpus.default_dir() == tmp_path / "attention-studio" / "corpus"
    monkeypatch.setenv("ATTENTION_STUDIO_CORPUS", str(tmp_path / "mine"))
    assert corpus.default_dir() == tmp_path / "mine"


# --- the real packages --------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """This run's build from the installed Debian and PyPI packages (its folder and
    manifest, shared with the reader's tests: tests/support/corpus.py); skipped locally
    without the packages, a failure under CI."""
    return shared_real_corpus(tmp_path_factory)


def test_build_from_the_installed_debian_packages(real_corpus: tuple[Path, dict]):
    """Several MB of Chinese: ≥ 900 000 Han characters (about 2.7 MB of UTF-8) and
    ≥ 500 000 English words."""
    folder, manifest = real_corpus
    outputs = manifest["outputs"].values()
    assert sum(o["han_chars"] for o in outputs) >= 900_000
    assert sum(o["english_words"] for o in outputs) >= 500_000
    held = manifest["outputs"]["heldout.txt"]["documents"]
    assert 0.03 < held / sum(o["documents"] for o in outputs) < 0.07
    heldout = lines(folder / "heldout.txt")
    assert set(heldout).isdisjoint(lines(folder / "train.txt"))
    assert not any(re.search(r"\\f[BIRP]|\x1b", line) for line in heldout)  # fonts, colours
    for source in manifest["sources"]:
        assert source["version"] and source["licences"] and source["documents"], source


def test_the_shipped_readers_word_head_holds_on_the_rebuilt_everyday_set(
    real_corpus: tuple[Path, dict],
):
    """The card's everyday same-word figure, measured again here on the everyday held-out
    set this build wrote (not read from the card): the shipped reader's best head gives
    the earlier characters of its own jieba word ≥ 2.0 × what it gives the same places when
    the words are shuffled (lengths kept), on every EVERYDAY_STRIDE-th sentence; the card
    says the same numbers, and its human-segmentation figure agrees."""
    import numpy as np
    import torch

    from attention_core.reader import load_shipped
    from attention_core.reader.fit import EVERYDAY_STRIDE
    from attention_core.reader.measure import same_word
    from attention_core.train.everyday import read_everyday

    folder, manifest = real_corpus
    assert manifest["everyday"]["sentences"] >= 4_000
    sample = read_everyday(folder / corpus.EVERYDAY)[::EVERYDAY_STRIDE]
    assert not {s.text for s in sample} & set(lines(folder / "train.txt"))
    reader = load_shipped()
    torch.set_num_threads(1)
    pairs = ((s.text, None) for s in sample)
    figure = same_word(reader.model, reader.vocab, pairs, min_cjk=4, limit=len(sample))
    card = reader.card["everyday"]
    assert figure["sentences"] == card["same_word"]["sentences"] >= 1_000
    assert np.max(figure["ratio"]) >= 2.0
    np.testing.assert_allclose(figure["ratio"], card["same_word"]["ratio"], atol=2e-3)
    assert np.max(card["same_word_gold"]["ratio"]) >= 2.0
