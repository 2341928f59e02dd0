"""The atlas page's parts: the index (or how to build one), the head map with its search,
and one head's corpus evidence. Views of queries and keys and of the models side by side
are in ui/atlas_views.py. The computing is in attention_core.atlas; caches in ui.cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attention_core.atlas.build import chunk_dirs, default_index_dir
from attention_core.atlas.models import MODELS, index_name
from attention_core.atlas.query import LANGS, build_command
from attention_core.atlas.rows import METRICS
from attention_core.atlas.search import SEARCH_LIMIT
from attention_core.atlas.sentences import AtlasError
from attention_core.atlas.shipped import SHIPPED_SENTENCES, shipped_index
from attention_core.figures.atlas import plot_head_map
from attention_core.figures.matrix import plot_matrix
from ui.cache_atlas import (
    atlas_ablation,
    atlas_attends_from,
    atlas_head_weights,
    atlas_index,
    atlas_sentence_rows,
)
from ui.charts import show_chart
from ui.common import choose, md_escape, preset, seeded
from ui.language import tr

if TYPE_CHECKING:
    from attention_core.atlas.query import Atlas, HeadMap

__all__ = [
    "SMALL_BUILD",
    "head_key",
    "metric_label",
    "open_index",
    "show_build",
    "show_head",
    "show_map",
    "show_shipped",
]

CLEAR_SHARE = 0.5  # a head is named by a pattern it shows on at least half the sentences
SMALL_BUILD = 300  # sentences the page's own build indexes (seconds, not minutes)
POS_TAGS = ("", "n", "v", "r", "a")  # jieba's tags: any, noun, verb, pronoun, adjective
state = st.session_state


def metric_label(metric: str) -> str:
    return tr(f"atlas_metric_{metric}")


def head_key(layer: int, head: int) -> str:
    return f"{layer}-{head}"


def _head_name(key: str) -> str:
    layer, head = key.split("-")
    return tr("atlas_head_name", l=layer, h=head)


def model_name(model: str) -> str:
    """One of MODELS by its catalog name; your own model by its folder's name."""
    if model in MODELS:
        return tr(f"atlas_model_{model}")
    return tr("atlas_model_own", name=md_escape(Path(model).name))  # a label is markdown


def open_index(model: str) -> Atlas | None:
    """The model's index in the atlas folder; else the small one the package ships (see
    `attention_core.atlas.shipped`); None when there is neither."""
    folder = default_index_dir()
    chunks = tuple(p.name for p in chunk_dirs(folder / index_name(model)))
    if not chunks and model in MODELS and (shipped := shipped_index(model)) is not None:
        folder, chunks = shipped.parent, tuple(p.name for p in chunk_dirs(shipped))
    if not chunks:
        return None
    try:
        return atlas_index(model, str(folder), chunks)
    except AtlasError as error:  # an older format, a damaged manifest: say which, and the fix
        st.error(md_escape(str(error)))
        st.code(build_command(model), language="bash")
        st.stop()


def show_shipped(model: str) -> None:
    """The shipped index is a sample: say so, and how to build a bigger one."""
    st.caption(tr("atlas_shipped", n=SHIPPED_SENTENCES))
    with st.expander(tr("atlas_build_more")):
        show_build(model)


def show_build(model: str) -> None:
    """No index of the user's yet: the command that builds one, and a button that builds a
    small one here (from the corpus, or the package's sample of it)."""
    folder = default_index_dir()
    st.info(tr("atlas_no_index", folder=md_escape(str(folder))))
    st.code(build_command(model), language="bash")
    if not st.button(tr("atlas_build_small", n=SMALL_BUILD), key="atlas_build"):
        return
    from attention_core.atlas.build import build
    from attention_core.train.corpus import CorpusError

    bar = st.progress(0.0, text=tr("atlas_building", done=0, total=SMALL_BUILD))

    def progress(done: int, total: int, tokens: int) -> None:
        bar.progress(done / max(total, 1), text=tr("atlas_building", done=done, total=total))

    try:
        build(model, None, folder, limit=SMALL_BUILD, chunk_size=50, progress=progress)
    except (AtlasError, CorpusError, OSError) as error:
        st.error(tr("atlas_build_failed", error=md_escape(str(error))))
        return
    st.rerun()


def _search_preset() -> None:
    """ "Heads that look at the previous token in Chinese" as the search widgets' values."""
    preset("atlas_lang", "zh")
    preset("atlas_search_metric", "previous")
    state["atlas_search_min"] = 0.5


def show_map(atlas: Atlas, model: str, text: str) -> tuple[HeadMap, str, str | None]:
    """Filters, the head map (a click picks a head) and the search's list; returns the
    head map drawn, the chosen language and the search's strongest head."""
    c1, c2, c3, c4 = st.columns(4)
    lang = choose(
        c1.selectbox,
        tr("atlas_lang_label"),
        LANGS,
        key="atlas_lang",
        format_func=lambda v: tr(f"atlas_lang_{v}"),
    )
    x = choose(
        c2.selectbox,
        tr("atlas_x_label"),
        METRICS,
        key="atlas_x",
        default="previous",
        format_func=metric_label,
    )
    y = choose(
        c3.selectbox,
        tr("atlas_y_label"),
        METRICS,
        key="atlas_y",
        default="entropy",
        format_func=metric_label,
    )
    colour = choose(
        c4.selectbox,
        tr("atlas_color_label"),
        METRICS,
        key="atlas_color",
        default="first",
        format_func=metric_label,
    )
    s1, s2, s3 = st.columns([2, 2, 2], vertical_alignment="bottom")
    metric = choose(
        s1.selectbox,
        tr("atlas_search_label"),
        METRICS,
        key="atlas_search_metric",
        default="previous",
        format_func=metric_label,
    )
    minimum = s2.slider(
        tr("atlas_search_min"),
        0.0,
        1.0,
        seeded("atlas_search_min", 0.0),
        0.05,
        key="atlas_search_min",
    )
    s3.button(tr("atlas_search_preset"), key="atlas_preset", on_click=_search_preset)
    head_map = atlas.head_map(lang)
    found = atlas.search(metric, minimum, lang, limit=atlas.layers * atlas.heads)
    names = [
        tr("atlas_head_name", l=la, h=h)
        for la, h in zip(head_map.layer, head_map.head, strict=True)
    ]
    keys = [head_key(int(la), int(h)) for la, h in zip(head_map.layer, head_map.head, strict=True)]
    chosen = state.get("atlas_head")
    mine = None
    if st.toggle(tr("atlas_mine_label"), key="atlas_mine", help=tr("atlas_mine_help")) and text:
        rows = {head_key(r["layer"], r["head"]): r for r in atlas_sentence_rows(model, text)}
        mine = tuple(
            np.array([np.nan if rows[k][m] is None else rows[k][m] for k in keys]) for m in (x, y)
        )
    figure = plot_head_map(
        head_map.values[x],
        head_map.values[y],
        head_map.values[colour],
        names,
        x_title=metric_label(x),
        y_title=metric_label(y),
        color_title=metric_label(colour),
        selected=keys.index(chosen) if chosen in keys else None,
        found=[keys.index(head_key(la, h)) for la, h, _ in found] if minimum > 0 else None,
        mine=mine,
        mine_name=tr("atlas_mine_name"),
        empty=tr("atlas_empty_map"),
    )
    click = show_chart(figure, key="atlas_map", filename="head-atlas", clicks=True)
    if click and click.get("curve") == 0:
        xs, ys = head_map.values[x], head_map.values[y]
        gap = np.nan_to_num(np.hypot(xs - click["x"], ys - click["y"]), nan=np.inf)
        preset("atlas_head", keys[int(np.argmin(gap))])
        st.rerun()
    st.caption(tr("atlas_map_caption", sentences=head_map.sentences, heads=len(keys)))
    if minimum > 0:
        listed = tr("atlas_list_sep").join(
            tr("atlas_found_item", head=tr("atlas_head_name", l=la, h=h), value=v)
            for la, h, v in found
        )
        st.markdown(
            tr(
                "atlas_found",
                n=len(found),
                metric=metric_label(metric),
                min=minimum,
                lang=tr(f"atlas_lang_{lang}"),
                heads=listed or "—",
            )
        )
    return head_map, lang, head_key(*found[0][:2]) if found and minimum > 0 else None


def show_head(
    atlas: Atlas, model: str, head_map: HeadMap, lang: str, text: str, first: str | None = None
) -> None:
    """One head (`first`, until one is chosen: the search's strongest): its pattern over
    the corpus, its numbers, where the user's sentence falls, its top sentences with the
    attention drawn, and its strongest pairs from a token."""
    keys = [head_key(int(la), int(h)) for la, h in zip(head_map.layer, head_map.head, strict=True)]
    key = choose(
        st.selectbox,
        tr("atlas_head_label"),
        keys,
        key="atlas_head",
        format_func=_head_name,
        default=first if first in keys else keys[0] if keys else None,
    )
    if key is None:
        return
    i = keys.index(key)
    layer, head = (int(v) for v in key.split("-"))
    pattern = head_map.pattern[i]
    if pattern and head_map.pattern_share[i] >= CLEAR_SHARE:
        st.markdown(
            tr(
                "atlas_pattern_line",
                head=_head_name(key),
                share=head_map.pattern_share[i],
                pattern=tr(f"atlas_pattern_{pattern}"),
            )
        )
    else:
        st.markdown(tr("atlas_pattern_none", head=_head_name(key)))
        if pattern:
            st.caption(
                tr(
                    "atlas_pattern_mostly",
                    share=head_map.pattern_share[i],
                    pattern=tr(f"atlas_pattern_{pattern}"),
                )
            )
    numbers = tr("atlas_list_sep").join(
        f"{metric_label(m)} {head_map.values[m][i]:.3f}"
        + (f" ± {head_map.spread[m][i]:.3f}" if np.isfinite(head_map.spread[m][i]) else "")
        for m in METRICS
        if not np.isnan(head_map.values[m][i])
    )
    st.caption(numbers)
    rank_by = state.get("atlas_x", "previous")
    if text and st.session_state.get("atlas_mine"):
        row = next(
            r for r in atlas_sentence_rows(model, text) if r["layer"] == layer and r["head"] == head
        )
        if row[rank_by] is not None:
            below = atlas.share_below(layer, head, rank_by, row[rank_by])
            st.markdown(
                tr("atlas_mine_rank", metric=metric_label(rank_by), value=row[rank_by], share=below)
            )
    top = atlas.top_sentences(layer, head, rank_by, lang=lang, k=5)
    st.subheader(tr("atlas_top_title", metric=metric_label(rank_by)))
    if not top:
        st.info(tr("atlas_top_none"))
        return
    for rank, item in enumerate(top):
        pair = ""
        if item["query"] is not None:
            pair = tr(
                "atlas_pair",
                query=item["tokens"][item["query"]],
                key=item["tokens"][item["key"]],
                weight=item["weight"],
            )
        st.markdown(
            f"{rank + 1}. " + md_escape(item["text"]) + f" — {item['value']:.3f} " + md_escape(pair)
        )
    pick = choose(
        st.selectbox,
        tr("atlas_draw_label"),
        range(len(top)),
        key="atlas_top_pick",
        format_func=lambda r: f"{r + 1}. {top[r]['text'][:60]}",
        default=None,
    )
    if pick is None:  # the model runs on demand: the page opens on the index alone
        st.caption(tr("atlas_draw_hint"))
    else:
        _draw(model, top[pick]["text"], layer, head, key)
    token = st.text_input(
        tr("atlas_from_label"), key="atlas_from_token", help=tr("atlas_from_help")
    )
    to = choose(
        st.selectbox,
        tr("atlas_to_label"),
        POS_TAGS,
        key="atlas_to_pos",
        format_func=lambda v: tr(f"atlas_to_{v or 'any'}"),
    )
    pairs = atlas.top_pairs(layer, head, query_token=token.strip() or None, key_pos=to, k=8)
    if token.strip() and not pairs:
        st.info(md_escape(tr("atlas_from_none", token=token.strip())))
    for p in pairs:
        _pair_line(p["query_token"], p["key_token"], p["weight"], p["text"])
    if token.strip():  # the index keeps two pairs a sentence: every row, read again
        with st.spinner(tr("atlas_every_row_computing")):
            hits, read = atlas_attends_from(
                model, atlas, atlas.stamp, layer, head, token.strip(), to or ""
            )
        st.caption(
            md_escape(
                tr(
                    "atlas_every_row",
                    token=token.strip(),
                    read=read,
                    hits=len(hits),
                    limit=SEARCH_LIMIT,
                )
            )
        )
        for hit in hits[:8]:
            _pair_line(hit.query_token, hit.key_token, hit.weight, hit.text)


def _pair_line(query: str, key: str, weight: float, text: str) -> None:
    st.markdown(
        md_escape(tr("atlas_pair_line", query=query, key=key, weight=weight, text=text[:80]))
    )


def _draw(model: str, picked: str, layer: int, head: int, key: str) -> None:
    """One sentence through the model: the head's ablation effect (where the model has an
    output to change) and its attention drawn."""
    if model != "untrained" and st.toggle(tr("atlas_ablation_label"), key="atlas_ablation"):
        with st.spinner(tr("atlas_ablation_computing")):
            effects = atlas_ablation(model, picked)  # (L, H)
        if effects is not None:
            rank = int((effects > effects[layer, head]).sum()) + 1
            st.markdown(
                tr(
                    f"atlas_ablation_{model}",
                    head=_head_name(key),
                    value=effects[layer, head],
                    rank=rank,
                    total=effects.size,
                )
            )
    tokens, weights = atlas_head_weights(model, picked, layer, head)
    labels = [f"{j}:{t}" for j, t in enumerate(tokens)]
    show_chart(
        plot_matrix(
            weights,
            labels,
            labels,
            title=_head_name(key),
            colorscale="Blues",
            zmid=None,
            zmin=0.0,
            zmax=1.0,
        ),
        key="atlas_top_matrix",
    )
