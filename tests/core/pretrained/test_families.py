"""Every family, every precision, every view: a tiny random model of each family the lens
reads (attention_core.pretrained.zoo), held as a notebook holds it (SDPA where the family
offers it, in training mode), through `from_model` — which must leave it exactly as it was
— and every view checked against the same weights run eagerly with output_attentions:
the weights, the neuron view (every head, every row), the long map. A view that cannot
show the model's own numbers refuses with the true reason. The family × view × precision
table of the docs (docs/library/families.md) is this test's output, not written by hand."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from attention_core import lens
from attention_core.long.pretrained import LongRefused, run_model_long
from attention_core.pretrained import from_model, run_model, tiny_family
from attention_core.pretrained.forward import stack_layers
from attention_core.pretrained.zoo import FAMILY_CONFIGS
from tests.support.availability import needs_minilm

pytestmark = needs_minilm

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "docs" / "library" / "families.md"
TEXT = "the cat sat on the mat because it was tired, and then it slept."
LONG = TEXT * 6  # ~100 tokens through the long path
FAMILIES = list(FAMILY_CONFIGS)
DTYPES = ("float32", "bfloat16", "float16")
ENCODERS = {"bert", "distilbert"}
# no SDPA path in transformers (Gemma 2: soft cap; GPT-Neo: its local layers' own mask)
EAGER_ONLY = {"bloom", "distilbert", "gemma2", "gpt-neo"}
# the views that refuse, and the start of their true reason: GPT-Neo's local layer sees its
# last 8 tokens only, and a long map is of the whole text (within the window it is exact:
# test_a_local_window_is_refused_past_it_and_exact_within_it)
REFUSED = {("gpt-neo", "long map"): "refused: layer 1 lets a token see only the last 8 tokens"}


def tolerance(dtype: str) -> float:
    return lens.rebuild_tolerance(torch.nn.Linear(1, 1).to(getattr(torch, dtype)))


@functools.cache
def case(family: str, dtype: str) -> tuple[Any, Any, Any, np.ndarray]:
    """(the user's model, its LoadedModel, the tokenizer, the eager weights of TEXT)."""
    implementation = "eager" if family in EAGER_ONLY else "sdpa"
    model, tokenizer = tiny_family(family, dtype=dtype, attn_implementation=implementation)
    model.train()  # a notebook's model may be training: from_model must not change that
    reference, _ = tiny_family(family, dtype=dtype)  # the same seed: the same weights, eager
    with torch.no_grad():
        out = reference(**tokenizer(TEXT, return_tensors="pt"), output_attentions=True)
    return model, from_model(model, tokenizer), tokenizer, stack_layers(out.attentions)


@pytest.mark.parametrize("family", FAMILIES)
def test_from_model_leaves_the_users_model_as_it_was(family: str) -> None:
    model, loaded, _, _ = case(family, "float32")
    implementation = "eager" if family in EAGER_ONLY else "sdpa"
    assert model.training and model.config._attn_implementation == implementation
    assert loaded.model is not model and not loaded.model.training
    ours = dict(loaded.model.named_parameters())
    assert all(ours[name] is p for name, p in model.named_parameters())  # shared, not copied
    assert loaded.family == ("encoder" if family in ENCODERS else "decoder")  # by its class


def check_weights(family: str, dtype: str) -> None:
    _, loaded, _, own = case(family, dtype)
    np.testing.assert_allclose(run_model(loaded, TEXT).attentions, own, atol=tolerance(dtype))


def check_neuron_view(family: str, dtype: str) -> None:
    """The first and the last head, every row, against the model's own weights."""
    _, loaded, _, own = case(family, dtype)
    L, H, n, _ = own.shape
    causal = lens.is_causal(own)
    for layer, head in ((0, 0), (L - 1, H - 1)):
        view = lens.neuron_view(loaded, TEXT, layer, head)  # raises unless checked
        rows = np.stack([view.weights(i, causal=causal) for i in range(n)])
        np.testing.assert_allclose(rows, own[layer, head], atol=tolerance(dtype))


def check_long_map(family: str, dtype: str) -> None:
    _, loaded, tokenizer, _ = case(family, dtype)
    reference, _ = tiny_family(family, dtype=dtype)
    with torch.no_grad():
        out = reference(**tokenizer(LONG, return_tensors="pt"), output_attentions=True)
    own = stack_layers(out.attentions)  # (L, H, n, n)
    n = own.shape[-1]
    for layer, amap in enumerate(run_model_long(loaded, LONG).maps):
        for head in range(amap.num_heads):
            exact = amap.exact(head, slice(0, n), slice(0, n))
            np.testing.assert_allclose(exact, own[layer, head], atol=tolerance(dtype))


def _sinks(loaded: Any) -> Any:
    result = run_model(loaded, TEXT)
    norms = lens.value_norms(loaded, TEXT)
    return lens.sinks(result.attentions, norms, result.tokens, result.special)


# each view of the table: checked against the model's own weights, or run
VIEWS: dict[str, Any] = {
    "weights": check_weights,
    "neuron view": check_neuron_view,
    "long map": check_long_map,
    "norm-weighted": lambda f, d: lens.norm_weighted(case(f, d)[1], TEXT),
    "ablation": lambda f, d: lens.head_effects(case(f, d)[1], TEXT),
    "sinks": lambda f, d: _sinks(case(f, d)[1]),
}


@functools.cache
def outcome(family: str, dtype: str, view: str) -> str:
    """ "✓" when the view ran (and its numbers equal the model's own, where checked), or
    "refused: <the start of its reason>"; a number that differs fails (AssertionError)."""
    try:
        VIEWS[view](family, dtype)
    except (ValueError, RuntimeError) as error:
        return "refused: " + str(error).split(":")[0]
    return "✓"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("family", FAMILIES)
def test_every_view_shows_the_models_own_weights(family: str, dtype: str) -> None:
    for view in VIEWS:
        got = outcome(family, dtype, view)
        assert got.startswith(REFUSED.get((family, view), "✓")), (family, dtype, view)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_local_window_is_refused_past_it_and_exact_within_it(dtype: str) -> None:
    """GPT-Neo's local layer keeps its window in its own mask (the model passes it a causal
    one): the neuron view reads it (checked above, on 16 tokens past the window of 8); the
    long map refuses a text longer than the window, naming it, and is the model's own
    within it."""
    _, loaded, tokenizer, _ = case("gpt-neo", dtype)
    with pytest.raises(LongRefused, match="last 8 tokens \\(a sliding window\\), not all 98"):
        run_model_long(loaded, LONG)
    long = run_model_long(loaded, LONG, max_tokens=8)  # [CLS], 6 tokens, [SEP]
    reference, _ = tiny_family("gpt-neo", dtype=dtype)
    ids = torch.tensor([tokenizer.convert_tokens_to_ids(long.tokens)])  # (1, 8)
    # as the tokenizer hands them (GPT-Neo adds token_type_ids' embeddings to its input)
    inputs = {"input_ids": ids, "token_type_ids": torch.zeros_like(ids)}
    with torch.no_grad():
        own = stack_layers(reference(**inputs, output_attentions=True).attentions)
    for layer, amap in enumerate(long.maps):
        for head in range(amap.num_heads):
            exact = amap.exact(head, slice(0, 8), slice(0, 8))
            np.testing.assert_allclose(exact, own[layer, head], atol=tolerance(dtype))


def test_a_rebuild_that_differs_is_refused_with_the_true_reason() -> None:
    """A model whose scores the rebuild cannot know (here: Llama's queries scaled inside
    the layer by a hook) is refused by the library itself, naming the layer; a
    half-precision model's small gap is named as precision, not as a missing bias."""
    from attention_core.pretrained.parts import attention_layers

    _, loaded, _, _ = case("llama", "float32")
    part = attention_layers(loaded.model)[0]
    handle = part.module.q_proj.register_forward_hook(lambda m, i, o: o * 3.0)
    try:
        with pytest.raises(lens.RebuildRefused, match="LlamaAttention makes its scores") as err:
            lens.neuron_view(loaded, TEXT, 0, 0)
    finally:
        handle.remove()
    assert err.value.code == "scores"
    from attention_core.lens.neuron import refusal

    half = refusal(part, {}, 0.03, torch.nn.Linear(1, 1).to(torch.bfloat16))
    assert half.code == "precision" and "bfloat16" in str(half)


def family_table() -> str:
    """The docs' table: each family × precision, each view's `outcome`."""
    lines = ["| family | precision | " + " | ".join(VIEWS) + " |"]
    lines.append("|---|---|" + "---|" * len(VIEWS))
    for family in FAMILIES:
        for dtype in DTYPES:
            cells = [outcome(family, dtype, view) for view in VIEWS]
            lines.append(f"| {family} | {dtype} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def test_the_docs_family_table_is_what_the_views_do(artifacts_dir: Path) -> None:
    table = family_table()
    (artifacts_dir / "families-table.md").write_text(table, "utf-8")
    text = TABLE.read_text("utf-8")
    start = text.index("| family |")
    assert text[start:] == table, (
        f"{TABLE} is out of date: replace its table with tests/artifacts/families-table.md"
    )
