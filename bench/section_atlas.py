"""Section "atlas": the head atlas (attention_core/atlas, pages/atlas.py).

* build rate: MiniLM over the first SENTENCES sentences of the corpus's held-out split
  (the CLI's settings: one torch thread, chunks of 128), tokens/s and sentences/s, and
  the time that rate gives for 10 000 sentences (the issue's target: ≤ 10 min), an
  extrapolation from the measured sentences' mean length, said so in the table;
* index size on disk, per 1 000 sentences;
* opening the index (DuckDB over the chunks, the in-memory summary), cold in this process;
* the page: pages/atlas.py through AppTest on that index, first run (index opened, map
  drawn) and a rerun; AppTest's script run is the server's work for a page visit;
* queries: the head map for Chinese, the search, a head's top sentences, its pairs from
  one token, where a sentence falls: median of REPEATS (the issue's target: ≤ 200 ms).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.tables import Table, fmt_ms, fmt_s, median

__all__ = ["run"]

SENTENCES = 1000
REPEATS = 20
TARGET = 10_000


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _timed(function: Any, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return median(times)


def _page_runs(folder: Path) -> tuple[float, float]:
    """(first run, rerun) of pages/atlas.py through AppTest on the index in `folder`."""
    from streamlit.testing.v1 import AppTest

    from bench.measure import REPO

    os.environ["ATTENTION_STUDIO_ATLAS"] = str(folder)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()  # the app's first run: sidebar, imports (not the atlas's)
    at.switch_page("pages/atlas.py")
    at.session_state["atlas_model"] = "minilm"
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the atlas page failed: {at.exception}")
    start = time.perf_counter()
    at.run()
    return first, time.perf_counter() - start


def run(*, quick: bool = False) -> tuple[list[Table], dict]:
    import torch

    from attention_core.atlas.build import build
    from attention_core.atlas.models import open_model
    from attention_core.atlas.query import Atlas

    count = 200 if quick else SENTENCES
    torch.set_num_threads(1)  # as the CLI builds (see attention_core/atlas/__main__.py)
    open_model("minilm")  # loading the model is not the build
    raw: dict[str, Any] = {}
    workdir = Path(tempfile.mkdtemp(prefix="atlas-bench-"))
    try:
        report = build("minilm", None, workdir, limit=count)
        folder = workdir / "minilm"
        per_sentence = report.seconds / report.added
        raw["build"] = {
            "sentences": report.added,
            "tokens": report.tokens,
            "seconds": report.seconds,
            "tokens_per_s": report.tokens_per_s,
            "sentences_per_s": report.added / report.seconds,
            "extrapolated_10k_s": per_sentence * TARGET,
        }
        size = _size(folder)
        raw["size"] = {"bytes": size, "per_1000": size / report.added * 1000}
        start = time.perf_counter()
        atlas = Atlas(folder)
        raw["open_s"] = time.perf_counter() - start
        text = atlas.sample(1)[0]
        queries = {
            "head map, Chinese sentences": lambda: atlas.head_map("zh"),
            "search: previous ≥ 0.5 in Chinese": lambda: atlas.search("previous", 0.5, "zh"),
            "a head's top 5 sentences": lambda: atlas.top_sentences(2, 3, "previous", k=5),
            "a head's pairs from one token": lambda: atlas.top_pairs(2, 3, query_token="的"),
            "where a sentence falls": lambda: atlas.share_below(2, 3, "previous", 0.3),
        }
        raw["queries"] = {name: _timed(q) for name, q in queries.items()}
        raw["sample"] = text
        raw["page_first_s"], raw["page_rerun_s"] = _page_runs(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    b = raw["build"]
    build_table = Table(
        f"Atlas: MiniLM build ({b['sentences']} held-out sentences, 1 torch thread)",
        ["sentences", "tokens", "seconds", "tokens/s", "sentences/s", "10 000 sentences"],
    )
    build_table.add(
        b["sentences"],
        b["tokens"],
        fmt_s(b["seconds"], 1),
        f"{b['tokens_per_s']:.0f}",
        f"{b['sentences_per_s']:.1f}",
        f"{b['extrapolated_10k_s'] / 60:.1f} min",
    )
    build_table.notes.append(
        f"10 000 sentences: extrapolated from these {b['sentences']} at their mean length "
        f"({b['tokens'] / b['sentences']:.1f} tokens), not measured; target ≤ 10 min."
    )
    s = raw["size"]
    build_table.notes.append(
        f"index on disk: {s['bytes'] / 1e6:.2f} MB ({s['per_1000'] / 1e6:.2f} MB per 1 000 "
        "sentences: sentences, 72 heads' statistics, 2 pairs per head, zstd Parquet)."
    )
    timing = Table("Atlas: opening and queries (DuckDB over the chunks)", ["what", "ms"])
    timing.add("open the index (DuckDB views, summary), cold", fmt_ms(raw["open_s"]))
    for name, seconds in raw["queries"].items():
        timing.add(f"query: {name}", fmt_ms(seconds))
    timing.add("page: first run on the index (AppTest)", fmt_ms(raw["page_first_s"]))
    timing.add("page: rerun (AppTest)", fmt_ms(raw["page_rerun_s"]))
    timing.notes.append(f"queries: median of {REPEATS}; targets: page ≤ 1 s, query ≤ 200 ms.")
    return [build_table, timing], raw
