"""The engineer's lens on a real model: attention combined across layers, weighted by what
is actually moved, knocked out head by head, and pooled to words.

Raw attention weights say where a head looks, not what it changes (Jain & Wallace 2019,
"Attention is not Explanation"). This package gives the answers the literature proposes:

    rollout(A)            attention rollout, every layer's product (Abnar & Zuidema 2020)
    flow(A)               attention flow, max-flow through the layered graph (same paper)
    norm_weighted(m, t)   ‖α_ij · f_h(x_j)‖, weights times what is moved (Kobayashi et al. 2020)
    head_effects(m, t)    every head knocked out, one at a time, ranked by its effect
    ablate(m, t, heads)   the output with a set of heads zeroed
    kv_groups(m)          the query heads sharing each key/value head (a group to knock out)
    toy_head_effects(...) the same for the project's own trained toy model: accuracy
    sinks(m, t)           how much each head attends to [CLS] / [SEP] / first / punctuation,
                          with those tokens' value norms (why such heads are near no-ops;
                          Clark et al. 2019, Kobayashi et al. 2020 section 5)
    neuron_view(m, t, l, h)   q, k, q⊙k, their sum, ÷√d, softmax for one head (BertViz)
    pool_to_words(w, ...) piece-to-piece attention pooled to jieba words
    reader_*(r, t)        the same lens on the project's trained reader (attention_core.reader):
                          reader_attention (its own weights, for rollout, flow, sinks and
                          the head view), reader_value_norms, reader_norm_weighted,
                          reader_neuron_view, reader_ablate, reader_head_effects (the effect
                          on its next-unit predictions)

`m` is a `pretrained.LoadedModel`; `t` is tokenized exactly as `pretrained.run_model` does
(special tokens included), so every (…, n, n) here lines up with `run_model(...).attentions`.
`r` is an `attention_core.reader.Reader`; its `t` is read into its units after [BOS].

Shape legend: L layers, H heads, n tokens, D head size, C model width, B batch.

One file a job: combine (rollout, flow), norms (value norms, norm-weighted), ablation
(knocking a real model's heads out; `branched`: each alone, from a cached pass of the
layers below), toy (the same on the toy model), reader_lens (the lens
on the trained reader), sink_tokens, neuron, minimal_pairs (row_change);
attention_core.pretrained.parts is the machinery they share for reading a model's layers
(found by name, hooked: a transformers model's or the project's own MultiHeadAttention).

SINK_KINDS and sink_positions are importable from here too, outside `__all__` as before.
"""

from __future__ import annotations

from attention_core.lens.ablation import (
    AblationResult,
    Branched,
    HeadEffects,
    ablate,
    branched,
    head_effects,
    kv_groups,
)
from attention_core.lens.combine import FLOW_MAX_TOKENS, flow, rollout
from attention_core.lens.minimal_pairs import RowChange, row_change, shared_tokens
from attention_core.lens.neuron import (
    NeuronView,
    RebuildRefused,
    is_causal,
    neuron_view,
    rebuild_tolerance,
)
from attention_core.lens.norms import norm_weighted, value_norms
from attention_core.lens.reader_lens import (
    ReaderAblation,
    ReaderAttention,
    ReaderEffects,
    reader_ablate,
    reader_attention,
    reader_head_effects,
    reader_neuron_view,
    reader_norm_weighted,
    reader_value_norms,
)
from attention_core.lens.sink_tokens import SINK_KINDS as SINK_KINDS
from attention_core.lens.sink_tokens import Sinks, sinks
from attention_core.lens.sink_tokens import sink_positions as sink_positions
from attention_core.lens.toy import ToyEffects, toy_accuracy, toy_head_effects
from attention_core.pooling import pool_to_words

__all__ = [
    "FLOW_MAX_TOKENS",
    "AblationResult",
    "Branched",
    "HeadEffects",
    "NeuronView",
    "ReaderAblation",
    "ReaderAttention",
    "ReaderEffects",
    "RebuildRefused",
    "RowChange",
    "Sinks",
    "ToyEffects",
    "ablate",
    "branched",
    "flow",
    "head_effects",
    "is_causal",
    "kv_groups",
    "neuron_view",
    "norm_weighted",
    "pool_to_words",
    "reader_ablate",
    "reader_attention",
    "reader_head_effects",
    "reader_neuron_view",
    "reader_norm_weighted",
    "reader_value_norms",
    "rebuild_tolerance",
    "rollout",
    "row_change",
    "shared_tokens",
    "sinks",
    "toy_accuracy",
    "toy_head_effects",
    "value_norms",
]
