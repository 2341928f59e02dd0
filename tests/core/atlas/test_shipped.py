"""What the package ships for the atlas (attention_core/data/corpus, data/atlas): a machine
that never built a corpus or an index opens the Atlas on a map, and "build a small index
here" works from the shipped sample. The shipped files are checked against their hashes,
the indexes against the models as they are now, and against a rebuild of the same
sentences; a damaged or stale index is passed over, never opened."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from attention_core.atlas import shipped
from attention_core.atlas.build import build
from attention_core.atlas.models import MODELS
from attention_core.atlas.query import Atlas
from attention_core.atlas.sentences import default_corpus, read_corpus
from attention_core.i18n import t
from attention_core.train.corpus import verify
from tests.support import teaching
from tests.support.apptest import chart, decode, md_unescape, texts


@pytest.fixture
def fresh_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No corpus built, no index built: empty cache folders, as on a new machine."""
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(tmp_path / "atlas"))
    monkeypatch.setenv("ATTENTION_STUDIO_CORPUS", str(tmp_path / "corpus"))
    return tmp_path


def test_the_sample_is_the_corpus_held_out_split_with_its_licences() -> None:
    manifest = verify(shipped.SAMPLE_DIR)  # its SHA-256 matches the shipped text
    assert set(manifest["outputs"]) == {"heldout.txt"}
    for source in manifest["sources"]:
        assert source["licences"], source["name"]
        assert (shipped.SAMPLE_DIR / source["copyright"]).is_file(), source["name"]
    sentences = read_corpus(shipped.SAMPLE_DIR / "heldout.txt").sentences
    assert len(sentences) > 2_000
    assert any("的" in s for s in sentences) and any(" the " in s for s in sentences)


def test_without_a_built_corpus_the_default_corpus_is_the_sample(fresh_machine: Path) -> None:
    assert default_corpus() == shipped.SAMPLE_DIR / "heldout.txt"


@pytest.mark.parametrize("model", MODELS)
def test_each_shipped_index_is_whole_and_of_the_model_as_it_is(model: str) -> None:
    folder = shipped.shipped_index(model)
    assert folder == shipped.SHIPPED_INDEX_DIR / model
    atlas = Atlas(folder)
    assert atlas.sentence_count == shipped.SHIPPED_SENTENCES
    assert json.loads((folder / "manifest.json").read_text())["fingerprint"] == (
        shipped.fingerprint(model)
    )


def test_the_shipped_index_equals_a_rebuild_of_its_sentences(tmp_path: Path) -> None:
    """The untrained module's index rebuilt here from the shipped sample (what `ship` runs)
    holds the same sentences and the same per-head means."""
    build("untrained", shipped.SAMPLE_DIR / "heldout.txt", tmp_path, limit=300)
    mine = Atlas.open("untrained", tmp_path).head_map("all")
    theirs = Atlas(shipped.shipped_index("untrained")).head_map("all")
    assert mine.sentences == theirs.sentences == shipped.SHIPPED_SENTENCES
    for metric, values in theirs.values.items():
        np.testing.assert_allclose(mine.values[metric], values, atol=1e-6, err_msg=metric)


def test_a_damaged_or_stale_shipped_index_is_passed_over(tmp_path: Path) -> None:
    base = tmp_path / "atlas"
    shutil.copytree(shipped.SHIPPED_INDEX_DIR, base)
    assert shipped.shipped_index("untrained", base) == base / "untrained"
    chunk = next((base / "untrained").glob("chunk-*/heads.parquet"))
    chunk.write_bytes(chunk.read_bytes()[:-10])  # a half-copied file
    assert shipped.shipped_index("untrained", base) is None
    manifest = base / "reader" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"reader ', '"reader 0'))  # retrained
    assert shipped.shipped_index("reader", base) is None
    (base / "hashes.json").unlink()
    assert shipped.shipped_index("minilm", base) is None


@pytest.mark.parametrize("lang", ["en", "zh-TW"])
def test_a_first_visit_opens_on_the_shipped_map(fresh_machine: Path, lang: str) -> None:
    at = teaching.open_page("atlas", {"lang": lang, "text": "中和有一個永和路"}, {})
    assert not at.exception, at.exception
    expected = Atlas(shipped.shipped_index("reader")).head_map("all")
    points = chart(at, "atlas_map")["data"][0]
    assert decode(points["x"]) == pytest.approx(expected.values["previous"])
    page = md_unescape(texts(at))
    assert t("atlas_shipped", lang, n=shipped.SHIPPED_SENTENCES) in page
    assert t("atlas_no_index", lang, folder="").split("，")[0][:8] in page  # in the expander


def test_build_a_small_index_here_from_the_sample(fresh_machine: Path) -> None:
    """The button builds the user's own index from the shipped sample; the page then shows
    it instead of the shipped one."""
    at = teaching.open_page("atlas", {"lang": "en"}, {"atlas_model": "untrained"})
    at.button(key="atlas_build").click().run()
    assert not at.exception, at.exception
    mine = Atlas.open("untrained", fresh_machine / "atlas")
    assert mine.sentence_count == 300
    assert t("atlas_shipped", "en", n=shipped.SHIPPED_SENTENCES) not in md_unescape(texts(at))
    points = chart(at, "atlas_map")["data"][0]
    assert decode(points["x"]) == pytest.approx(mine.head_map("all").values["previous"])


def test_models_side_by_side_from_the_shipped_indexes(fresh_machine: Path) -> None:
    at = teaching.open_page(
        "atlas", {"lang": "en"}, {"atlas_view": "compare", "atlas_compare_metric": "first"}
    )
    assert not at.exception, at.exception
    maps = [tr for tr in chart(at, "atlas_compare")["data"] if tr["type"] == "heatmap"]
    assert [np.shape(decode(m["z"])) for m in maps] == [(1, 4), (4, 4), (6, 12)]


def test_an_unwritable_cache_says_so_and_the_map_stays(
    fresh_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only home: building fails with the folder named; the shipped map still shows."""
    locked = fresh_machine / "locked"
    locked.mkdir()
    (locked / "atlas").write_text("a file where a folder should be")
    monkeypatch.setenv("ATTENTION_STUDIO_ATLAS", str(locked / "atlas" / "inside"))
    at = teaching.open_page("atlas", {"lang": "en"}, {"atlas_model": "untrained"})
    at.button(key="atlas_build").click().run()
    assert not at.exception, at.exception
    assert at.error and "locked/atlas/inside" in md_unescape(at.error[0].value)
    assert chart(at, "atlas_map")
