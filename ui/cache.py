"""The app's Streamlit caches, keyed on plain values (the head atlas's: ui/cache_atlas.py).

`st.cache_resource` holds what is loaded once and shared read-only (the pretrained model,
the process set-up); `st.cache_data` holds computed results, each with `max_entries`
chosen from its size. Keys are plain values: `ModelSettings` (a frozen dataclass of str,
int and bool, without the interface language), texts, tuples, numbers; never a model or
a tensor. The computing is in `attention_core`; torch and transformers are imported
inside the cached functions, so the first paint of a page does not wait for them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

import streamlit as st

from attention_core.limits import MAX_TOKENS
from attention_core.settings import ModelSettings
from ui.slots import SLOTS

if TYPE_CHECKING:
    import numpy as np

    from attention_core.lens import AblationResult, HeadEffects, NeuronView
    from attention_core.masking import PaddedBatch
    from attention_core.pipeline import Analysis
    from attention_core.poll import PollStore
    from attention_core.positions import PermutationResult
    from attention_core.pretrained import LoadedModel, PretrainedAttention
    from attention_core.reader.where import WhereRound
    from attention_core.scaling import ScalingResult
    from attention_core.stats import Flatness, HeadStats, SameWord

__all__ = [
    "cached_analysis",
    "head_summary",
    "heads_chart",
    "import_ui_stack",
    "lens_ablation",
    "lens_flow",
    "lens_head_effects",
    "lens_neuron",
    "lens_value_norms",
    "loaded_model",
    "padded_batch",
    "permutation_result",
    "poll_store",
    "prepare_process",
    "pretrained_result",
    "scaling_result",
    "sentence_same_word",
    "trained_toy",
    "untrained_result",
    "where_round",
]


@st.cache_resource(show_spinner=False)
def import_ui_stack() -> bool:
    """Import the libraries every page draws with, once per process, in one thread.

    On a fresh server many sessions start at once, each in its own script thread. Two
    threads importing pandas for the first time can see it half-initialised ("partially
    initialized module 'pandas' has no attribute 'Series'"), an exception on the page:
    measured with six simulated students arriving together (tests/project/test_load_protocol.py).
    `st.cache_resource` runs this once and makes the other sessions wait for it.
    """
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import plotly.graph_objects
    import plotly.io  # noqa: F401
    import pyarrow  # noqa: F401

    return True


@st.cache_resource(show_spinner=False)
def prepare_process() -> bool:
    """Once per process: run torch on one intra-op thread. (jieba's dictionary loads on
    the first sentence it must cut that is not one of the app's own, `known_cuts`, or when
    ui/server.py's warm-up gets to it, after a fresh server's first heatmaps.)

    The app's matrices are small and a server runs many sessions at once: measured on the
    2-core machine, the landing page's forward pass (32 tokens, 64 dims, 8 heads) took
    10 ms on torch's default two threads and 0.55 ms on one; 512 tokens x 12 heads 81 ms
    and 12 ms. Sessions then share the cores instead of each spinning on both.
    """
    import torch

    torch.set_num_threads(1)
    return True


def _one_torch_thread() -> None:
    import torch

    torch.set_num_threads(1)


# Streamlit runs every script run in a thread of its own, and torch's first operations in a
# thread pay for setting that thread up: the landing page's forward pass (31 tokens, 8 heads)
# took 2.7 ms of CPU (median; up to 12 ms) in a new thread against 0.7 ms in one that had run
# torch before. So the computing runs on a few long-lived workers and the script run waits.
_WORKERS = ThreadPoolExecutor(
    max_workers=SLOTS or os.cpu_count() or 2,
    thread_name_prefix="attention-studio-compute",
    initializer=_one_torch_thread,
)
_R = TypeVar("_R")


def on_worker(fn: Callable[..., _R], /, *args: object, **kwargs: object) -> _R:
    """`fn(*args, **kwargs)` on a long-lived worker thread (its exceptions re-raised here)."""
    return _WORKERS.submit(fn, *args, **kwargs).result()


# Bounded caches: a view at 512 tokens x 16 heads holds 16 MB of weights, and a trace about
# four times that, so traces get far fewer entries than plain views.
@st.cache_data(max_entries=64, show_spinner=False)
def _view(model: ModelSettings, divisor: float | None, max_tokens: int) -> Analysis:
    from attention_core.pipeline import analyze

    return on_worker(analyze, model, divisor=divisor, max_tokens=max_tokens)


@st.cache_data(max_entries=6, show_spinner=False)
def _trace(model: ModelSettings, divisor: float | None, max_tokens: int) -> Analysis:
    from attention_core.pipeline import analyze

    return on_worker(analyze, model, with_trace=True, divisor=divisor, max_tokens=max_tokens)


def cached_analysis(
    settings: ModelSettings,
    *,
    with_trace: bool = False,
    divisor: float | None = None,
    max_tokens: int = MAX_TOKENS,
) -> Analysis:
    """`attention_core.pipeline.analyze`, cached on the model's settings alone."""
    return (_trace if with_trace else _view)(settings.model, divisor, max_tokens)


@st.cache_data(max_entries=64, show_spinner=False)
def head_summary(model: ModelSettings) -> tuple[list[HeadStats], list, Flatness]:
    """The landing page's statistics of the view of `model` (its `cached_analysis`):
    `stats.head_stats`, `stats.head_patterns` and `stats.flatness`, computed once per view
    (~70 ms at 512 tokens × 12 heads), not on every rerun of the same view."""
    from attention_core.stats import flatness, head_patterns, head_stats

    weights = _view(model, None, MAX_TOKENS).weights  # (H, n, n)
    stats = head_stats(weights)
    return stats, head_patterns(weights, stats), flatness(weights)


@st.cache_data(max_entries=64, show_spinner=False)
def sentence_same_word(model: ModelSettings) -> list[SameWord] | None:
    """The trained reader's same-word attention on this sentence, per head of the view's
    layer (`attention_core.reader.words.sentence_same_word`), from its characters even when
    the view pools them to words."""
    from dataclasses import replace

    from attention_core.reader.words import sentence_same_word as measure

    chars = _view(replace(model, tokenizer="char"), None, MAX_TOKENS)
    return measure(chars.weights, chars.text)


@st.cache_data(max_entries=32, show_spinner=False)  # JSON: ~60 kB at 32 tokens, 2.3 MB at 512
def heads_chart(
    model: ModelSettings,
    *,
    head_title: str,
    mean_title: str | None,
    scale: str,
    colorbar_title: str,
    exact: int,
) -> str:
    """The landing page's heads chart of the view of `model`, as the JSON the chart element
    receives (`figures.heads.heads_spec`, `ui.charts.figure_json`), built once per view and
    language: a class that opens the teacher's link gets the same bytes without building
    them again (on a first visit that was a third of the server's CPU)."""
    from attention_core.figures.heads import head_grid, heads_spec
    from ui.charts import figure_json

    analysis = _view(model, None, MAX_TOKENS)
    grid = head_grid(
        analysis.weights, analysis.labels, head_title=head_title, mean_title=mean_title
    )
    spec = heads_spec(grid, scale=scale, colorbar_title=colorbar_title, exact=(exact,))
    return figure_json(spec)


@st.cache_data(max_entries=4, show_spinner=False)  # a 512-token entry holds ~100 MB
def padded_batch(texts: tuple[str, ...], model: ModelSettings) -> PaddedBatch:
    """`attention_core.masking.padded_batch_attention` of `texts`."""
    from attention_core.masking import padded_batch_attention

    return on_worker(padded_batch_attention, list(texts), model)


@st.cache_data(max_entries=4, show_spinner=False)  # a 512-token entry holds ~100 MB
def permutation_result(model: ModelSettings, perm: tuple[int, ...]) -> PermutationResult:
    """`attention_core.positions.permutation_check` of the sentence shuffled by `perm`."""
    from attention_core.positions import permutation_check

    return on_worker(permutation_check, model, list(perm))


@st.cache_data(max_entries=32, show_spinner=False)
def scaling_result(seed: int, n_keys: int, temperature: float) -> ScalingResult:
    """`attention_core.scaling.scaling_experiment` at its default dimensions."""
    from attention_core.scaling import DEFAULT_DIMS, scaling_experiment

    return scaling_experiment(DEFAULT_DIMS, n_keys=n_keys, temperature=temperature, seed=seed)


@st.cache_resource(max_entries=2, show_spinner=False)
def loaded_model(name: str) -> LoadedModel:
    """One model per id or folder ("" = the packaged one), shared read-only by all sessions."""
    from attention_core.pretrained import load_model

    return load_model(name or None)


@st.cache_data(max_entries=8, show_spinner=False)
def pretrained_result(name: str, text: str, generate: int | None = None) -> PretrainedAttention:
    """The model's tokens and attentions (L, H, n, n) for `text`, keyed on plain values;
    `generate`: tokens a decoder writes after the text (run_model's default when None).

    A 512-token result is about 75 MB, hence the small `max_entries`.
    """
    from attention_core.pretrained import run_model

    return run_model(loaded_model(name), text, generate=generate)


@st.cache_resource(max_entries=4, show_spinner=False)
def poll_store(redis_url: str, sqlite_path: str) -> PollStore:
    """The class poll's store (attention_core/poll), one per process and configuration:
    Redis at `redis_url` if given, else the SQLite file `sqlite_path` (ui/classroom.py
    passes the environment's settings, so a test can point it at a file of its own)."""
    from attention_core.poll import store_from_env

    env = {"ATTENTION_POLL_REDIS_URL": redis_url, "ATTENTION_POLL_DB": sqlite_path}
    return store_from_env(env)


@st.cache_data(max_entries=32, show_spinner=False)  # a row and a sentence: a few kB each
def where_round(text: str, layer: int, head: int, query: int | None) -> WhereRound:
    """The trained reader's attention row of one query character over `text`, for the
    class question "where does this head look?" (`attention_core.reader.where`)."""
    from attention_core.reader.where import where_round as measure

    return on_worker(measure, text, layer=layer, head=head, query=query)


@st.cache_data(max_entries=4, show_spinner=False)
def trained_toy(task: str) -> tuple[np.ndarray, list[str]]:
    """A toy model trained on `task` (attention_core.train's default settings, a few
    hundred steps, about a second), shared by all sessions: its heads' weights (H, n, n)
    on the task's example sequence, and that sequence's `index:token` labels."""
    from attention_core.train import default_config, train
    from attention_core.train.live import example_labels

    config = default_config(task)
    config = default_config(task, snapshot_every=config.steps)  # only the end is kept
    *_, last = train(config)
    return last.weights, example_labels(config)


@st.cache_data(max_entries=16, show_spinner=False)
def untrained_result(tokens: tuple[str, ...], model: ModelSettings) -> np.ndarray:
    """The project's untrained module of `model` on a pretrained model's tokens → (H, n, n)."""
    from attention_core.compare import untrained_attention

    return on_worker(untrained_attention, list(tokens), model)


# --- the engineer's lens (pages/lens.py, pages/minimal_pairs.py) ---------------------------
# Keyed on the model's name and the text, like pretrained_result; each is computed from the
# model that loaded_model shares.


@st.cache_data(max_entries=8, show_spinner=False)
def lens_value_norms(name: str, text: str) -> np.ndarray:
    """‖f_h(x_j)‖ of every head and token → (L, H, n) (attention_core.lens.value_norms)."""
    from attention_core.lens import value_norms

    return value_norms(loaded_model(name), text)


@st.cache_data(max_entries=4, show_spinner=False)
def lens_flow(name: str, text: str) -> np.ndarray:
    """Attention flow (n, n) of the text; raises ValueError above lens.FLOW_MAX_TOKENS."""
    from attention_core.lens import flow

    return flow(pretrained_result(name, text).attentions)


@st.cache_data(max_entries=4, show_spinner=False)
def attention_flow(file_id: str, _attentions: np.ndarray) -> np.ndarray:
    """Attention flow (n, n) of an opened file's (L, H, n, n) weights, keyed on the
    upload's id (ui.attention_file; the weights themselves are not hashed)."""
    from attention_core.lens import flow

    return flow(_attentions)


@st.cache_data(max_entries=8, show_spinner=False)
def lens_neuron(name: str, text: str, layer: int, head: int) -> NeuronView:
    """q and k of one head (attention_core.lens.neuron_view)."""
    from attention_core.lens import neuron_view

    return neuron_view(loaded_model(name), text, layer, head)


_EFFECTS_KEPT = 8
_effects: OrderedDict[tuple[str, str], HeadEffects] = OrderedDict()
_effects_lock = threading.Lock()


def lens_head_effects(
    name: str, text: str, progress: Callable[[int, int], None] | None = None
) -> HeadEffects:
    """Every head knocked out alone (attention_core.lens.head_effects); the last 8 kept for
    every session. Not `st.cache_data`: `progress(done, total)` draws a bar made outside
    this function, which a cached function's replay cannot draw again (Streamlit refuses),
    and a run cancelled midway (the page reran from inside `progress`) keeps nothing."""
    from attention_core.lens import head_effects

    key = (name, text)
    with _effects_lock:
        if key in _effects:
            _effects.move_to_end(key)
            return _effects[key]
    found = head_effects(loaded_model(name), text, progress=progress)
    with _effects_lock:
        _effects[key] = found
        while len(_effects) > _EFFECTS_KEPT:
            _effects.popitem(last=False)
    return found


@st.cache_data(max_entries=16, show_spinner=False)
def lens_ablation(name: str, text: str, heads: tuple[tuple[int, int], ...]) -> AblationResult:
    """The output with `heads` knocked out together (attention_core.lens.ablate)."""
    from attention_core.lens import ablate

    return ablate(loaded_model(name), text, list(heads))
